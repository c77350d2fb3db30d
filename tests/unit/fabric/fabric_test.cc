// A leaf-spine fabric of whole switches on emulated cables, on one virtual clock: hosts on
// different leaves reach each other through the spines, ECMP spreads flows over the uplinks, the
// books balance end to end, the same spec gives byte-identical stats, PFC pauses go hop by hop
// (host port -> leaf -> spine -> leaf) with no lossless drop, a cut cable moves the traffic to
// the other spine, and a quiet fabric jumps its clock.
#include "dataplane/fabric/fabric.h"

#include <fmt/core.h>
#include <gtest/gtest.h>

#include <fstream>

#include "app/fabric_fct.h"
#include "control/fabric/fabric_config.h"
#include "control/fabric/fabric_topology.h"
#include "tests/unit/fabric/fabric_rig.h"

namespace rs::test {
namespace {

TEST(Fabric, HostsOnDifferentLeavesReachEachOtherOverBothSpines) {
  FabricSpec f = leaf_spine(spec(2, 2, 4));
  ASSERT_EQ(f.switches.size(), 4u);
  ASSERT_EQ(f.cables.size(), 4u);
  // Every host of leaf1 to its twin on leaf2 and back: 8 flows of 5 Gb/s over 25 Gb/s links.
  for (unsigned h = 1; h <= 4; ++h) {
    flow(f, 1, h, 2, h, 5, 0x100 + h);
    flow(f, 2, h, 1, h, 5, 0x200 + h);
  }
  Fabric fab(std::move(f), kT0);
  fab.run_until(kT0 + 2 * kMs);
  const std::size_t leaf1 = sw_index(fab, "leaf1"), leaf2 = sw_index(fab, "leaf2");
  for (unsigned h = 0; h < 4; ++h) {
    EXPECT_GT(fab.at(leaf2).tx_packets(h), 1000u) << "leaf2 h" << h + 1 << " receives its twin's flow";
    EXPECT_GT(fab.at(leaf1).tx_packets(h), 1000u) << "leaf1 h" << h + 1;
  }
  // Four flows each way over two uplinks: the hash gives each spine some of them.
  EXPECT_GT(fab.at(sw_index(fab, "spine1")).rx_packets(0), 0u);
  EXPECT_GT(fab.at(sw_index(fab, "spine2")).rx_packets(0), 0u);
  EXPECT_EQ(fab.totals().dropped, 0u);
  expect_balanced(fab);
  std::printf("2 spines x 2 leaves x 4 hosts, 2 ms: %lu steps, %lu jumps\n", (unsigned long)fab.steps(),
              (unsigned long)fab.jumps());
  fab.shutdown();
  expect_balanced(fab);
}

TEST(Fabric, TheSameSpecGivesByteIdenticalStats) {
  auto run = [] {
    FabricSpec f = leaf_spine(spec(2, 2, 2));
    flow(f, 1, 1, 2, 1, 20, 0x11);
    flow(f, 1, 2, 2, 1, 20, 0x12);  // an incast: queues, PFC
    flow(f, 2, 2, 1, 1, 7, 0x13);
    Fabric fab(std::move(f), kT0);
    fab.run_until(kT0 + kMs);
    return all_stats(fab);
  };
  const std::string a = run(), b = run();
  EXPECT_GT(a.size(), 1000u);
  EXPECT_TRUE(a == b) << "two runs of one spec differ";
}

TEST(Fabric, ThreadsDoNotChangeTheStatsAndTheSeedDoes) {
  // NICs (DCQCN, go-back-N), a permutation and an incast over 5 switches: queues, PFC, CNPs,
  // retransmissions, ECMP's hash. One thread, again, three threads, then another seed.
  auto run = [](unsigned threads, unsigned seed) {
    const FabricRunSpec r = load_fabric_text(
        fmt::format("fabric:\n  leaf_spine: {{spines: 2, leaves: 3, hosts_per_leaf: 2, host_gbps: 25, uplink_gbps: 25}}\n"
                    "  seed: {}\n  threads: {}\n"
                    "switch_defaults:\n  qos: {{dscp_to_tc: {{26: 3}}, pfc_enable: [3]}}\n"
                    "  buffer: {{profiles: {{lossless_pg: {{xoff: 32768, xon: 16384, headroom: 65536}}}}, pg: {{3: lossless_pg}}}}\n"
                    "hosts: {{nic: {{mtu: 1024}}}}\n"
                    "traffic:\n  - {{pattern: permutation, hosts: [all], message_bytes: 16384, depth: 2}}\n"
                    "  - {{pattern: incast, hosts: [leaf1, leaf2], receiver: leaf3.h2, message_bytes: 8192}}\n",
                    seed, threads),
        "threads.yaml");
    Fabric fab(r.fabric, kT0);
    EXPECT_EQ(fab.threads(), threads);
    fab.run_until(kT0 + kMs / 2);
    expect_balanced(fab);
    return all_stats(fab);
  };
  const std::string a = run(1, 1), b = run(1, 1), c = run(3, 1), d = run(1, 2);
  EXPECT_GT(a.size(), 10000u);
  EXPECT_NE(a.find("\"messages_done\":"), std::string::npos);
  EXPECT_TRUE(a == b) << "two runs of one spec differ";
  EXPECT_TRUE(a == c) << "three threads give other stats than one";
  EXPECT_FALSE(a == d) << "another seed gives the same stats";
}

TEST(Fabric, NicsCountCompletionTimesAndSlowdownBySize) {
  // Sizes from 4 KiB to 1 MiB at 40 % load over 3 leaves: every completed message is in one
  // size class, and long messages, which the round trip barely affects, take about their
  // unloaded time or more, never much less.
  const std::string cdf = ::testing::TempDir() + "/rs_fct_sizes.cdf";
  {
    std::ofstream f(cdf);
    f << "4096 0\n65536 0.5\n1048576 1\n";
  }
  const FabricRunSpec r = load_fabric_text(
      "fabric:\n  leaf_spine: {spines: 2, leaves: 3, hosts_per_leaf: 2, host_gbps: 25, uplink_gbps: 50}\n"
      "switch_defaults: {switch: {mbufs: 4096}}\n"
      "hosts: {nic: {cc: none}}\n"
      "traffic: [{pattern: cdf, hosts: [all], cdf_file: " + cdf + ", load: 0.4, duration_s: 0.002}]\n",
      "fct.yaml");
  for (const auto& [sw, pt] : r.hosts)
    for (const auto& q : r.fabric.switches[sw].cfg.ports[pt].host.qps) {
      EXPECT_GT(q.base_rtt_ns, 0u) << "the loader gives every queue pair its path";
      EXPECT_TRUE(q.path_links == 2 || q.path_links == 4) << int(q.path_links);
    }
  Fabric fab(r.fabric, 0);  // the messages' post times count from 0, as `roceswitch --fabric` runs
  fab.run_until(4 * kMs);
  std::vector<nlohmann::json> ports;
  for (std::size_t i = 0; i < fab.num_switches(); ++i) ports.push_back(stats_json(fab.at(i))["ports"]);
  std::vector<const nlohmann::json*> hosts;
  uint64_t done = 0;
  for (const auto& [sw, pt] : r.hosts) {
    hosts.push_back(&ports[sw][pt]);
    done += ports[sw][pt]["host"]["nic"]["totals"]["messages_done"].get<uint64_t>();
  }
  const nlohmann::json rows = fct_by_size_json(r, hosts);
  ASSERT_GE(rows.size(), 3u) << rows.dump();
  uint64_t counted = 0;
  for (const auto& row : rows) {
    counted += row["messages"].get<uint64_t>();
    EXPECT_LE(row["fct_p50_us"].get<double>(), row["fct_p99_us"].get<double>());
    if (row["bytes_min"].get<uint64_t>() >= 65536) {
      EXPECT_GT(row["slowdown_p50"].get<double>(), 0.9) << row.dump();
    }
  }
  EXPECT_EQ(counted, done) << "every completed message in one class";
  EXPECT_GT(done, 20u);
}

TEST(Fabric, PauseGoesHopByHopAndNothingLosslessIsLost) {
  // Leaf1's h1 and leaf2's h2 send 20 Gb/s each to leaf2's h1 (25 Gb/s): its port on leaf2
  // fills, leaf2 pauses the spine (and h2), the spine's queue to leaf2 fills and it pauses
  // leaf1, and leaf1 pauses h1.
  LeafSpineSpec s = spec(1, 2, 2);
  FabricSpec f = leaf_spine(s);
  flow(f, 1, 1, 2, 1, 20, 0x11);
  flow(f, 2, 2, 2, 1, 20, 0x12);
  Fabric fab(std::move(f), kT0);
  fab.run_until(kT0 + 3 * kMs);
  const std::size_t leaf1 = sw_index(fab, "leaf1"), leaf2 = sw_index(fab, "leaf2"), spine = sw_index(fab, "spine1");
  auto xoff_rx = [&](std::size_t sw, std::size_t port) { return fab.at(sw).egress(port).pfc_rx().xoff[kLossless].get(); };
  const uint64_t at_spine = xoff_rx(spine, 1);  // spine1.down2 faces leaf2
  const uint64_t at_leaf1 = xoff_rx(leaf1, 2);  // leaf1.up1 faces spine1
  EXPECT_GT(at_spine, 0u) << "leaf2 paused the spine";
  EXPECT_GT(at_leaf1, 0u) << "the spine paused leaf1";
  EXPECT_GT(host(fab.at(leaf1), 0).pfc_received(), 0u) << "leaf1 paused its senders";
  for (std::size_t i = 0; i < fab.num_switches(); ++i) {
    EXPECT_EQ(fab.at(i).lossless_drops(), 0u) << fab.switch_name(i);
    for (std::size_t p = 0; p < fab.at(i).num_ports(); ++p)
      for (std::size_t r = 1; r < kNumDropReasons; ++r)
        if (uint64_t d = fab.at(i).drops(p, static_cast<DropReason>(r)); d && static_cast<DropReason>(r) != DropReason::MacControl)
          ADD_FAILURE() << fab.switch_name(i) << " port " << p << ": " << d << " " << drop_reason_name(static_cast<DropReason>(r));
  }
  // The receiver gets its link's worth: 25 Gb/s of 1082-byte frames (1106 on the wire).
  const double gbps = static_cast<double>(fab.at(leaf2).tx_bytes(0)) * 8 / (3.0 * kMs);
  EXPECT_GT(gbps, 0.85 * 25 * 1082 / 1106) << gbps;
  std::printf("incast over a spine: PFC XOFF frames received at spine1.down2 %lu, leaf1.up1 %lu, by the senders %lu; "
              "receiver %.2f Gb/s\n",
              (unsigned long)at_spine, (unsigned long)at_leaf1, (unsigned long)host(fab.at(leaf1), 0).pfc_received(), gbps);
  expect_balanced(fab);
}

TEST(Fabric, ACutCableMovesTheTrafficToTheOtherSpine) {
  FabricSpec f = leaf_spine(spec(2, 2, 1));
  for (int q = 0; q < 8; ++q) flow(f, 1, 1, 2, 1, 2, 0x40 + q);  // 8 flows: both uplinks carry some
  // leaf1.up1 - spine1 is cut 1 ms in.
  f.cables[0].events.push_back({kMs, false});
  ASSERT_EQ(f.cables[0].name.rfind("leaf1.up1-", 0), 0u);
  Fabric fab(std::move(f), kT0);
  fab.run_until(kT0 + kMs);
  const std::size_t leaf1 = sw_index(fab, "leaf1"), leaf2 = sw_index(fab, "leaf2");
  const uint64_t up1_before = fab.at(leaf1).tx_packets(1), up2_before = fab.at(leaf1).tx_packets(2);
  EXPECT_GT(up1_before, 0u);
  EXPECT_GT(up2_before, 0u);
  fab.run_until(kT0 + 3 * kMs);
  EXPECT_FALSE(fab.cable(0).up());
  EXPECT_LT(fab.cable(0).lost(), 50u) << "the leaf stops using the cut cable at once";
  const uint64_t got_before = fab.at(leaf2).tx_packets(0);
  fab.run_until(kT0 + 4 * kMs);
  const double gbps = static_cast<double>(fab.at(leaf2).tx_packets(0) - got_before) * kFrame * 8 / kMs;
  EXPECT_NEAR(gbps, 16.0 * kFrame / (kFrame + 24), 1.0) << "all 8 flows arrive, over spine2";
  EXPECT_EQ(fab.at(leaf1).tx_packets(1), up1_before + fab.cable(0).lost());
  expect_balanced(fab);
}

TEST(Fabric, AQuietFabricJumpsItsClock) {
  FabricSpec f = leaf_spine(spec(2, 2, 1));
  flow(f, 1, 1, 2, 1, 1, 0x11).start_ns = kT0 + 50 * kMs;
  f.max_jump_ns = 100 * kUs;
  Fabric fab(std::move(f), kT0);
  fab.run_until(kT0 + 50 * kMs);
  EXPECT_LT(fab.steps(), 1000u) << "50 ms of nothing in far fewer than 500000 steps of 100 ns";
  EXPECT_GT(fab.jumps(), 0u);
  EXPECT_EQ(fab.now(), kT0 + 50 * kMs);
  fab.run_until(kT0 + 51 * kMs);
  EXPECT_GT(fab.at(sw_index(fab, "leaf2")).tx_packets(0), 50u) << "the flow starts when it should";
}

TEST(Fabric, NicHostsLetTheClockJumpWithoutChangingWhatHappens) {
  // Messages at random times (light load) and DCQCN: between them the NICs say when they will
  // next post or time out, and the clock jumps there. Every port's and cable's figures equal
  // those of a run that steps through (max_jump_us 0), and fewer steps are taken.
  const std::string cdf = ::testing::TempDir() + "/rs_jump_sizes.cdf";
  {
    std::ofstream f(cdf);
    f << "4096 0\n65536 1\n";
  }
  auto run = [&](const char* max_jump_us, uint64_t& steps, uint64_t& jumps) {
    const FabricRunSpec r = load_fabric_text(
        fmt::format("fabric:\n  leaf_spine: {{spines: 2, leaves: 2, hosts_per_leaf: 2, host_gbps: 25, uplink_gbps: 25}}\n"
                    "  max_jump_us: {}\n"
                    "switch_defaults: {{switch: {{mbufs: 4096}}}}\n"
                    "hosts: {{nic: {{mtu: 1024}}}}\n"
                    "traffic: [{{pattern: cdf, hosts: [all], cdf_file: {}, load: 0.05, duration_s: 0.002}}]\n",
                    max_jump_us, cdf),
        "jumps.yaml");
    Fabric fab(r.fabric, 0);  // the messages' post times count from 0
    fab.run_until(3 * kMs);
    expect_balanced(fab);
    steps = fab.steps(), jumps = fab.jumps();
    std::string all;
    for (std::size_t i = 0; i < fab.num_switches(); ++i) all += stats_json(fab.at(i))["ports"].dump();
    for (std::size_t i = 0; i < fab.num_cables(); ++i) {
      nlohmann::json j;
      fab.cable(i).stats(j);
      all += j.dump();
    }
    return all;
  };
  uint64_t steps_jumping = 0, jumps = 0, steps_stepping = 0, none = 0;
  const std::string jumping = run("100", steps_jumping, jumps), stepping = run("0", steps_stepping, none);
  EXPECT_NE(jumping.find("\"messages_done\":"), std::string::npos);
  EXPECT_EQ(none, 0u);
  EXPECT_GT(jumps, 10u) << "NIC hosts between messages are idle";
  EXPECT_LT(steps_jumping * 2, steps_stepping);
  EXPECT_TRUE(jumping == stepping) << "a jump changed what happened";
}

TEST(Fabric, BadCablesAreRefusedByName) {
  FabricSpec f = leaf_spine(spec(1, 2, 1));
  f.cables[1].b_port = 0;  // spine1.down1 a second time
  try {
    Fabric fab(std::move(f), kT0);
    FAIL() << "built";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("is already cable leaf1.up1-spine1.down1's"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace rs::test
