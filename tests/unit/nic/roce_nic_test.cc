// Emulated RoCE NICs on a whole stepped switch (the lossless tests' topology, lossless_net.h):
// RC messages complete at the link's rate; a lossy queue's drops are recovered by go-back-N
// (NAKs, resends, every message complete, both ends' counts agreeing); a 4:1 incast on a
// lossless priority with ECN settles under DCQCN near a quarter of the bottleneck each, with far
// fewer PFC frames than the same incast without congestion control (printed side by side).
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <cstdio>

#include "tests/unit/switch/lossless_net.h"

namespace rs::test {
namespace {

using nic::QpSpec;

QpSpec qp_to(uint8_t to, uint32_t qpn, uint32_t bytes, uint64_t messages, uint8_t dscp = kRoceDscp) {
  QpSpec q;
  q.peer_ip = host_ip(to);
  q.qpn = qpn;
  q.dscp = dscp;
  q.message_bytes = bytes;
  q.messages = messages;
  q.depth = 4;
  return q;
}

void nic_on(Net& n, uint8_t h, uint32_t mtu = 1024, bool dcqcn = true) {
  auto& s = n.cfg.ports[h].host.nic;
  s.enabled = true;
  s.rc.mtu = mtu;
  s.dcqcn = dcqcn;
  s.rc.retransmit_ns = 200 * kUs;
}

const nlohmann::json& qp_stats(const nlohmann::json& j, std::size_t port, std::size_t i = 0) {
  return j["ports"][port]["host"]["nic"]["qps"][i];
}

void run(Switch& sw, uint64_t from, uint64_t to, uint64_t step = 2 * kUs) {
  for (uint64_t t = from; t < to; t += step) sw.poll_all(t);
}

TEST(RoceNic, MessagesCompleteAtTheLinkRate) {
  Net n;
  n.add_host(10);
  n.add_host(10);
  nic_on(n, 0);
  nic_on(n, 1);
  n.cfg.ports[0].host.qps.push_back(qp_to(1, 0x11, 64 << 10, 100));
  Switch sw(n.cfg, kT0);
  run(sw, kT0, kT0 + 20 * kMs);
  const nlohmann::json j = stats_json(sw);
  const auto& tx = qp_stats(j, 0);
  const auto& rx = qp_stats(j, 1);
  ASSERT_TRUE(tx.is_object()) << j["ports"][0]["host"].dump();
  EXPECT_EQ(tx["messages_done"], 100);
  EXPECT_EQ(tx["retransmitted"], 0);
  EXPECT_EQ(rx["role"], "responder");
  EXPECT_EQ(rx["rx_bytes"], 100u * (64 << 10));
  EXPECT_EQ(rx["rx_messages"], 100);
  // 1024 bytes a packet of 1102 on the wire (58 of headers, 20 of preamble and gap, 4 FCS).
  const double ideal = 10.0 * 1024 / (1024 + 58 + 24);
  EXPECT_GT(tx["goodput_gbps"].get<double>(), 0.9 * ideal) << tx.dump();
  EXPECT_LE(tx["goodput_gbps"].get<double>(), 1.01 * ideal);
  EXPECT_GT(tx["fct_us"]["p50"].get<double>(), 0);
  // The CDF's steps hold every completed message once; 64 KiB at the link rate is at least
  // 56 us, so no step lies below it. The host's totals carry the same distribution.
  uint64_t in_cdf = 0;
  for (const auto& step : tx["fct_us"]["cdf"]) {
    EXPECT_GT(step[0].get<double>(), 64.0 * 1024 * 8 / 10e3) << step.dump();
    in_cdf += step[1].get<uint64_t>();
  }
  EXPECT_EQ(in_cdf, 100u);
  EXPECT_EQ(j["ports"][0]["host"]["nic"]["totals"]["fct_us"]["cdf"], tx["fct_us"]["cdf"]);
  EXPECT_EQ(host(sw, 1).icrc_bad(), 0u);
  EXPECT_EQ(host(sw, 0).icrc_bad(), 0u) << "the ACKs";
  std::printf("one QP, 100 x 64 KiB: goodput %.2f Gb/s (ideal %.2f), message completion p50 %.1f us p99 %.1f us\n",
              tx["goodput_gbps"].get<double>(), ideal, tx["fct_us"]["p50"].get<double>(), tx["fct_us"]["p99"].get<double>());
  sw.shutdown(kT0 + 20 * kMs);
  EXPECT_TRUE(sw.totals().balanced());
}

TEST(RoceNic, GoBackNRecoversWhatALossyQueueDrops) {
  Net n;
  for (int h = 0; h < 3; ++h) n.add_host(10);
  for (uint8_t h = 0; h < 3; ++h) nic_on(n, h);
  // Two senders into one receiver in a lossy class with a short queue: tail drops.
  n.cfg.ports[0].egress.limits[kLossyQueue] = {.packets = 16, .bytes = 64u << 10};
  n.cfg.ports[1].host.qps.push_back(qp_to(0, 0x21, 64 << 10, 40, kLossyDscp));
  n.cfg.ports[2].host.qps.push_back(qp_to(0, 0x22, 64 << 10, 40, kLossyDscp));
  Switch sw(n.cfg, kT0);
  run(sw, kT0, kT0 + 100 * kMs);
  const nlohmann::json j = stats_json(sw);
  EXPECT_GT(qdrops_all(sw, 0, kLossyQueue), 0u) << "the test needs drops";
  uint64_t resent = 0, naks = 0;
  for (uint8_t h = 1; h <= 2; ++h) {
    const auto& tx = qp_stats(j, h);
    EXPECT_EQ(tx["messages_done"], 40) << tx.dump();
    resent += tx["retransmitted"].get<uint64_t>();
    naks += tx["naks_received"].get<uint64_t>();
  }
  EXPECT_GT(resent, 0u);
  EXPECT_GT(naks, 0u);
  // The hosts' totals sum their QPs; the receiver's count the gaps it found.
  const auto& t1 = j["ports"][1]["host"]["nic"]["totals"];
  const auto& t2 = j["ports"][2]["host"]["nic"]["totals"];
  EXPECT_EQ(t1["retransmitted"].get<uint64_t>() + t2["retransmitted"].get<uint64_t>(), resent);
  EXPECT_EQ(t1["messages_done"], 40);
  EXPECT_GT(j["ports"][0]["host"]["nic"]["totals"]["missing_psns"].get<uint64_t>(), 0u);
  // The receiver's two responders: every byte once, the gaps NAKed as the senders heard.
  uint64_t rx_bytes = 0, naks_sent = 0;
  for (std::size_t i = 0; i < 2; ++i) {
    const auto& rx = qp_stats(j, 0, i);
    rx_bytes += rx["rx_bytes"].get<uint64_t>();
    naks_sent += rx["naks_sent"].get<uint64_t>();
    EXPECT_GT(rx["out_of_sequence"].get<uint64_t>(), 0u);
  }
  EXPECT_EQ(rx_bytes, 2u * 40 * (64 << 10));
  EXPECT_GE(naks_sent, naks) << "a NAK lost on the way back is possible, one invented is not";
  std::printf("lossy 2:1, 80 x 64 KiB: %lu queue drops, %lu NAKs, %lu packets resent, all messages complete\n",
              static_cast<unsigned long>(qdrops_all(sw, 0, kLossyQueue)), static_cast<unsigned long>(naks),
              static_cast<unsigned long>(resent));
  sw.shutdown(kT0 + 100 * kMs);
  EXPECT_TRUE(sw.totals().balanced());
}

// One QP sprayed packet by packet over two links to one receiver (a receiver group: one host,
// one NIC, two switch ports), one link 20 us longer than the other, so that packets overtake
// each other all the time; nothing is lost.
struct SprayResult {
  uint64_t done = 0, resent = 0, naks = 0, placed = 0, out_of_sequence = 0;
};
SprayResult spray(bool placement) {
  Net n;
  for (int h = 0; h < 3; ++h) n.add_host(10);
  for (uint8_t h = 0; h < 3; ++h) {
    nic_on(n, h);
    n.cfg.ports[h].host.nic.rc.placement = placement;
  }
  for (uint8_t h = 1; h <= 2; ++h) {
    n.cfg.ports[h].host.ip = host_ip(9);
    n.cfg.ports[h].host.mac = mac_of(9, false);
    n.cfg.ports[h].host.receiver = "far";
  }
  n.cfg.ports[2].faults.direction = FaultSpec::kTx;
  n.cfg.ports[2].faults.delay_ns = 20 * kUs;
  GroupSpec g;
  g.name = "to_far";
  g.policy.name = "spray";
  g.members = {static_member(1, mac_of(9, false)), static_member(2, mac_of(9, false))};
  n.cfg.groups.push_back(g);
  add_route(n.cfg, "10.0.9.0/24", static_cast<uint32_t>(n.cfg.groups.size() - 1));
  n.cfg.ports[0].host.qps.push_back(qp_to(9, 0x41, 64 << 10, 50));
  Switch sw(n.cfg, kT0);
  // Long enough for go-back-N: the hosts' cables delay every frame by its serialisation, which
  // lengthens the loop from a gap to its resend and so the resends per gap.
  constexpr uint64_t kEnd = kT0 + 100 * kMs;
  run(sw, kT0, kEnd);
  const nlohmann::json j = stats_json(sw);
  const auto& tx = qp_stats(j, 0);
  const auto& rx = qp_stats(j, 1);
  EXPECT_TRUE(rx.is_object()) << j["ports"][1]["host"].dump();
  SprayResult r{tx["messages_done"].get<uint64_t>(), tx["retransmitted"].get<uint64_t>(), tx["naks_received"].get<uint64_t>(),
                rx.value("placed_out_of_order", uint64_t{0}), rx.value("out_of_sequence", uint64_t{0})};
  EXPECT_EQ(rx["rx_bytes"], 50u * (64 << 10)) << "every byte delivered once";
  sw.shutdown(kEnd);
  EXPECT_TRUE(sw.totals().balanced());
  return r;
}

TEST(RoceNic, SprayedTrafficCostsRetransmissionsUnderGoBackNAndNoneWithPlacement) {
  const SprayResult gbn = spray(false), placed = spray(true);
  std::printf("spray over 2 links (one 20 us longer), 50 x 64 KiB   go_back_n   placement\n");
  std::printf("  messages done                                    %-11lu %lu\n", (unsigned long)gbn.done, (unsigned long)placed.done);
  std::printf("  packets resent                                   %-11lu %lu\n", (unsigned long)gbn.resent, (unsigned long)placed.resent);
  std::printf("  NAKs                                             %-11lu %lu\n", (unsigned long)gbn.naks, (unsigned long)placed.naks);
  std::printf("  out of sequence (dropped) / placed               %-11lu %lu\n", (unsigned long)gbn.out_of_sequence,
              (unsigned long)placed.placed);
  EXPECT_EQ(gbn.done, 50u);
  EXPECT_EQ(placed.done, 50u);
  EXPECT_GT(gbn.resent, 0u);
  EXPECT_GT(gbn.naks, 0u);
  EXPECT_EQ(placed.resent, 0u);
  EXPECT_EQ(placed.naks, 0u);
  EXPECT_GT(placed.placed, 0u);
}

// 4:1 incast on lossless priority 3, ECN marking at the receiver's port below XOFF: run once
// with DCQCN and once without congestion control; what each sender got at the end, the PFC
// frames, and how often the queue stood above XOFF.
struct IncastResult {
  double rate[4] = {};
  uint64_t pfc = 0, cnps = 0, marked = 0;
  double above_xoff = 0;
};
IncastResult incast(bool dcqcn) {
  Net n;
  for (int h = 0; h < 5; ++h) n.add_host(10);
  n.set_pg({.lossless = true, .xoff = 160 * kCells, .xon = 140 * kCells, .headroom = 40 * kCells});
  n.cfg.ports[0].lossless.wred[kLossless] = {
      .enabled = true, .wred_drop = false, .ecn_mark = true, .kmin = 8 * kCells, .kmax = 64 * kCells, .pmax_percent = 20};
  // Room in the bottleneck queue for all four PGs up to XOFF: PFC, never the queue's limit, stops them.
  n.cfg.ports[0].egress.limits[kLossless] = {.packets = 4096, .bytes = 4u << 20};
  for (uint8_t h = 0; h < 5; ++h) nic_on(n, h, 1024, dcqcn);
  for (uint8_t h = 1; h <= 4; ++h) n.cfg.ports[h].host.qps.push_back(qp_to(0, 0x30 + h, 1 << 20, 0));
  Switch sw(n.cfg, kT0);
  IncastResult r;
  const uint64_t mid = kT0 + 60 * kMs, end = kT0 + 100 * kMs;
  uint64_t before[4] = {}, samples = 0, high = 0;
  for (uint64_t t = kT0; t < end; t += 2 * kUs) {
    sw.poll_all(t);
    if (t == mid) {
      const nlohmann::json j = stats_json(sw);
      for (int h = 0; h < 4; ++h) before[h] = qp_stats(j, h + 1)["acked_bytes"].get<uint64_t>();
    }
    if (t >= mid && (t - kT0) % (10 * kUs) == 0) {
      ++samples;
      // The bottleneck queue above one PG's XOFF: the senders' PGs are near pausing them.
      high += sw.egress(0).queue(kLossless).depth_bytes.get() > 160 * kCells;
    }
  }
  const nlohmann::json j = stats_json(sw);
  for (int h = 0; h < 4; ++h) {
    const uint64_t got = qp_stats(j, h + 1)["acked_bytes"].get<uint64_t>() - before[h];
    r.rate[h] = static_cast<double>(got) * 8 / static_cast<double>(end - mid);
    r.cnps += qp_stats(j, h + 1)["cnp_received"].get<uint64_t>();
  }
  r.pfc = pfc_frames_sent(sw);
  r.marked = sw.egress(0).queue(kLossless).ecn_marked.get();
  r.above_xoff = samples ? static_cast<double>(high) / static_cast<double>(samples) : 0;
  sw.shutdown(end);
  EXPECT_TRUE(sw.totals().balanced());
  EXPECT_EQ(sw.lossless_drops(), 0u);
  return r;
}

TEST(RoceNic, DcqcnSettlesAFourToOneIncastWithFewPauses) {
  const IncastResult cc = incast(true), none = incast(false);
  const double fair = 10.0 * 1024 / (1024 + 58 + 24) / 4;
  std::printf("4:1 incast, 10 Gb/s links, last 40 ms   dcqcn          none\n");
  std::printf("  sender goodput (Gb/s)                 %.2f %.2f %.2f %.2f   %.2f %.2f %.2f %.2f\n", cc.rate[0], cc.rate[1],
              cc.rate[2], cc.rate[3], none.rate[0], none.rate[1], none.rate[2], none.rate[3]);
  std::printf("  PFC frames sent by the switch         %-14lu %lu\n", static_cast<unsigned long>(cc.pfc), static_cast<unsigned long>(none.pfc));
  std::printf("  CNPs received by the senders          %-14lu %lu\n", static_cast<unsigned long>(cc.cnps), static_cast<unsigned long>(none.cnps));
  std::printf("  ECN marks                             %-14lu %lu\n", static_cast<unsigned long>(cc.marked), static_cast<unsigned long>(none.marked));
  std::printf("  time the queue stood above XOFF       %-14.2f %.2f\n", cc.above_xoff, none.above_xoff);
  EXPECT_GT(cc.cnps, 0u);
  for (double r : cc.rate) EXPECT_NEAR(r, fair, 0.2 * fair);
  EXPECT_LT(cc.pfc * 4, none.pfc) << "DCQCN holds the queue below XOFF";
  EXPECT_LT(cc.above_xoff, 0.1);
  EXPECT_GT(none.above_xoff, 0.5);
  EXPECT_EQ(none.cnps, 0u) << "cc none: CE counted, never answered";
}

}  // namespace
}  // namespace rs::test
