// The topologies from a few numbers and their routes, as specs (nothing built): a k=4 fat tree
// has 20 switches and 32 cables, names and ports as documented, and every switch routes every
// host through all its equal-cost next hops (an edge to another pod's host over both its
// aggregations, an aggregation over both its cores, a core down the one cable to the pod);
// leaf_spine refuses what a switch cannot hold; a fabric file's permutation sends every host to
// exactly one other and each host hears from exactly one, the same for a seed; NIC traffic and
// collectives span the leaves; written-out fabrics (a ring, a switch from its own config) route
// every host, and their mistakes are refused by key path.
#include "control/fabric/fabric_topology.h"

#include <gtest/gtest.h>

#include <fstream>

#include <fmt/core.h>

#include <cstring>
#include <map>
#include <set>

#include "control/config/config_loader.h"
#include "control/fabric/fabric_config.h"

namespace rs::test {
namespace {

// The error a fabric file is refused with ("loaded" when it is not).
std::string why(const std::string& text, const std::string& source = "bad.yaml") {
  try {
    load_fabric_text(text, source);
  } catch (const ConfigError& e) {
    return std::string(e.what());
  }
  return std::string("loaded");
}

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
  const std::string top = "fabric:\n  leaf_spine: {spines: 1, leaves: 2, hosts_per_leaf: 1}\n";
  EXPECT_NE(why(top + "traffic: [{pattern: permutation, hosts: [all, leaf9.h1]}]\n").find("traffic[0].hosts[1]: no host 'leaf9.h1'"),
            std::string::npos);
  EXPECT_NE(why(top + "traffic: [{pattern: permutation, hosts: [all, leaf1]}]\n").find("'leaf1.h1' is given twice"), std::string::npos);
  EXPECT_NE(why(top + "hosts: {nic: {reorder: sometimes}}\n").find("hosts.nic.reorder"), std::string::npos);
  EXPECT_NE(why(top + "flows: [{pattern: incast}]\n").find("NIC patterns go under traffic"), std::string::npos);
}

TEST(FabricTopology, AWrittenOutRingRoutesOverBothWays) {
  // A ring of four switches (a loop), two hosts on each: the switch opposite is two hops away
  // both ways round, so its hosts' group has two members; a neighbour's has one.
  const FabricRunSpec r = load_fabric_text(
      "fabric:\n  defaults: {host_gbps: 10, link_gbps: 40, cable_m: 10}\n"
      "  switches: [{name: n, hosts: 2}, {name: e, hosts: 2}, {name: s, hosts: 2}, {name: w, hosts: 2, host_gbps: 25}]\n"
      "  links: [{a: n, b: e}, {a: e, b: s}, {a: s.west, b: w.east, gbps: 100, cable_m: 200}, {a: w, b: n}]\n"
      "flows: [{from: n.h1, to: s.h2, rate_gbps: 1}]\n",
      "ring.yaml");
  const FabricSpec& f = r.fabric;
  ASSERT_EQ(f.switches.size(), 4u);
  ASSERT_EQ(f.cables.size(), 4u);
  EXPECT_EQ(f.cables[2].name, "s.west-w.east");
  EXPECT_EQ(f.cables[2].params.gbps, 100);
  EXPECT_EQ(f.cables[2].params.delay_ns, 1000u);
  EXPECT_EQ(f.cables[0].params.gbps, 40);
  EXPECT_EQ(f.switches[3].cfg.ports[0].egress.speed_gbps, 25) << "w's hosts at its host_gbps";
  EXPECT_EQ(f.switches[0].cfg.ports[0].host.ip, fabric_host_ip(1, 1));
  EXPECT_EQ(f.switches[2].cfg.ports[1].host.ip, fabric_host_ip(3, 2));
  for (const auto& sw : f.switches) EXPECT_EQ(sw.cfg.routes.size(), 8u) << sw.name << " routes every host";
  // On n: the group towards s has two members (via e and via w), towards e one.
  std::map<std::string, std::size_t> members;
  for (const auto& g : f.switches[0].cfg.groups) members[g.name] = g.members.size();
  EXPECT_EQ(members["to_s"], 2u);
  EXPECT_EQ(members["to_e"], 1u);
  const std::string two = "fabric:\n  switches: [{name: a, hosts: 1}, {name: b, hosts: 1}]\n";
  EXPECT_NE(why(two + "  links: [{a: a.x, b: b}, {a: a.x, b: b}]\n").find("fabric.links[1].a: port a.x is already linked by fabric.links[0]"),
            std::string::npos) << why(two + "  links: [{a: a.x, b: b}, {a: a.x, b: b}]\n");
  EXPECT_NE(why(two + "  links: [{a: a, b: c}]\n").find("fabric.links[0].b: no switch 'c'"), std::string::npos);
  EXPECT_NE(why(two + "  links: [{a: a, b: a}]\n").find("not a switch to itself"), std::string::npos);
  EXPECT_NE(why(two + "  links: [{a: a.h1, b: b}]\n").find("port a.h1 is not a link port"), std::string::npos);
  EXPECT_NE(why(two).find("fabric.switches: b cannot reach a: every switch must reach every host"), std::string::npos) << why(two);
  EXPECT_NE(why("fabric:\n  switches: [{name: a}, {name: a}]\n").find("fabric.switches[1].name: 'a' is named twice"), std::string::npos);
  EXPECT_NE(why("fabric:\n  switches: [{name: a, config: /nonexistent.yaml}]\n").find("fabric.switches[0].config: cannot open"),
            std::string::npos);
  EXPECT_NE(why("fabric:\n  switches: [{name: a, config: /dev/zero}]\n").find("is not a config file"), std::string::npos);
  EXPECT_NE(why("fabric:\n  leaf_spine: {}\n  links: []\n").find("links join the switches of fabric.switches"), std::string::npos);
}

TEST(FabricTopology, ASwitchFromItsOwnConfigJoinsByItsLinkPorts) {
  const std::string dir = ::testing::TempDir();
  {
    std::ofstream f(dir + "/rs_core.yaml");
    f << "ports:\n"
         "  - {name: east, kind: link, speed_gbps: 100}\n"
         "  - {name: west, kind: link, speed_gbps: 100}\n"
         "  - {name: h9, kind: emulated_host, speed_gbps: 25, host: {ip: 10.9.9.2, mac: '02:00:00:00:09:02'}}\n";
  }
  const std::string top = "fabric:\n  switches: [{name: a, hosts: 1}, {name: b, hosts: 1}, {name: core, config: rs_core.yaml}]\n";
  const FabricRunSpec r = load_fabric_text(top + "  links: [{a: a, b: core.east}, {a: b, b: core.west}]\n", dir + "/ring.yaml");
  ASSERT_EQ(r.fabric.switches.size(), 3u);
  EXPECT_EQ(r.host_names, (std::vector<std::string>{"a.h1", "b.h1", "core.h9"}));
  for (const auto& sw : r.fabric.switches) EXPECT_EQ(sw.cfg.routes.size(), 3u) << sw.name << " routes every host";
  auto refused = [&](const std::string& links) { return why(top + links, dir + "/bad.yaml"); };
  EXPECT_NE(refused("  links: [{a: a, b: core.east}]\n").find("fabric.switches[2].config: link port core.west is joined by no link"),
            std::string::npos) << refused("  links: [{a: a, b: core.east}]\n");
  EXPECT_NE(refused("  links: [{a: a, b: core.north}, {a: b, b: core.west}]\n").find("switch core has no port 'north'"), std::string::npos);
}

TEST(FabricTopology, BadFabricFilesNameTheirKey) {
  EXPECT_NE(why("fabric: {policy: ecmp}\n").find("give exactly one topology"), std::string::npos);
  EXPECT_NE(why("fabric:\n  fat_tree: {k: 5}\n").find("bad.yaml:2: fabric.fat_tree: k: 5 is not an even number"), std::string::npos)
      << why("fabric:\n  fat_tree: {k: 5}\n");
  EXPECT_NE(why("fabric:\n  leaf_spine: {spines: 1}\nflows: [{from: leaf1.h9, to: leaf2.h1}]\n").find("flows[0].from: no host 'leaf1.h9'"),
            std::string::npos);
  EXPECT_NE(why("fabric:\n  leaf_spine: {spines: 1}\nswitch_defaults: {ports: []}\n").find("switch_defaults.ports: unknown key"),
            std::string::npos);
  EXPECT_NE(why("fabric:\n  leaf_spine: {}\n  cable_events: [{cable: leaf9.up1, at_ms: 1, state: down}]\n").find("no cable 'leaf9.up1'"),
            std::string::npos);
  EXPECT_NE(why("fabric:\n  leaf_spine: {}\n  convergence_ms: soon\n").find("fabric.convergence_ms"), std::string::npos);
  EXPECT_NE(why("fabric:\n  leaf_spine: {}\n  convergence_ms: -1\n").find("fabric.convergence_ms"), std::string::npos);
}

TEST(FabricTopology, RoutesConvergeAfterAMillisecondUnlessTold) {
  EXPECT_EQ(load_fabric_text("fabric:\n  leaf_spine: {}\n", "f.yaml").convergence_ns, 1'000'000u);
  EXPECT_EQ(load_fabric_text("fabric:\n  leaf_spine: {}\n  convergence_ms: 0.25\n", "f.yaml").convergence_ns, 250'000u);
  EXPECT_FALSE(load_fabric_text("fabric:\n  leaf_spine: {}\n  convergence_ms: never\n", "f.yaml").convergence_ns);
}

}  // namespace
}  // namespace rs::test
