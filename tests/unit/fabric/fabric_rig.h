// What the fabric tests share: a leaf-spine of test switches, a constant-rate flow between two
// of its hosts, a switch by name, the books' balance, and every switch's and cable's stats.
#pragma once
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <string>

#include "app/stats_json.h"
#include "control/fabric/fabric_topology.h"
#include "dataplane/fabric/fabric.h"
#include "tests/support/constants.h"
#include "tests/unit/switch/lossless_net.h"

namespace rs::test {

// Priority 3 lossless everywhere, ECN off: the tests read PFC alone.
inline LeafSpineSpec spec(unsigned spines, unsigned leaves, unsigned hosts) {
  LeafSpineSpec s;
  s.spines = spines, s.leaves = leaves, s.hosts_per_leaf = hosts;
  s.host_gbps = 25, s.uplink_gbps = 25;
  Net n;
  s.base = n.cfg;
  n.add_host(25);
  s.host_port = s.fabric_port = n.cfg.ports[0];
  return s;
}

inline HostFlowSpec& flow(FabricSpec& f, unsigned leaf, unsigned host, unsigned to_leaf, unsigned to_host, double gbps, uint32_t qp) {
  std::size_t idx = 0;
  while (f.switches[idx].name != fmt::format("leaf{}", leaf)) ++idx;
  HostFlowSpec fl;
  fl.dst_ip = fabric_host_ip(to_leaf, to_host);
  fl.rate_gbps = gbps;
  fl.payload = kPayload;
  fl.qp = qp;
  fl.dscp = kRoceDscp;
  auto& flows = f.switches[idx].cfg.ports[host - 1].host.flows;
  flows.push_back(fl);
  return flows.back();
}

inline std::size_t sw_index(const Fabric& fab, const std::string& name) {
  for (std::size_t i = 0; i < fab.num_switches(); ++i)
    if (fab.switch_name(i) == name) return i;
  ADD_FAILURE() << "no switch " << name;
  return 0;
}

inline void expect_balanced(const Fabric& fab) {
  const FabricTotals t = fab.totals();
  EXPECT_TRUE(t.balanced()) << "from hosts " << t.from_hosts << " made " << t.made << " to hosts " << t.to_hosts << " queued "
                            << t.queued << " in flight " << t.in_flight << " dropped " << t.dropped << " held " << t.held
                            << " on cables " << t.cable_in_flight << " lost " << t.cable_lost;
}

// Every switch's and cable's stats, as one text.
inline std::string all_stats(const Fabric& fab) {
  std::string all;
  for (std::size_t i = 0; i < fab.num_switches(); ++i) all += stats_json(fab.at(i)).dump();
  for (std::size_t i = 0; i < fab.num_cables(); ++i) {
    nlohmann::json j;
    fab.cable(i).stats(j);
    all += j.dump();
  }
  return all;
}

}  // namespace rs::test
