// Collectives over emulated NICs on one stepped switch (dataplane/nic/collective.h): the ring's
// queue pairs and their gates as the loader makes them; ring AllReduce over 8 hosts with
// nothing else competing reaching at least 80 % of the link rate in busbw; AllGather,
// ReduceScatter and all-to-all completing; the nccl-tests table printed.
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <cstdio>

#include "app/collective_stats.h"
#include "control/config/config_loader.h"
#include "tests/unit/switch/lossless_net.h"

namespace rs::test {
namespace {

using nic::CollectiveOp;
using nic::CollectiveSpec;

TEST(Collective, TheRingIsOneQpToTheRightGatedByTheOneFromTheLeft) {
  std::vector<nic::QpSpec> q[3];
  std::vector<nic::Rank> ranks;
  for (uint8_t r = 0; r < 3; ++r) ranks.push_back({host_ip(r), &q[r]});
  CollectiveSpec c;
  c.size_bytes = 3 * 4096;
  c.slices = 2;
  nic::expand_collective(c, 1, ranks);
  ASSERT_EQ(q[1].size(), 2u);
  EXPECT_EQ(q[1][0].peer_ip, host_ip(2)) << "sends right";
  EXPECT_EQ(q[1][0].messages, 2u * 2 * 2) << "2(n-1) steps of 2 slices";
  EXPECT_EQ(q[1][0].message_bytes, 2048u);
  EXPECT_EQ(q[1][0].gate, 1u);
  EXPECT_EQ(q[1][0].gate_lag, 2u);
  EXPECT_EQ(q[1][1].peer_ip, host_ip(0)) << "listens left";
  EXPECT_EQ(q[1][1].depth, 0u);
  // Two ranks: one QP both ways, gated by itself; all-to-all: a QP to every other rank.
  std::vector<nic::QpSpec> a, b;
  nic::expand_collective(c, 1, {{host_ip(0), &a}, {host_ip(1), &b}});
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].gate, 0u);
  c.op = CollectiveOp::AllToAll;
  for (auto& v : q) v.clear();
  nic::expand_collective(c, 2, ranks);
  ASSERT_EQ(q[0].size(), 2u);
  EXPECT_EQ(q[0][0].qpn, q[1][0].qpn) << "the pair 0-1 shares its QP number";
  EXPECT_EQ(q[0][0].gate, nic::QpSpec::kNoGate);
}

// n hosts at 10 Gb/s on a lossless class, one collective of `size` bytes; its figures.
nlohmann::json run(CollectiveOp op, std::size_t n, uint64_t size, uint64_t max_ms = 200) {
  Net net;
  for (std::size_t h = 0; h < n; ++h) net.add_host(10);
  CollectiveSpec c;
  c.op = op;
  c.size_bytes = size;
  std::vector<nic::Rank> ranks;
  for (uint16_t h = 0; h < n; ++h) {
    c.ports.push_back(h);
    auto& host = net.cfg.ports[h].host;
    host.nic.enabled = true;
    host.nic.rc.mtu = 1024;
    ranks.push_back({host.ip, &host.qps});
  }
  nic::expand_collective(c, 1, ranks);
  net.cfg.collectives.push_back(c);
  Switch sw(net.cfg, kT0);
  nlohmann::json r;
  for (uint64_t t = kT0; t < kT0 + max_ms * kMs; t += 2 * kUs) {
    sw.poll_all(t);
    if ((t - kT0) % (500 * kUs) == 0 && (r = stats_json(sw)["collectives"][0])["done"].get<bool>()) break;
  }
  r = stats_json(sw)["collectives"][0];
  EXPECT_EQ(sw.lossless_drops(), 0u);
  sw.shutdown(kT0 + max_ms * kMs);
  EXPECT_TRUE(sw.totals().balanced());
  return r;
}

TEST(Collective, RingAllReduceOverEightHostsReachesEightyPercentOfTheLinkInBusbw) {
  nlohmann::json all = nlohmann::json::array();
  all.push_back(run(CollectiveOp::AllReduce, 8, 16 << 20));
  all.push_back(run(CollectiveOp::AllGather, 8, 8 << 20));
  all.push_back(run(CollectiveOp::ReduceScatter, 8, 8 << 20));
  all.push_back(run(CollectiveOp::AllToAll, 8, 8 << 20));
  std::printf("8 ranks, 10 Gb/s links, one switch:\n%s", collectives_table(all).c_str());
  for (const auto& c : all) EXPECT_TRUE(c["done"].get<bool>()) << c.dump();
  EXPECT_GE(all[0]["busbw_gbps"].get<double>(), 8.0) << all[0].dump();
  EXPECT_NEAR(all[0]["busbw_gbps"].get<double>(), all[0]["algbw_gbps"].get<double>() * 2 * 7 / 8, 1e-9);
  EXPECT_NEAR(all[1]["busbw_gbps"].get<double>(), all[1]["algbw_gbps"].get<double>() * 7 / 8, 1e-9);
  for (const auto& c : all) EXPECT_LE(c["busbw_gbps"].get<double>(), 10.0) << "never above the link";
}

TEST(Collective, TheLoaderExpandsCollectivesAndRefusesBadOnes) {
  const std::string ports = R"(ports:
  - {name: a, host: {ip: 10.0.0.2, mac: "02:00:00:00:00:aa"}}
  - {name: b, host: {ip: 10.0.1.2, mac: "02:00:00:00:00:bb"}}
  - {name: c, host: {ip: 10.0.2.2, mac: "02:00:00:00:00:cc"}}
)";
  const SwitchConfig cfg = load_config_text(ports + "collectives: [{op: allgather, hosts: [a, b, c], size_bytes: 3000000, slices: 2}]\n", "c.yaml");
  ASSERT_EQ(cfg.collectives.size(), 1u);
  EXPECT_EQ(cfg.ports[1].host.qps.size(), 2u);
  EXPECT_EQ(cfg.ports[1].host.qps[0].tag, 1u);
  EXPECT_TRUE(cfg.ports[2].host.nic.enabled);
  auto refused = [&](const std::string& y, const std::string& field) {
    try {
      load_config_text(ports + y, "c.yaml");
      ADD_FAILURE() << "accepted: " << y;
    } catch (const std::exception& e) {
      EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
    }
  };
  refused("collectives: [{op: allreduce, hosts: [a, z], size_bytes: 100}]\n", "collectives[0].hosts[1]: no port 'z'");
  refused("collectives: [{op: allreduce, hosts: [a], size_bytes: 100}]\n", "collectives[0].hosts: a collective needs two hosts");
  refused("collectives: [{op: allreduce, hosts: [a, b], size_bytes: 0}]\n", "collectives[0].size_bytes");
  refused("collectives: [{op: broadcast, hosts: [a, b], size_bytes: 100}]\n", "collectives[0].op");
  refused("collectives: [{op: allreduce, hosts: [a, a], size_bytes: 100}]\n", "'a' is given twice");
}

}  // namespace
}  // namespace rs::test
