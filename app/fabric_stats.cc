#include "app/fabric_stats.h"

#include <fmt/core.h>

#include <set>

#include "app/collective_stats.h"
#include "app/fabric_fct.h"
#include "app/routing_stats.h"
#include "app/stats_json.h"
#include "dataplane/nic/roce_wire.h"
#include "dataplane/tm/queue/shaper.h"

namespace rs {

namespace {

nlohmann::json totals_json(const FabricTotals& t) {
  return {{"from_hosts", t.from_hosts}, {"made", t.made}, {"to_hosts", t.to_hosts}, {"queued", t.queued},
          {"in_flight", t.in_flight}, {"dropped", t.dropped}, {"held", t.held}, {"cable_in_flight", t.cable_in_flight},
          {"cable_lost", t.cable_lost}, {"balanced", t.balanced()}};
}

}  // namespace

Speed speed_of(const Fabric& fab, double wall_s) {
  Speed s;
  s.switches = fab.num_switches();
  s.links = fab.num_cables();
  s.sim_s = static_cast<double>(fab.now() - fab.start()) / 1e9;
  s.wall_s = wall_s;
  for (std::size_t i = 0; i < fab.num_switches(); ++i)
    for (std::size_t p = 0; p < fab.at(i).num_ports(); ++p) {
      s.frames += fab.at(i).rx_packets(p);
      if (fab.at(i).config().ports[p].kind == PortKind::EmulatedHost) ++s.hosts;
    }
  return s;
}

nlohmann::json hosts_json(const FabricRunSpec& spec, const std::vector<const nlohmann::json*>& host_stats, double sim_s) {
  nlohmann::json list = nlohmann::json::array();
  double sum = 0, ideal = 0;
  std::set<uint32_t> peers;  // the hosts something is sent to
  for (const auto& [s, p] : spec.hosts)
    for (const auto& q : spec.fabric.switches[s].cfg.ports[p].host.qps) peers.insert(q.peer_ip);
  for (std::size_t h = 0; h < spec.hosts.size(); ++h) {
    const auto [s, p] = spec.hosts[h];
    const PortSpec& port = spec.fabric.switches[s].cfg.ports[p];
    if (!port.host.nic.enabled || !host_stats[h]) continue;
    const nlohmann::json t = host_stats[h]->value("/host/nic/totals"_json_pointer, nlohmann::json::object());
    auto gbps = [&](const char* key) { return sim_s > 0 ? t.value(key, 0.0) * 8 / sim_s / 1e9 : 0.0; };
    const bool receives = peers.count(port.host.ip) > 0;
    const double rx = gbps("rx_bytes");
    sum += rx;
    // A receiver's ideal: its link full of full-size frames (an MTU of payload in each).
    const uint32_t mtu = port.host.nic.rc.mtu;
    if (receives) ideal += port.egress.speed_gbps * mtu / wire_bytes(mtu + nic::kHeaders);
    list.push_back({{"name", spec.host_names[h]},
                    {"link_gbps", port.egress.speed_gbps},
                    {"rx_goodput_gbps", rx},
                    {"tx_acked_gbps", gbps("acked_bytes")},
                    {"messages_done", t.value("messages_done", uint64_t{0})},
                    {"retransmitted", t.value("retransmitted", uint64_t{0})},
                    {"out_of_order", t.value("out_of_order", uint64_t{0})},
                    {"missing_psns", t.value("missing_psns", uint64_t{0})},
                    {"cnp_received", t.value("cnp_received", uint64_t{0})},
                    {"fct_us", t.value("fct_us", nlohmann::json::object())}});
  }
  return {{"list", list}, {"goodput", {{"gbps", sum}, {"ideal_gbps", ideal}, {"fraction", ideal > 0 ? sum / ideal : 0.0}}}};
}

nlohmann::json fabric_json(const Fabric& fab, const FabricRunSpec& spec, const Speed& sp, const FabricTotals& before_shutdown) {
  nlohmann::json j;
  // Everything but `wall` is the same on every run of a spec.
  j["fabric"] = {{"switches", sp.switches},
                 {"hosts", sp.hosts},
                 {"links", sp.links},
                 {"virtual_s", sp.sim_s},
                 {"frames", sp.frames},
                 {"steps", fab.steps()},
                 {"jumps", fab.jumps()},
                 {"wall", {{"real_s", sp.wall_s}, {"slowdown", sp.slowdown()}, {"frames_per_wall_s", sp.frames_per_wall_s()}}},
                 {"totals", totals_json(fab.totals())},
                 {"before_shutdown", totals_json(before_shutdown)}};
  auto& sw = j["switches"];
  sw = nlohmann::json::array();
  for (std::size_t i = 0; i < fab.num_switches(); ++i) {
    nlohmann::json s = stats_json(fab.at(i));
    s["name"] = fab.switch_name(i);
    sw.push_back(std::move(s));
  }
  // The hosts' NICs and the collectives, read from the switches' port stats.
  std::vector<const nlohmann::json*> host_stats;
  for (const auto& [s, p] : spec.hosts) host_stats.push_back(&sw[s]["ports"][p]);
  j["hosts"] = hosts_json(spec, host_stats, sp.sim_s);
  j["fct_by_size"] = fct_by_size_json(spec, host_stats);
  j["collectives"] = collectives_json(spec.collectives, spec.host_names, host_stats);
  auto& cables = j["cables"];
  cables = nlohmann::json::array();
  for (std::size_t i = 0; i < fab.num_cables(); ++i) {
    nlohmann::json c;
    fab.cable(i).stats(c);
    cables.push_back(std::move(c));
  }
  return j;
}

nlohmann::json series_line(const Fabric& fab) {
  const double t = static_cast<double>(fab.now() - fab.start()) / 1e9;
  nlohmann::json j{{"t_s", t}, {"switches", nlohmann::json::array()}};
  for (std::size_t i = 0; i < fab.num_switches(); ++i) {
    nlohmann::json s = series_sample(fab.at(i), t);
    s["name"] = fab.switch_name(i);
    j["switches"].push_back(std::move(s));
  }
  return j;
}

namespace {

// The NIC hosts, a line each (at most 32, then how many more), and their goodput against the
// receivers' link rates.
std::string hosts_table(const nlohmann::json& hosts) {
  const auto& list = hosts["list"];
  if (list.empty()) return {};
  std::string out = fmt::format("\n{:<12} {:>10} {:>10} {:>10} {:>12} {:>12} {:>10}\n", "host", "rx Gb/s", "acked Gb/s", "messages",
                                "retransmits", "out of order", "CNPs rx");
  std::size_t shown = 0;
  for (const auto& h : list) {
    if (++shown > 32) continue;
    out += fmt::format("{:<12} {:>10.3f} {:>10.3f} {:>10} {:>12} {:>12} {:>10}\n", h["name"].get<std::string>(),
                       h["rx_goodput_gbps"].get<double>(), h["tx_acked_gbps"].get<double>(), h["messages_done"].get<uint64_t>(),
                       h["retransmitted"].get<uint64_t>(), h["out_of_order"].get<uint64_t>(), h["cnp_received"].get<uint64_t>());
  }
  if (shown > 32) out += fmt::format("... and {} more hosts (the stats file has them all)\n", shown - 32);
  const auto& g = hosts["goodput"];
  out += fmt::format("NIC goodput: {:.3f} Gb/s received of the {:.3f} Gb/s of payload the receivers' links carry ({:.1f} %)\n", g["gbps"].get<double>(),
                     g["ideal_gbps"].get<double>(), g["fraction"].get<double>() * 100);
  return out;
}

}  // namespace

std::string summary(const Fabric& fab, const nlohmann::json& j) {
  const double span = static_cast<double>(fab.now() - fab.start());
  std::string out = fmt::format("{:<10} {:>12} {:>12} {:>10} {:>10} {:>8}\n", "switch", "rx Gb/s", "tx Gb/s", "drops", "PFC sent",
                                "lossless");
  for (std::size_t i = 0; i < fab.num_switches(); ++i) {
    const Switch& s = fab.at(i);
    uint64_t rx = 0, tx = 0, drops = 0, pfc = 0;
    for (std::size_t p = 0; p < s.num_ports(); ++p) {
      rx += s.rx_bytes(p);
      tx += s.tx_bytes(p);
      pfc += s.egress(p).pfc_gen().counters().frames.get();
      for (std::size_t r = 1; r < kNumDropReasons; ++r)
        if (static_cast<DropReason>(r) != DropReason::MacControl && static_cast<DropReason>(r) != DropReason::Shutdown)
          drops += s.drops(p, static_cast<DropReason>(r));
    }
    out += fmt::format("{:<10} {:>12.3f} {:>12.3f} {:>10} {:>10} {:>8}\n", fab.switch_name(i), span ? rx * 8 / span : 0.0,
                       span ? tx * 8 / span : 0.0, drops, pfc, s.lossless_drops());
  }
  out += fmt::format("\n{:<28} {:>10} {:>10} {:>8} {:>6}\n", "cable", "a->b Gb/s", "b->a Gb/s", "lost", "up");
  for (std::size_t i = 0; i < fab.num_cables(); ++i) {
    nlohmann::json c;
    fab.cable(i).stats(c);
    const auto& d = c["directions"];
    const double ab = span ? d[0]["sent_bytes"].get<double>() * 8 / span : 0, ba = span ? d[1]["sent_bytes"].get<double>() * 8 / span : 0;
    out += fmt::format("{:<28} {:>10.3f} {:>10.3f} {:>8} {:>6}\n", c["name"].get<std::string>(), ab, ba,
                       d[0]["lost"].get<uint64_t>() + d[1]["lost"].get<uint64_t>() + d[0]["lost_link_down"].get<uint64_t>() +
                           d[1]["lost_link_down"].get<uint64_t>(),
                       c["up"].get<bool>() ? "yes" : "no");
  }
  out += hosts_table(j["hosts"]);
  out += fct_by_size_table(j["fct_by_size"]);
  if (!j["collectives"].empty()) {
    out += '\n';
    out += collectives_table(j["collectives"]);
  }
  return out;
}

}  // namespace rs
