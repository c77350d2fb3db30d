// The lossless traffic manager's congestion signals through the whole switch, stepped with an
// injected clock: XOFF at the configured threshold, refresh and XON, headroom exhaustion; PFC
// reception from an injection port (malformed frames change nothing); ECN before PFC with a
// valid ICRC; CNP steering.
#include <gtest/gtest.h>
#include <rte_byteorder.h>
#include <rte_ip.h>

#include <cstdio>
#include <string>
#include <vector>

#include "dataplane/tm/pfc/pfc_frame.h"
#include "tests/support/eal_env.h"
#include "tests/support/fake_port.h"
#include "tests/unit/switch/lossless_net.h"

namespace rs::test {
namespace {

// ---------------------------------------------------------------------------------------------
// 1. XOFF at the threshold, refresh at half the pause time, XON under xon, headroom exhaustion.
//
// h0 (1 Gb/s) storms PFC on priority 3, so the switch's queue 3 towards h0 transmits nothing and
// every byte h1 sends stays in PG 3 of port 1. h1's flow is put on priority 7 for its own pause
// logic: it does not honour the switch's XOFF, so the PG climbs through XOFF into the headroom.
// One packet arrives per poll at most (5 Gb/s of 1106-byte wire frames, 1 us polls).
TEST(Lossless, XoffAtThresholdRefreshXonAndHeadroomExhaustion) {
  Net n;
  n.add_host(1);
  n.add_host(10);
  n.set_pg({.lossless = true, .xoff = 50'000, .xon = 25'600, .headroom = 14'000});
  n.cfg.ports[1].lossless.pfc_quanta = 1000;  // 51.2 us at 10 Gb/s: refresh every 25.6 us
  n.cfg.ports[0].host.storm = {.priority = kLossless, .start_ns = kT0, .stop_ns = kT0 + 400 * kUs, .quanta = 200};
  HostFlowSpec& f = n.add_flow(1, 0, 5, 0x101);
  f.priority = 7;  // a sender that ignores PFC on priority 3
  f.stop_ns = kT0 + 300 * kUs;
  Switch sw(n.cfg, kT0);
  const PgSettings pg = n.pg;
  const PfcGenerator& gen = sw.egress(1).pfc_gen();
  ASSERT_EQ(gen.refresh_ns(), 25'600u);

  uint64_t prev_level = 0, prev_xoff = 0, prev_xon = 0, prev_host_pfc = 0;
  uint64_t first_xoff_level = 0, first_xon_level = 0, first_drop_level = 0, level_before_xon = 0;
  uint64_t first_xoff_t = 0, first_xon_t = 0, first_drop_t = 0;
  std::vector<uint64_t> xoff_times, host_pfc_times;
  for (uint64_t t = kT0; t < kT0 + 1500 * kUs; t += kUs) {
    sw.poll_all(t);
    const uint64_t level = sw.buffer().pg_level(1, kLossless);
    const uint64_t xoff = gen.counters().xoff_sent[kLossless].get();
    const uint64_t xon = gen.counters().xon_sent[kLossless].get();
    const uint64_t drops = qdrops(sw, 0, kLossless, DropReason::HeadroomExhausted);
    if (xoff > prev_xoff) {
      ASSERT_EQ(xoff, prev_xoff + 1) << "more than one XOFF frame in one 1 us poll";
      xoff_times.push_back(t);
      if (!first_xoff_t) {
        first_xoff_t = t;
        first_xoff_level = level;
        EXPECT_LT(prev_level, pg.xoff) << "the PG was over XOFF a poll earlier without PAUSE";
      }
    }
    if (xon > prev_xon && !first_xon_t) {
      first_xon_t = t;
      first_xon_level = level;
      level_before_xon = prev_level;
    }
    if (drops && !first_drop_t) {
      first_drop_t = t;
      first_drop_level = level;
    }
    if (host(sw, 1).pfc_received() > prev_host_pfc) host_pfc_times.push_back(t);
    prev_host_pfc = host(sw, 1).pfc_received();
    prev_level = level;
    prev_xoff = xoff;
    prev_xon = xon;
  }
  // XOFF within 2 packets of the threshold (the first packet that reaches it sends it).
  ASSERT_NE(first_xoff_t, 0u);
  EXPECT_GE(first_xoff_level, pg.xoff);
  EXPECT_LT(first_xoff_level, pg.xoff + 2 * kCells);
  // Refresh: every frame after the first comes refresh_ns later, within one poll step, for as
  // long as the PG stays over XON.
  ASSERT_GE(xoff_times.size(), 10u);
  for (std::size_t i = 1; i < xoff_times.size(); ++i) {
    EXPECT_GE(xoff_times[i] - xoff_times[i - 1], gen.refresh_ns()) << i;
    EXPECT_LT(xoff_times[i] - xoff_times[i - 1], gen.refresh_ns() + kUs) << i;
  }
  // Every frame reached the host, at the poll after it was sent (when its last bit arrived).
  EXPECT_EQ(host(sw, 1).pfc_received(), gen.counters().frames.get());
  EXPECT_EQ(host_pfc_times.size(), xoff_times.size() + 1);
  for (std::size_t i = 0; i < xoff_times.size() && i < host_pfc_times.size(); ++i)
    EXPECT_EQ(host_pfc_times[i], xoff_times[i] + kUs);
  // Headroom: nothing lost below XOFF + headroom; the first drop is the packet that would not
  // fit, counted as lossless_headroom_exhausted and nothing else.
  ASSERT_NE(first_drop_t, 0u);
  EXPECT_LE(first_drop_level, pg.xoff + pg.headroom);
  EXPECT_GT(first_drop_level + kCells, pg.xoff + pg.headroom);
  EXPECT_EQ(sw.egress(0).queue(kLossless).enq_packets.get(), (pg.xoff + pg.headroom) / kCells);
  EXPECT_EQ(qdrops_all(sw, 0, kLossless), qdrops(sw, 0, kLossless, DropReason::HeadroomExhausted));
  EXPECT_GT(sw.lossless_drops(), 0u);
  // XON once the level falls under xon (the paused queue drains after the storm).
  ASSERT_NE(first_xon_t, 0u);
  EXPECT_GE(level_before_xon, pg.xon);
  EXPECT_LT(first_xon_level, pg.xon);
  EXPECT_GE(first_xon_level + 2 * kCells, pg.xon);
  EXPECT_EQ(gen.asserted(), 0u);
  EXPECT_EQ(host(sw, 1).pfc_received(), xoff_times.size() + 1);
  RecordProperty("first_xoff_level", std::to_string(first_xoff_level));
  RecordProperty("first_xon_level", std::to_string(first_xon_level));
  RecordProperty("first_drop_level", std::to_string(first_drop_level));
  std::printf("XOFF at %lu (xoff %lu), %zu XOFF frames, XON at %lu (xon %lu), first drop at level %lu (limit %lu)\n",
              static_cast<unsigned long>(first_xoff_level), static_cast<unsigned long>(pg.xoff), xoff_times.size(),
              static_cast<unsigned long>(first_xon_level), static_cast<unsigned long>(pg.xon),
              static_cast<unsigned long>(first_drop_level), static_cast<unsigned long>(pg.xoff + pg.headroom));
  sw.shutdown(kT0 + 1500 * kUs);
  EXPECT_TRUE(sw.totals().balanced());
}

// ---------------------------------------------------------------------------------------------
// 3. PFC reception through an ethdev port built on DPDK rings (RingPeer): the test writes
// frames into the port's rx ring as a peer would.
TEST(Lossless, PfcFromThePeerPausesOnlyThatPriorityAndMalformedFramesChangeNothing) {
  RingPeer peer("ltest_peer0");
  ASSERT_GE(peer.port_id(), 0);
  Net n;
  n.add_host(10);  // h0 sends to the peer on priorities 3 (DSCP 26) and 1 (DSCP 0)
  n.cfg.mmu.pfc_enable = (1u << kLossless) | (1u << 4);
  PortSpec p;
  p.name = "peer";
  p.kind = PortKind::Ethdev;
  p.devargs = peer.devname();
  p.mac = mac_of(1, true);
  p.egress.speed_gbps = 1;
  for (auto& l : p.egress.limits) l = {.packets = 512, .bytes = 256u << 10};
  p.lossless.pg[kLossless] = n.pg;
  n.cfg.ports.push_back(p);
  GroupSpec g;
  g.name = "to_peer";
  g.members.push_back({.port = 1, .mac = rte_ether_addr{{0x02, 0, 0, 0, 0xbb, 1}}, .weight = 1});
  n.cfg.groups.push_back(g);
  RouteSpec r;
  r.addr[0] = 10;
  r.addr[2] = 1;
  r.depth = 24;
  r.group = 1;
  n.cfg.routes.push_back(r);
  n.add_flow(0, 1, 0.5, 0x301);
  n.add_flow(0, 1, 0.2, 0x302, kLossyDscp);
  Switch sw(n.cfg, kT0);
  uint64_t now = kT0;
  auto step = [&](uint64_t until) {
    for (; now < until; now += kUs) {
      sw.poll_all(now);
      peer.drain_tx();
    }
  };
  step(kT0 + 200 * kUs);
  ASSERT_GT(sw.egress(1).queue(kLossless).deq_packets.get(), 0u);

  // Malformed MAC control frames: each counted and dropped as such, and nothing pauses.
  auto bad_opcode = pfc_frame(1u << kLossless, 0xffff);
  bad_opcode[15] = 0x02;
  auto reserved = pfc_frame(1u << kLossless, 0xffff);
  reserved[16] = 0x01;  // the class-enable vector's reserved high octet
  auto bad_dst = pfc_frame(1u << kLossless, 0xffff);
  bad_dst[5] = 0x02;
  auto runt = pfc_frame(1u << kLossless, 0xffff);
  runt.resize(40);
  for (auto* f : {&bad_opcode, &reserved, &bad_dst, &runt}) peer.inject(*f);
  step(now + 100 * kUs);
  EXPECT_EQ(sw.drops(1, DropReason::MalformedMacControl), 4u);
  EXPECT_EQ(stage_counter(sw, "mac_control", "malformed"), 4u);
  EXPECT_EQ(stage_counter(sw, "mac_control", "pfc"), 0u);
  for (int q = 0; q < 8; ++q) EXPECT_FALSE(sw.egress(1).paused(q)) << q;
  for (int pr = 0; pr < 8; ++pr) EXPECT_EQ(sw.egress(1).pfc_rx().xoff[pr].get(), 0u);
  EXPECT_EQ(sw.egress(1).pfc_rx().pause.get(), 0u);
  EXPECT_EQ(sw.egress(1).queue(kLossless).paused_ns.get(), 0u);

  // Priority 1 is not lossless here, and an empty vector asks for nothing: both ignored.
  peer.inject(pfc_frame(1u << 1, 0xffff));
  peer.inject(pfc_frame(0, 0xffff));
  step(now + 100 * kUs);
  for (int q = 0; q < 8; ++q) EXPECT_FALSE(sw.egress(1).paused(q)) << q;
  EXPECT_EQ(sw.egress(1).pfc_rx().ignored.get(), 1u);

  // A valid XOFF for priority 3: queue 3 stops for quanta x 512 / 1 Gb/s, queue 1 keeps going.
  const uint16_t quanta = 2000;  // 1.024 ms at 1 Gb/s
  const uint64_t expect_ns = pause_quanta_to_ns(quanta, 1);
  peer.inject(pfc_frame(1u << kLossless, quanta));
  const uint64_t t_pause = now;
  const uint64_t deq3 = sw.egress(1).queue(kLossless).deq_packets.get();
  const uint64_t deq1 = sw.egress(1).queue(kLossyQueue).deq_packets.get();
  uint64_t resumed = 0;
  for (; now < t_pause + 3 * kMs; now += kUs) {
    sw.poll_all(now);
    peer.drain_tx();
    if (now == t_pause) {
      EXPECT_TRUE(sw.egress(1).paused(kLossless));
      EXPECT_FALSE(sw.egress(1).paused(kLossyQueue));
    }
    if (!resumed && sw.egress(1).queue(kLossless).deq_packets.get() > deq3) resumed = now;
  }
  EXPECT_EQ(sw.egress(1).pfc_rx().xoff[kLossless].get(), 1u);
  EXPECT_GT(sw.egress(1).queue(kLossyQueue).deq_packets.get(), deq1 + 30) << "the lossy queue kept sending";
  ASSERT_NE(resumed, 0u);
  EXPECT_NEAR(static_cast<double>(resumed - t_pause), static_cast<double>(expect_ns), expect_ns * 0.01 + kUs);
  EXPECT_NEAR(static_cast<double>(sw.egress(1).queue(kLossless).paused_ns.get()), static_cast<double>(expect_ns),
              expect_ns * 0.01);

  // XON (quanta 0) resumes at once.
  peer.inject(pfc_frame(1u << kLossless, 0xffff));
  step(now + 10 * kUs);
  EXPECT_TRUE(sw.egress(1).paused(kLossless));
  peer.inject(pfc_frame(1u << kLossless, 0));
  step(now + kUs);
  EXPECT_FALSE(sw.egress(1).paused(kLossless));
  EXPECT_EQ(sw.egress(1).pfc_rx().xon[kLossless].get(), 1u);
  EXPECT_EQ(sw.lossless_drops(), 0u);
  sw.shutdown(now);
  EXPECT_TRUE(sw.totals().balanced());
}


// ---------------------------------------------------------------------------------------------
// 5. ECN in the incast: with Kmin under what XOFF corresponds to, the first CE mark comes before
// the first PFC frame; marked packets keep a valid RoCE ICRC.
TEST(Lossless, EcnMarksBeforePfcAndIcrcStaysValid) {
  Net n;
  n.add_host(1);
  for (int i = 1; i <= 8; ++i) n.add_host(1);
  for (uint8_t h = 1; h <= 8; ++h) n.add_flow(h, 0, 1, 0x100 + h);
  n.cfg.ports[0].lossless.wred[kLossless] = {
      .enabled = true, .wred_drop = false, .ecn_mark = true, .kmin = 5 * kCells, .kmax = 40 * kCells, .pmax_percent = 20};
  Switch sw(n.cfg, kT0);
  uint64_t first_mark = 0, first_pfc = 0;
  const uint64_t end = kT0 + 200 * kMs;
  for (uint64_t t = kT0; t < end; t += 10 * kUs) {
    sw.poll_all(t);
    if (!first_mark && sw.egress(0).queue(kLossless).ecn_marked.get()) first_mark = t;
    if (!first_pfc && pfc_frames_sent(sw)) first_pfc = t;
  }
  ASSERT_NE(first_mark, 0u);
  ASSERT_NE(first_pfc, 0u);
  EXPECT_LT(first_mark, first_pfc);
  const uint64_t marked = sw.egress(0).queue(kLossless).ecn_marked.get();
  EXPECT_GT(host(sw, 0).ce_marked(), 0u);
  EXPECT_LE(host(sw, 0).ce_marked(), marked);
  EXPECT_EQ(host(sw, 0).icrc_bad(), 0u) << "CE is masked out of the ICRC: marking must not break it";
  EXPECT_EQ(sw.lossless_drops(), 0u) << stats_json(sw)["ports"][0]["queues"][kLossless].dump();
  std::printf("first CE at %.1f us, first PFC at %.1f us; %lu marked, host saw %lu CE, 0 ICRC errors\n",
              (first_mark - kT0) / 1e3, (first_pfc - kT0) / 1e3, static_cast<unsigned long>(marked),
              static_cast<unsigned long>(host(sw, 0).ce_marked()));
  sw.shutdown(end);
  EXPECT_TRUE(sw.totals().balanced());
}

// ---------------------------------------------------------------------------------------------
// 6. CNP steering: BTH opcode 0x81 with DSCP 26 goes to qos.cnp_queue when one is set, else to
// DSCP 26's queue like any packet of that class.
TEST(Lossless, CnpGoesToCnpQueueWhenSet) {
  for (int8_t cnp_queue : {int8_t{6}, int8_t{-1}}) {
    SCOPED_TRACE(cnp_queue);
    Net n;
    n.add_host(10);
    n.add_host(10);
    n.add_flow(1, 0, 0.5, 0x11).opcode = 0x81;
    n.add_flow(0, 1, 0.5, 0x12);  // ordinary RoCE data with DSCP 26 the other way
    n.cfg.qos.cnp_queue = cnp_queue;
    Switch sw(n.cfg, kT0);
    for (uint64_t t = kT0; t < kT0 + kMs; t += kUs) sw.poll_all(t);
    const uint64_t cnps = sw.rx_packets(1);
    ASSERT_GT(cnps, 0u);
    const int want = cnp_queue >= 0 ? cnp_queue : kLossless;
    EXPECT_EQ(sw.egress(0).queue(want).enq_packets.get(), cnps);
    for (int q = 0; q < 8; ++q)
      if (q != want) {
        EXPECT_EQ(sw.egress(0).queue(q).enq_packets.get(), 0u) << q;
      }
    EXPECT_EQ(sw.egress(1).queue(kLossless).enq_packets.get(), sw.rx_packets(0)) << "data is not steered";
    EXPECT_EQ(host(sw, 0).icrc_bad(), 0u);
  }
}

}  // namespace
}  // namespace rs::test
