// The lossless class under sustained load through the whole switch, stepped with an injected
// clock: a long 8:1 incast that loses nothing on the lossless class while a lossy class on the
// same port drops, the same on a worker that stalls; the PFC watchdog (detection and restoration
// windows, drop and forward actions, short storms, shutdown mid-storm).
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "tests/unit/switch/lossless_net.h"

namespace rs::test {
namespace {

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
    // Not while an XOFF is on a host's wire: the sender would pause right after the stall.
    bool pause_on_wire = false;
    for (uint8_t h = 1; h <= 4; ++h) pause_on_wire |= host(sw, h).on_wire_to_host() != 0;
    if (t >= next_stall && some_sending && !pause_on_wire) {
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
    // The storm's first XOFF reaches the switch at its last bit: the poll after the storm starts.
    EXPECT_EQ(r.stall_t, start + 100 * kUs) << "h1's packets were waiting when the first XOFF landed";
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

}  // namespace
}  // namespace rs::test
