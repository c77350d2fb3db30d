// Message completion times and their slowdown by message size over a fabric's NIC hosts, as the
// congestion-control papers plot them (HPCC, DCQCN: FCT slowdown by flow size). Each NIC records
// a message's slowdown itself: its completion time over the unloaded one, its queue pair's round
// trip on the empty fabric (the loader computes it from the path, fabric_base_rtts) plus its
// packets' time on the sender's link.
#pragma once
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "control/fabric/fabric_config.h"

namespace rs {

// [{bytes_min, bytes_max, messages, fct_p50_us, fct_p99_us, slowdown_p50, slowdown_p99}], a row
// per size class (powers of two) that completed messages, merged over the hosts
// (`host_stats[i]`: host i's port stats with host.nic.totals.fct_by_size; null: none).
// Percentiles are read from the merged histograms (a bucket's upper edge, within 25 %).
nlohmann::json fct_by_size_json(const FabricRunSpec& spec, const std::vector<const nlohmann::json*>& host_stats);

// The table of it ("" when empty).
std::string fct_by_size_table(const nlohmann::json& rows);

}  // namespace rs
