// What a fabric run reports: its scale and speed, the stats file (every switch's stats, the
// hosts' NICs, the collectives, the cables, the books), a time-series line, and the summary
// tables printed at the end.
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "control/fabric/fabric_config.h"
#include "dataplane/fabric/fabric.h"

namespace rs {

// The run's scale and speed (issue 23's figures): frames moved counts every frame a switch port
// received, so a frame crossing three switches counts three times, as htsim counts switch frames.
struct Speed {
  std::size_t switches = 0, hosts = 0, links = 0;
  double sim_s = 0, wall_s = 0;
  uint64_t frames = 0;
  double frames_per_wall_s() const { return wall_s > 0 ? static_cast<double>(frames) / wall_s : 0; }
  double slowdown() const { return sim_s > 0 ? wall_s / sim_s : 0; }
};
Speed speed_of(const Fabric& fab, double wall_s);

// {fabric: {switches, hosts, links, virtual_s, frames, steps, jumps, wall: {real_s, slowdown,
// frames_per_wall_s}, totals, before_shutdown}, switches: [...], hosts: {list, goodput},
// fct_by_size: [...] (fabric_fct.h), collectives: [...], cables: [...]}: everything but fabric.wall is the same on every run.
nlohmann::json fabric_json(const Fabric& fab, const FabricRunSpec& spec, const Speed& sp, const FabricTotals& before_shutdown);

// The hosts with a NIC: {list: [{name, link_gbps, rx_goodput_gbps (payload accepted in order or
// placed, over the run), tx_acked_gbps (the host's acknowledged messages), messages_done,
// retransmitted, out_of_order, missing_psns, cnp_received, fct_us}], goodput: {gbps (received),
// ideal_gbps (the payload the links of the hosts that receive carry in full-size frames),
// fraction}}.
// `host_stats[i]` is host i's port stats (null: none).
nlohmann::json hosts_json(const FabricRunSpec& spec, const std::vector<const nlohmann::json*>& host_stats, double sim_s);

// One line of the time series: {t_s, switches: [{name, ...series_sample}]}.
nlohmann::json series_line(const Fabric& fab);

// The tables printed at the end: per switch, per cable, then the NIC hosts and the collectives
// when there are some (`j` is fabric_json's).
std::string summary(const Fabric& fab, const nlohmann::json& j);

}  // namespace rs
