// The collectives' figures as nccl-tests reports them (time, algbw, busbw), from the ranks' queue
// pairs in the stats (ports[].host.nic.qps[], those tagged with the collective): it started when
// its first message was posted and ended when its last message arrived; it is done when every
// queue pair of it completed all its messages.
#pragma once
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "dataplane/switch/switch_config.h"

namespace rs {

// [{op, hosts, ranks, size_bytes, done, time_us, algbw_gbps, busbw_gbps, algbw_GBps, busbw_GBps}].
// A collective's ranks index `names` and `hosts` (each host's stats object, with its `host.nic`;
// null: no stats).
nlohmann::json collectives_json(const std::vector<nic::CollectiveSpec>& collectives, const std::vector<std::string>& names,
                                const std::vector<const nlohmann::json*>& hosts);
// A switch's: its ranks are its ports.
nlohmann::json collectives_json(const SwitchConfig& cfg, const nlohmann::json& ports);
// nccl-tests' table: one line a collective ("" when there are none).
std::string collectives_table(const nlohmann::json& collectives);

}  // namespace rs
