// The topologies from a few numbers and their routes, as specs (nothing built): a k=4 fat tree
// has 20 switches and 32 cables, names and ports as documented, and every switch routes every
// host through all its equal-cost next hops (an edge to another pod's host over both its
// aggregations, an aggregation over both its cores, a core down the one cable to the pod);
// leaf_spine refuses what a switch cannot hold; a fabric file's permutation sends every host to
// exactly one other and each host hears from exactly one, the same for a seed.
#include "control/fabric/fabric_topology.h"

#include <gtest/gtest.h>

#include <fmt/core.h>

#include <cstring>
#include <map>
#include <set>

#include "control/config/config_loader.h"
#include "control/fabric/fabric_config.h"

namespace rs::test {
namespace {

const FabricSwitch& named(const FabricSpec& f, const std::string& n) {
  for (auto& s : f.switches)
    if (s.name == n) return s;
  throw std::runtime_error("no switch " + n);
}

// The members of the group the route to `ip` takes on switch s: their port names.
std::set<std::string> via(const FabricSwitch& s, uint32_t ip) {
  for (auto& r : s.cfg.routes)
    if (std::memcmp(r.addr, &ip, 4) == 0 && r.depth == 32) {
      std::set<std::string> out;
      for (auto& m : s.cfg.groups[r.group].members) out.insert(s.cfg.ports[m.port].name);
      return out;
    }
  return {};
}

TEST(FabricTopology, FatTreeK4) {
  FatTreeSpec s;
  s.k = 4;
  s.policy.name = "drill";
  const FabricSpec f = fat_tree(s);
  EXPECT_EQ(f.switches.size(), 20u);
  EXPECT_EQ(f.cables.size(), 32u);
  EXPECT_EQ(named(f, "edge1").cfg.ports.size(), 4u);
  EXPECT_EQ(named(f, "agg1").cfg.ports.size(), 4u);
  EXPECT_EQ(named(f, "core1").cfg.ports.size(), 4u);
  for (auto& sw : f.switches) EXPECT_EQ(sw.cfg.routes.size(), 16u) << sw.name << " routes every host";
  // edge1's hosts are 10.1.1.2 and 10.1.2.2; edge8 (pod 4) holds 10.8.1.2.
  const uint32_t far = fabric_host_ip(8, 1), near = fabric_host_ip(2, 1), own = fabric_host_ip(1, 2);
  EXPECT_EQ(via(named(f, "edge1"), far), (std::set<std::string>{"up1", "up2"}));
  EXPECT_EQ(via(named(f, "edge1"), near), (std::set<std::string>{"up1", "up2"})) << "its pod's other edge: over both aggregations";
  EXPECT_EQ(via(named(f, "edge1"), own), (std::set<std::string>{"h2"}));
  EXPECT_EQ(via(named(f, "agg1"), far), (std::set<std::string>{"up1", "up2"}));
  EXPECT_EQ(via(named(f, "agg1"), near), (std::set<std::string>{"down2"}));
  EXPECT_EQ(via(named(f, "core1"), far), (std::set<std::string>{"down4"}));
  for (auto& g : named(f, "agg1").cfg.groups) EXPECT_EQ(g.members.size() > 1 ? g.policy.name : "drill", "drill");
}

TEST(FabricTopology, LeafSpineRefusesWhatASwitchCannotHold) {
  LeafSpineSpec s;
  s.spines = 40, s.hosts_per_leaf = 30;
  EXPECT_THROW(leaf_spine(s), std::invalid_argument);
  s = LeafSpineSpec{};
  s.leaves = 70;
  EXPECT_THROW(leaf_spine(s), std::invalid_argument);
  FatTreeSpec t;
  t.k = 3;
  EXPECT_THROW(fat_tree(t), std::invalid_argument);
}

TEST(FabricTopology, APermutationIsADerangementFixedByItsSeed) {
  auto load = [](int seed) {
    return load_fabric_text(fmt::format("fabric:\n  leaf_spine: {{spines: 2, leaves: 4, hosts_per_leaf: 4}}\n"
                                        "flows: [{{pattern: permutation, rate_gbps: 10, seed: {}}}]\n", seed),
                            "perm.yaml");
  };
  auto pairs = [](const FabricRunSpec& r) {
    std::map<uint32_t, uint32_t> to;
    for (auto& s : r.fabric.switches)
      for (auto& p : s.cfg.ports)
        for (auto& fl : p.host.flows) EXPECT_TRUE(to.emplace(p.host.ip, fl.dst_ip).second) << "one flow a host";
    return to;
  };
  const auto a = pairs(load(1)), b = pairs(load(1)), c = pairs(load(2));
  ASSERT_EQ(a.size(), 16u);
  std::set<uint32_t> dsts;
  for (auto [from, to] : a) {
    EXPECT_NE(from, to);
    dsts.insert(to);
  }
  EXPECT_EQ(dsts.size(), 16u) << "each host hears from exactly one";
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
}

TEST(FabricTopology, NicTrafficAndCollectivesSpanTheLeaves) {
  const FabricRunSpec r = load_fabric_text(
      "fabric:\n  leaf_spine: {spines: 2, leaves: 2, hosts_per_leaf: 2}\n"
      "hosts: {nic: {reorder: placement, cc: none}}\n"
      "traffic: [{pattern: incast, hosts: [leaf1], receiver: leaf2.h1, message_bytes: 4096}]\n"
      "collectives: [{op: allreduce, hosts: [leaf1.h1, leaf2.h2, leaf1.h2], size_bytes: 65536}]\n",
      "nic.yaml");
  ASSERT_EQ(r.host_names.size(), 4u);
  EXPECT_EQ(r.host_names[2], "leaf2.h1");
  ASSERT_EQ(r.traffic.size(), 1u);
  EXPECT_EQ(r.traffic[0].hosts, (std::vector<uint16_t>{0, 1})) << "a switch's name is its hosts";
  EXPECT_EQ(r.traffic[0].receiver, 2);
  ASSERT_EQ(r.collectives.size(), 1u);
  EXPECT_EQ(r.collectives[0].ports, (std::vector<uint16_t>{0, 3, 1}));
  auto host = [&](std::size_t h) -> const HostSpec& { return r.fabric.switches[r.hosts[h].first].cfg.ports[r.hosts[h].second].host; };
  for (std::size_t h = 0; h < 4; ++h) {
    EXPECT_TRUE(host(h).nic.enabled) << r.host_names[h];
    EXPECT_TRUE(host(h).nic.rc.placement) << "hosts.nic is every host's";
    EXPECT_FALSE(host(h).nic.dcqcn);
  }
  // leaf1.h1: its incast QP to leaf2.h1 and its ring QPs (to leaf2.h2, from leaf1.h2).
  std::set<uint32_t> peers;
  for (const auto& q : host(0).qps) peers.insert(q.peer_ip);
  EXPECT_EQ(peers, (std::set<uint32_t>{host(2).ip, host(3).ip, host(1).ip}));
  auto why = [](const std::string& text) {
    try {
      load_fabric_text(text, "bad.yaml");
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("loaded");
  };
  const std::string top = "fabric:\n  leaf_spine: {spines: 1, leaves: 2, hosts_per_leaf: 1}\n";
  EXPECT_NE(why(top + "traffic: [{pattern: permutation, hosts: [all, leaf9.h1]}]\n").find("traffic[0].hosts[1]: no host 'leaf9.h1'"),
            std::string::npos);
  EXPECT_NE(why(top + "traffic: [{pattern: permutation, hosts: [all, leaf1]}]\n").find("'leaf1.h1' is given twice"), std::string::npos);
  EXPECT_NE(why(top + "hosts: {nic: {reorder: sometimes}}\n").find("hosts.nic.reorder"), std::string::npos);
  EXPECT_NE(why(top + "flows: [{pattern: incast}]\n").find("NIC patterns go under traffic"), std::string::npos);
}

TEST(FabricTopology, BadFabricFilesNameTheirKey) {
  auto why = [](const std::string& text) {
    try {
      load_fabric_text(text, "bad.yaml");
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("loaded");
  };
  EXPECT_NE(why("fabric: {policy: ecmp}\n").find("give exactly one topology"), std::string::npos);
  EXPECT_NE(why("fabric:\n  fat_tree: {k: 5}\n").find("bad.yaml:2: fabric.fat_tree: k: 5 is not an even number"), std::string::npos)
      << why("fabric:\n  fat_tree: {k: 5}\n");
  EXPECT_NE(why("fabric:\n  leaf_spine: {spines: 1}\nflows: [{from: leaf1.h9, to: leaf2.h1}]\n").find("flows[0].from: no host 'leaf1.h9'"),
            std::string::npos);
  EXPECT_NE(why("fabric:\n  leaf_spine: {spines: 1}\nswitch_defaults: {ports: []}\n").find("switch_defaults.ports: unknown key"),
            std::string::npos);
  EXPECT_NE(why("fabric:\n  leaf_spine: {}\n  cable_events: [{cable: leaf9.up1, at_ms: 1, state: down}]\n").find("no cable 'leaf9.up1'"),
            std::string::npos);
}

}  // namespace
}  // namespace rs::test
