#include "app/routing_stats.h"

#include "control/runtime/control_reads.h"

#include <set>
#include <string>

#include "dataplane/routing/routing_policy.h"

namespace rs {
namespace {

nlohmann::json choice_json(const Switch& sw, uint32_t group, uint8_t c) {
  const PolicyChoice& pc = sw.fib().group(group).choices[c];
  const RoutingPolicyEntry& e = RoutingPolicyRegistry::at(pc.policy);
  nlohmann::json j = policy_choice_json(pc), ctr = nlohmann::json::object();
  for (std::size_t k = 0; k < e.counters.size(); ++k) ctr[std::string(e.counters[k])] = sw.policy_counter(group, c, k);
  j["counters"] = ctr;
  return j;
}

}  // namespace

nlohmann::json groups_json(const Switch& sw) {
  using nlohmann::json;
  const Fib& fib = sw.fib();
  json groups = json::array();
  for (uint32_t g = 0; g < fib.num_groups(); ++g) {
    const NextHopGroup& ng = fib.group(g);
    if (ng.choices.empty()) continue;  // a deleted group's slot
    json gj = {{"name", ng.name}, {"inline_member", ng.inline_member}, {"policy", choice_json(sw, g, 0)}};
    json by_tc = json::object();
    for (int tc = 0; tc < 8; ++tc)
      if (ng.choice_of_tc[tc] != 0) by_tc[std::to_string(tc)] = choice_json(sw, g, ng.choice_of_tc[tc]);
    if (!by_tc.empty()) gj["policy_by_tc"] = by_tc;
    json members = json::array();
    std::set<uint16_t> ports;
    for (uint32_t nh : ng.members) {
      const uint16_t port = fib.nexthop(nh).port;
      const bool known = port < sw.num_ports();
      members.push_back({{"port", known ? sw.port(port).name : std::to_string(port)},
                         {"nexthop", nh},
                         {"link_up", known && sw.load().link_up(port)},
                         {"packets", sw.nexthop_packets(nh)},
                         {"bytes", sw.nexthop_bytes(nh)}});
      if (known) ports.insert(port);
    }
    gj["members"] = members;
    // A member port that went down is a failover for the group (its flows moved at once).
    uint64_t failovers = 0;
    for (uint16_t p : ports) failovers += sw.link_down_events(p);
    gj["failovers"] = failovers;
    groups.push_back(gj);
  }
  return groups;
}

nlohmann::json series_sample(const Switch& sw, double t_s) {
  using nlohmann::json;
  json ports = json::array(), hosts = json::array();
  for (std::size_t p = 0; p < sw.num_ports(); ++p) {
    const auto port = static_cast<uint16_t>(p);
    json q = json::array();
    for (unsigned k = 0; k < 8; ++k) q.push_back(sw.load().queue_bytes(port, k));
    ports.push_back({{"name", sw.port(p).name},
                     {"tx_bytes", sw.tx_bytes(p)},
                     {"rx_bytes", sw.rx_bytes(p)},
                     {"queue_bytes", q},
                     {"tx_rate_bps", sw.load().tx_rate_bps(port)},
                     {"quality", sw.load().quality(port)},
                     {"link_up", sw.load().link_up(port)}});
    json hj;
    sw.port(p).stats(hj);
    if (!hj.contains("host")) continue;
    const json& h = hj["host"];
    json hs = {{"port", sw.port(p).name}};
    if (h.contains("rx_flows")) hs["rx_flows"] = h["rx_flows"];
    // The host's RoCE NIC, per queue pair: its DCQCN rate now (the line rate, or its cap, when
    // DCQCN does not limit it), the bytes acknowledged (requester) and taken in (responder) so
    // far, whose differences between samples are the QP's goodput over time, what moves the rate
    // (CNPs, alpha), and messages done with their mean completion time (so the mean over an
    // interval is the difference of mean x done over that of done).
    if (h.contains("nic") && h["nic"].contains("qps")) {
      json qps = json::array();
      for (const json& q : h["nic"]["qps"])
        qps.push_back({{"peer", q.value("peer", std::string())},
                       {"qpn", q.value("qpn", uint64_t{0})},
                       {"role", q.value("role", std::string())},
                       {"tag", q.value("tag", uint64_t{0})},
                       {"rate_gbps", q.value("rate_gbps", 0.0)},
                       {"alpha", q.value("alpha", 0.0)},
                       {"acked_bytes", q.value("acked_bytes", uint64_t{0})},
                       {"rx_bytes", q.value("rx_bytes", uint64_t{0})},
                       {"messages_done", q.value("messages_done", uint64_t{0})},
                       {"fct_mean_us", q.contains("fct_us") ? q["fct_us"].value("mean", 0.0) : 0.0},
                       {"retransmitted", q.value("retransmitted", uint64_t{0})},
                       {"cnp_sent", q.value("cnp_sent", uint64_t{0})},
                       {"cnp_received", q.value("cnp_received", uint64_t{0})}});
      hs["qps"] = std::move(qps);
    }
    if (hs.size() > 1) hosts.push_back(std::move(hs));
  }
  // Members of real groups only: a route's own one-member group says nothing a port does not.
  json members = json::array();
  const Fib& fib = sw.fib();
  for (uint32_t g = 0; g < fib.num_groups(); ++g) {
    const NextHopGroup& ng = fib.group(g);
    if (ng.members.size() < 2) continue;
    for (uint32_t nh : ng.members) {
      const uint16_t port = fib.nexthop(nh).port;
      members.push_back({{"group", ng.name},
                         {"port", port < sw.num_ports() ? sw.port(port).name : std::to_string(port)},
                         {"packets", sw.nexthop_packets(nh)},
                         {"bytes", sw.nexthop_bytes(nh)}});
    }
  }
  return {{"t_s", t_s}, {"ports", ports}, {"members", members}, {"hosts", hosts}};
}

}  // namespace rs
