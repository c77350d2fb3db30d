// The lossless traffic manager through the whole switch, stepped with an injected clock: XOFF at
// the configured threshold, refresh and XON, headroom exhaustion; a long 8:1 incast that loses
// nothing on the lossless class while a lossy class on the same port drops; PFC reception from
// an injection port (malformed frames change nothing); the PFC watchdog (detection and
// restoration windows, drop and forward actions, short storms, shutdown mid-storm); ECN before
// PFC with a valid ICRC; CNP steering.
#include <fmt/core.h>
#include <gtest/gtest.h>
#include <rte_byteorder.h>
#include <rte_ip.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <string>
#include <vector>

#include "app/stats_json.h"
#include "dataplane/emu/emulated_host.h"
#include "dataplane/switch/switch.h"
#include "dataplane/tm/pfc/pfc_frame.h"
#include "tests/support/constants.h"
#include "tests/support/eal_env.h"
#include "tests/support/fake_port.h"
#include "tests/support/host_net.h"

namespace rs::test {
namespace {

constexpr uint8_t kLossless = kRoceQueue;  // DSCP 26 -> TC 3 -> queue 3 -> PG 3
constexpr uint8_t kLossyDscp = 0;  // SONiC default map: TC 1, queue 1
constexpr uint8_t kLossyQueue = 1;

// Host h at 10.0.h.2 behind port h; priority 3 lossless on every port with the same PG profile.
struct Net {
  SwitchConfig cfg;
  PgSettings pg{.lossless = true, .xoff = 20 * kCells, .xon = 10 * kCells, .headroom = 12 * kCells};

  Net() {
    cfg.workers = 1;
    cfg.seed = 7;
    cfg.qos.dscp_to_tc[kRoceDscp] = kLossless;
    cfg.mmu.pfc_enable = 1u << kLossless;
  }
  uint8_t add_host(double gbps) {
    add_host_port(cfg, gbps, {.packets = 512, .bytes = 256u << 10}).lossless.pg[kLossless] = pg;
    return static_cast<uint8_t>(cfg.ports.size() - 1);
  }
  HostFlowSpec& add_flow(uint8_t from, uint8_t to, double gbps, uint32_t qp, uint8_t dscp = kRoceDscp) {
    return add_host_flow(cfg, from, to, gbps, qp, kPayload, dscp);
  }
  void set_pg(const PgSettings& s) {
    pg = s;
    for (auto& p : cfg.ports) p.lossless.pg[kLossless] = s;
  }
};

EmulatedHost& host(Switch& sw, std::size_t p) { return dynamic_cast<EmulatedHost&>(sw.port(p)); }
uint64_t qdrops(const Switch& sw, std::size_t port, int q, DropReason r) {
  return sw.egress(port).queue(q).drops[static_cast<std::size_t>(r)].get();
}
uint64_t qdrops_all(const Switch& sw, std::size_t port, int q) {
  uint64_t s = 0;
  for (std::size_t r = 1; r < kNumDropReasons; ++r) s += sw.egress(port).queue(q).drops[r].get();
  return s;
}
uint64_t stage_counter(const Switch& sw, const std::string& node, const std::string& name) {
  const nlohmann::json j = stats_json(sw);  // iterate a named value, not a temporary's member
  for (auto& st : j["stages"])
    if (st["node"] == node) return st["counters"][name].get<uint64_t>();
  return 0;
}
uint64_t pfc_frames_sent(const Switch& sw) {
  uint64_t s = 0;
  for (std::size_t p = 0; p < sw.num_ports(); ++p) s += sw.egress(p).pfc_gen().counters().frames.get();
  return s;
}

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
  // Every frame reached the host, when it was sent.
  EXPECT_EQ(host(sw, 1).pfc_received(), gen.counters().frames.get());
  EXPECT_EQ(host_pfc_times.size(), xoff_times.size() + 1);
  for (std::size_t i = 0; i < xoff_times.size() && i < host_pfc_times.size(); ++i)
    EXPECT_EQ(host_pfc_times[i], xoff_times[i]);
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

// These tests caught emulated hosts banking shaper credit while PFC-paused (a burst at XON
// that overran the headroom); a paused flow is no longer backlogged (emulated_host.cc).
// ---------------------------------------------------------------------------------------------
// 2. 8:1 incast on the lossless priority for 10 emulated seconds, plus a lossy flow into the
// same egress port: the lossless class loses nothing, the lossy one drops and is counted.
TEST(Lossless, EightToOneIncastLosesNothingOnLosslessClass) {
  Net n;
  // Headroom: at least what the PG can take after XOFF (what the host still sends in the poll
  // that carries XOFF), and no less than the computed minimum for 1 Gb/s.
  n.pg.headroom = std::max<uint64_t>(12 * kCells, headroom_min_bytes(1, 5, 9100));
  n.add_host(1);
  for (int i = 1; i <= 8; ++i) n.add_host(1);
  n.add_host(1);  // h9: the lossy sender
  for (uint8_t h = 1; h <= 8; ++h) n.add_flow(h, 0, 1, 0x100 + h);
  n.add_flow(9, 0, 1, 0x200, kLossyDscp);
  Switch sw(n.cfg, kT0);
  constexpr uint64_t kStep = 10 * kUs;
  constexpr uint64_t kEnd = kT0 + 10'000 * kMs;
  uint64_t first_lossless_drop = 0;
  for (uint64_t t = kT0; t < kEnd; t += kStep) {
    sw.poll_all(t);
    if ((t - kT0) % (500 * kMs) == 0) {
      ASSERT_TRUE(sw.totals().balanced()) << "at " << (t - kT0) / kMs << " ms";
    }
    if (!first_lossless_drop && sw.lossless_drops() != 0) {
      first_lossless_drop = t;
      ADD_FAILURE() << "first lossless drop at " << (t - kT0) / kUs << " us, queue 3 of h0: "
                    << stats_json(sw)["ports"][0]["queues"][kLossless].dump();
    }
  }
  const nlohmann::json st = stats_json(sw);
  EXPECT_EQ(sw.lossless_drops(), 0u);
  for (std::size_t p = 0; p < sw.num_ports(); ++p) EXPECT_EQ(qdrops_all(sw, p, kLossless), 0u) << "port " << p;
  // PFC did the work: frames sent, every sender's host paused by them.
  const uint64_t frames = pfc_frames_sent(sw);
  EXPECT_GT(frames, 0u);
  for (uint8_t h = 1; h <= 8; ++h) EXPECT_GT(host(sw, h).pfc_received(), 0u) << "h" << int{h};
  EXPECT_EQ(host(sw, 9).pfc_received(), 0u) << "the lossy sender's PG is not lossless";
  // The lossy class on the same egress: dropped at its queue and counted.
  const uint64_t lossy_drops = qdrops_all(sw, 0, kLossyQueue);
  EXPECT_GT(lossy_drops, 0u);
  EXPECT_EQ(lossy_drops, qdrops(sw, 0, kLossyQueue, DropReason::TailDropBytes) +
                             qdrops(sw, 0, kLossyQueue, DropReason::TailDropPackets));
  EXPECT_GT(sw.egress(0).queue(kLossless).deq_packets.get(), 0u);
  EXPECT_GT(sw.egress(0).queue(kLossyQueue).deq_packets.get(), 0u);
  // The bottleneck ran at its line rate: 10 s at 1 Gb/s of 1106-byte wire frames.
  const double delivered = static_cast<double>(host(sw, 0).received_packets());
  EXPECT_NEAR(delivered, 1e9 / 8 / (kFrame + 24) * 10, 1e9 / 8 / (kFrame + 24) * 10 * 0.01);
  EXPECT_EQ(host(sw, 0).icrc_bad(), 0u);
  const SwitchTotals t = sw.totals();
  EXPECT_TRUE(t.balanced());
  uint64_t host_sent = 0;
  for (std::size_t p = 0; p < sw.num_ports(); ++p) host_sent += host(sw, p).sent_packets();
  EXPECT_EQ(host_sent, t.received);
  std::printf("incast 10 s: %lu PFC frames, lossless delivered %lu, lossy drops %lu, peak q3 %lu pkts\n",
              static_cast<unsigned long>(frames),
              static_cast<unsigned long>(sw.egress(0).queue(kLossless).deq_packets.get()),
              static_cast<unsigned long>(lossy_drops),
              static_cast<unsigned long>(sw.egress(0).queue(kLossless).peak_packets.get()));
  RecordProperty("pfc_frames", std::to_string(frames));
  RecordProperty("lossy_drops", std::to_string(lossy_drops));
  sw.shutdown(kEnd);
  EXPECT_TRUE(sw.totals().balanced());
  EXPECT_EQ(sw.lossless_drops(), 0u) << "shutdown drops do not count as lossless drops";
}

// ---------------------------------------------------------------------------------------------
// 2b. The same kind of incast on a worker that loses the CPU: every 20 ms one poll comes 4 ms
// late (a descheduled process on a busy CI box). The hosts make the lost time up, so the
// bottleneck still runs at line rate, but over several polls: a sender learns of XOFF only
// between polls, and 4 ms of 1 Gb/s sent in one poll (500 KB) would overrun any PG's headroom.
TEST(Lossless, StalledWorkerMakesUpTimeWithoutOverrunningHeadroom) {
  Net n;
  n.pg.headroom = std::max<uint64_t>(64u << 10, headroom_min_bytes(1, 5, 9100));
  n.add_host(1);
  for (int i = 1; i <= 4; ++i) n.add_host(1);
  for (uint8_t h = 1; h <= 4; ++h) n.add_flow(h, 0, 1, 0x100 + h);
  Switch sw(n.cfg, kT0);
  constexpr uint64_t kStep = 10 * kUs;
  constexpr uint64_t kStall = 4 * kMs;
  constexpr uint64_t kEnd = kT0 + 2'000 * kMs;
  // Each stall comes at the first poll after the 20 ms mark at which some sender is not
  // paused: a paused one banks nothing (it is not backlogged), so that is the case to test.
  uint64_t stalls = 0, t = kT0, next_stall = kT0 + 20 * kMs;
  while (t < kEnd) {
    sw.poll_all(t);
    ASSERT_EQ(sw.lossless_drops(), 0u) << "after stall " << stalls << ", at " << (t - kT0) / kUs << " us";
    bool some_sending = false;
    for (uint8_t h = 1; h <= 4; ++h) some_sending |= !host(sw, h).paused(kLossless, t);
    if (t >= next_stall && some_sending) {
      t += kStall;
      next_stall += 20 * kMs;
      ++stalls;
    } else {
      t += kStep;
    }
  }
  EXPECT_GE(stalls, 80u);
  EXPECT_GT(pfc_frames_sent(sw), 0u);
  for (uint8_t h = 1; h <= 4; ++h) EXPECT_GT(host(sw, h).pfc_received(), 0u) << "h" << int{h};
  // The stalls cost no throughput: the bottleneck delivered its line rate over the whole run.
  const double expect = 1e9 / 8 / (kFrame + 24) * 2.0;
  EXPECT_NEAR(static_cast<double>(host(sw, 0).received_packets()), expect, expect * 0.02);
  sw.shutdown(kEnd);
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
// 4. PFC watchdog through the switch. h0 storms XOFF on priority 3 while h1 sends lossless
// traffic to it; h2 sends lossy traffic to h0 (another queue of the stormed port); h0 itself
// sends lossless traffic to h3 (a slow port), so h0's ingress PG asks h0 for PAUSE.
struct StormRun {
  uint64_t stall_t = 0, detect_t = 0, restore_t = 0, last_storm_frame_t = 0;
  uint64_t flushed = 0, arrivals_in_storm = 0, wd_drops = 0;
  uint64_t detected = 0, restored = 0;
  uint64_t deq_during_storm = 0;
  uint64_t xoff_to_h0_during_storm = 0, xoff_to_h0_before = 0, xoff_to_h0_after = 0;
  bool asserting_h0_during_storm = false;
  uint64_t lossy_drops = 0, h3_drops_other = 0, lossless_drops_elsewhere = 0;
  bool balanced = false;
};

constexpr uint64_t kDetect = 100 * kMs, kRestore = 100 * kMs, kPoll = 20 * kMs;

StormRun storm_run(uint64_t storm_start, uint64_t storm_len, PfcwdAction action, uint64_t end, bool shutdown_mid = false) {
  Net n;
  n.pg.headroom = 40 * kCells;
  n.add_host(1);    // h0: stormer
  n.add_host(1);    // h1: lossless sender to h0
  n.add_host(1);    // h2: lossy sender to h0
  n.add_host(0.1);  // h3: slow receiver of h0's lossless flow
  n.cfg.mmu.pfcwd = {.enabled = true, .action = action, .detection_ns = kDetect, .restoration_ns = kRestore, .poll_ns = kPoll};
  n.cfg.ports[0].host.storm = {.priority = kLossless, .start_ns = storm_start, .stop_ns = storm_start + storm_len,
                               .quanta = 20'000};  // 10.24 ms at 1 Gb/s, refreshed every 5.12 ms
  n.add_flow(1, 0, 0.2, 0x101);
  n.add_flow(2, 0, 0.05, 0x201, kLossyDscp);
  n.add_flow(0, 3, 0.3, 0x301);
  Switch sw(n.cfg, kT0);
  StormRun r;
  constexpr uint64_t kStep = 100 * kUs;
  uint64_t prev_storm_frames = 0, prev_h1_rx = 0, prev_depth = 0, prev_deq = 0;
  const PfcGenerator& gen0 = sw.egress(0).pfc_gen();
  uint64_t t = kT0;
  for (; t < end; t += kStep) {
    if (shutdown_mid && r.detected && t >= r.detect_t + 30 * kMs) break;
    sw.poll_all(t);
    const EgressPort& e = sw.egress(0);
    const QueueCounters& q = e.queue(kLossless);
    if (!r.stall_t && e.paused(kLossless) && q.depth_packets.get() > 0) r.stall_t = t;
    if (host(sw, 0).storm_frames() > prev_storm_frames) r.last_storm_frame_t = t;
    prev_storm_frames = host(sw, 0).storm_frames();
    const uint64_t h1_rx = sw.rx_packets(1);
    if (!r.detect_t && q.storms_detected.get()) {
      r.detect_t = t;
      // Flushed: what was queued after the previous poll plus what arrived in this one (the
      // watchdog ticks after the poll's arrivals).
      r.flushed = prev_depth + (h1_rx - prev_h1_rx);
      r.arrivals_in_storm = 0;
      r.xoff_to_h0_before = gen0.counters().xoff_sent[kLossless].get();
    } else if (r.detect_t && !r.restore_t) {
      r.arrivals_in_storm += h1_rx - prev_h1_rx;
      r.deq_during_storm += q.deq_packets.get() - prev_deq;
      if (gen0.asserted_published() & (1u << kLossless)) r.asserting_h0_during_storm = true;
      if (q.storms_restored.get()) {
        r.restore_t = t;
        r.xoff_to_h0_during_storm = gen0.counters().xoff_sent[kLossless].get() - r.xoff_to_h0_before;
      }
    }
    prev_h1_rx = h1_rx;
    prev_depth = q.depth_packets.get();
    prev_deq = q.deq_packets.get();
  }
  if (shutdown_mid) sw.shutdown(t);
  const QueueCounters& q = sw.egress(0).queue(kLossless);
  r.detected = q.storms_detected.get();
  r.restored = q.storms_restored.get();
  r.wd_drops = qdrops(sw, 0, kLossless, DropReason::PfcWatchdog);
  r.lossy_drops = qdrops_all(sw, 0, kLossyQueue);
  r.h3_drops_other = qdrops_all(sw, 3, kLossless) - qdrops(sw, 3, kLossless, DropReason::PfcWatchdog);
  r.lossless_drops_elsewhere = qdrops_all(sw, 1, kLossless) + qdrops_all(sw, 2, kLossless);
  r.xoff_to_h0_after = gen0.counters().xoff_sent[kLossless].get();
  r.balanced = sw.totals().balanced();
  return r;
}

TEST(Lossless, WatchdogDetectsAndRestoresWithinOnePollAndDropActionDropsExactly) {
  // Storm starts at different phases of the 20 ms watchdog poll.
  for (uint64_t offset : {3'300 * kUs, 7'900 * kUs, 13'100 * kUs, 17'700 * kUs, 40'000 * kUs}) {
    SCOPED_TRACE(fmt::format("storm at +{} us", offset / kUs));
    const uint64_t start = kT0 + 50 * kMs + offset;
    const StormRun r = storm_run(start, 250 * kMs, PfcwdAction::Drop, start + 600 * kMs);
    ASSERT_NE(r.stall_t, 0u);
    ASSERT_NE(r.detect_t, 0u);
    ASSERT_NE(r.restore_t, 0u);
    EXPECT_EQ(r.stall_t, start) << "h1's packets were waiting when the first XOFF landed";
    EXPECT_GT(r.detect_t - r.stall_t, kDetect);
    EXPECT_LE(r.detect_t - r.stall_t, kDetect + kPoll);
    EXPECT_GT(r.restore_t - r.last_storm_frame_t, kRestore);
    EXPECT_LE(r.restore_t - r.last_storm_frame_t, kRestore + kPoll);
    EXPECT_EQ(r.detected, 1u);
    EXPECT_EQ(r.restored, 1u);
    // Drop: the queue was flushed and every arrival during the storm dropped, counted exactly.
    EXPECT_GT(r.flushed, 0u);
    EXPECT_GT(r.arrivals_in_storm, 0u);
    EXPECT_EQ(r.wd_drops, r.flushed + r.arrivals_in_storm);
    EXPECT_EQ(r.deq_during_storm, 0u);
    // PFC generation for PG 3 of the stormed port stopped for the storm, and came back after.
    EXPECT_GT(r.xoff_to_h0_before, 0u) << "h0's PG was not asserting before the storm: the check below is empty";
    EXPECT_EQ(r.xoff_to_h0_during_storm, 0u);
    EXPECT_FALSE(r.asserting_h0_during_storm);
    EXPECT_GT(r.xoff_to_h0_after, r.xoff_to_h0_before);
    // Other queues and ports lose nothing (h0's own ingress traffic towards h3 is dropped by
    // the watchdog during the storm, by design, and by nothing else).
    EXPECT_EQ(r.lossy_drops, 0u);
    EXPECT_EQ(r.h3_drops_other, 0u);
    EXPECT_EQ(r.lossless_drops_elsewhere, 0u);
    EXPECT_TRUE(r.balanced);
    std::printf("storm +%5.1f ms: detect %.1f ms after stall, restore %.1f ms after last XOFF, %lu flushed + %lu dropped\n",
                offset / 1e6, (r.detect_t - r.stall_t) / 1e6, (r.restore_t - r.last_storm_frame_t) / 1e6,
                static_cast<unsigned long>(r.flushed), static_cast<unsigned long>(r.arrivals_in_storm));
  }
}

TEST(Lossless, WatchdogIgnoresStormShorterThanDetection) {
  const uint64_t start = kT0 + 53 * kMs;
  // 50 ms of XOFF (last frame at ~46 ms, pause runs out ~10 ms later): stalled ~60 ms < 100 ms.
  const StormRun r = storm_run(start, 50 * kMs, PfcwdAction::Drop, start + 400 * kMs);
  EXPECT_NE(r.stall_t, 0u);
  EXPECT_EQ(r.detected, 0u);
  EXPECT_EQ(r.wd_drops, 0u);
  EXPECT_EQ(r.lossy_drops, 0u);
  EXPECT_TRUE(r.balanced);
}

TEST(Lossless, WatchdogForwardIgnoresPauseDuringStorm) {
  const uint64_t start = kT0 + 61 * kMs;
  const StormRun r = storm_run(start, 250 * kMs, PfcwdAction::Forward, start + 600 * kMs);
  ASSERT_NE(r.detect_t, 0u);
  EXPECT_GT(r.detect_t - r.stall_t, kDetect);
  EXPECT_LE(r.detect_t - r.stall_t, kDetect + kPoll);
  EXPECT_EQ(r.detected, 1u);
  EXPECT_EQ(r.restored, 1u);
  EXPECT_GT(r.deq_during_storm, 0u) << "forward: the queue transmits although XOFF keeps coming";
  EXPECT_EQ(r.wd_drops, 0u);
  EXPECT_EQ(r.lossy_drops, 0u);
  EXPECT_EQ(r.h3_drops_other + r.lossless_drops_elsewhere, 0u);
  EXPECT_TRUE(r.balanced);
}

TEST(Lossless, ShutdownDuringStormLeavesNoStaleState) {
  const uint64_t start = kT0 + 50 * kMs;
  const StormRun r = storm_run(start, 10'000 * kMs, PfcwdAction::Drop, start + 2'000 * kMs, true);
  EXPECT_EQ(r.detected, 1u);
  EXPECT_EQ(r.restored, 1u) << "the storm in progress ends with the switch";
  EXPECT_EQ(r.restore_t, 0u) << "it did not end by itself before the shutdown";
  EXPECT_TRUE(r.balanced);
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
