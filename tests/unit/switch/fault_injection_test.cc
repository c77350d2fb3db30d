// Faults on the wire through the whole switch (dataplane/ports/fault_port.h on emulated hosts),
// stepped with an injected clock: a corrupted IPv4 header is dropped with its named reason, a
// corrupted payload is not the switch's to check (forwarded unchanged, the receiver's ICRC
// check fails), lossy, duplicating and delaying links keep the books, a stuck receiver is
// survived through the PFC watchdog (and is not without it), and nothing leaks.
#include <gtest/gtest.h>
#include <rte_mempool.h>

#include <cstdio>

#include "tests/support/eal_env.h"
#include "tests/unit/switch/lossless_net.h"

namespace rs::test {
namespace {

FaultPort& faults(Switch& sw, std::size_t p) { return dynamic_cast<FaultPort&>(sw.port(p)); }

uint64_t all_drops(const Switch& sw) {
  uint64_t s = 0;
  for (std::size_t r = 1; r < kNumDropReasons; ++r) s += sw.drops(static_cast<DropReason>(r));
  return s;
}

// Steps the switch from kT0 to `end` in `step`s, then shuts it down; the pool must be whole.
void run(Switch& sw, uint64_t end, uint64_t step = kUs) {
  for (uint64_t t = kT0; t < end; t += step) sw.poll_all(t);
  sw.shutdown(end);
  EXPECT_TRUE(sw.totals().balanced());
  EXPECT_EQ(rte_mempool_in_use_count(sw.pool()), 0u) << "an mbuf leaked";
}

// h0 -> h1 at 2 Gb/s for 4 ms, the switch drained by 6 ms.
Net two_hosts() {
  Net n;
  n.add_host(10);
  n.add_host(10);
  n.add_flow(0, 1, 2, 0x101).stop_ns = kT0 + 4 * kMs;
  return n;
}

TEST(FaultInjection, CorruptedIpv4HeaderIsDroppedAsBadChecksum) {
  Net n = two_hosts();
  n.cfg.ports[0].faults = {.direction = FaultSpec::kRx, .corrupt = 0.2, .corrupt_offset = 14 + 8};  // the TTL
  Switch sw(n.cfg, kT0);
  run(sw, kT0 + 6 * kMs);
  const uint64_t corrupted = faults(sw, 0).counters(0).corrupted.get();
  const uint64_t sent = host(sw, 0).sent_packets();
  EXPECT_GT(corrupted, sent / 10);
  EXPECT_EQ(sw.drops(DropReason::BadIpv4Checksum), corrupted);
  EXPECT_EQ(all_drops(sw), corrupted) << "no other drop";
  EXPECT_EQ(host(sw, 1).received_packets(), sent - corrupted);
  EXPECT_EQ(host(sw, 1).icrc_bad(), 0u);
}

TEST(FaultInjection, CorruptedPayloadIsForwardedUnchangedAndFailsTheIcrc) {
  Net n = two_hosts();
  n.cfg.ports[0].faults = {.direction = FaultSpec::kRx, .corrupt = 0.2, .corrupt_offset = 14 + 20 + 8 + 12 + 100};
  Switch sw(n.cfg, kT0);
  run(sw, kT0 + 6 * kMs);
  const uint64_t corrupted = faults(sw, 0).counters(0).corrupted.get();
  EXPECT_GT(corrupted, host(sw, 0).sent_packets() / 10);
  EXPECT_EQ(all_drops(sw), 0u) << "the ICRC is the receiver's to check";
  EXPECT_EQ(host(sw, 1).received_packets(), host(sw, 0).sent_packets());
  EXPECT_EQ(host(sw, 1).icrc_bad(), corrupted);
}

TEST(FaultInjection, AnyCorruptByteIsDroppedWithAReasonOrDelivered) {
  Net n = two_hosts();
  n.cfg.ports[0].faults = {.direction = FaultSpec::kRx, .corrupt = 0.5};
  Switch sw(n.cfg, kT0);
  run(sw, kT0 + 6 * kMs);
  const uint64_t sent = host(sw, 0).sent_packets();
  EXPECT_GT(all_drops(sw), 0u);
  // Every frame is accounted for: dropped under a named reason (a corrupted destination MAC
  // or EtherType included), or delivered (with a bad ICRC when its transport was hit).
  EXPECT_EQ(host(sw, 1).received_packets() + all_drops(sw), sent);
  EXPECT_GT(host(sw, 1).icrc_bad(), 0u);
}

TEST(FaultInjection, LossyDuplicatingJitteryLinksKeepTheBooks) {
  Net n = two_hosts();
  const FaultSpec f{.drop = 0.02, .duplicate = 0.02, .delay_ns = 2 * kUs, .jitter_ns = 5 * kUs};
  n.cfg.ports[0].faults = f;
  n.cfg.ports[1].faults = f;
  Switch sw(n.cfg, kT0);
  run(sw, kT0 + 6 * kMs);
  const FaultPort::Counters& in = faults(sw, 0).counters(0);
  const FaultPort::Counters& out = faults(sw, 1).counters(1);
  EXPECT_GT(in.dropped.get(), 0u);
  EXPECT_GT(in.duplicated.get(), 0u);
  EXPECT_GT(out.dropped.get(), 0u);
  EXPECT_GT(out.duplicated.get(), 0u);
  EXPECT_EQ(in.overflow.get() + out.overflow.get(), 0u);
  const uint64_t into_switch = host(sw, 0).sent_packets() - in.dropped.get() + in.duplicated.get();
  EXPECT_EQ(sw.rx_packets(0), into_switch);
  EXPECT_EQ(all_drops(sw), 0u);
  EXPECT_EQ(host(sw, 1).received_packets(), sw.tx_packets(1) - out.dropped.get() + out.duplicated.get());
  RxFlowStats s;
  ASSERT_TRUE(host(sw, 1).rx_tracker().find(host_ip(0), 0x101, s));
  EXPECT_GT(s.out_of_order, 0u) << "jitter reorders";
  EXPECT_GT(s.missing, 0u) << "drops leave PSN gaps";
}

// h0 is a receiver that hangs (from 5 ms to 60 ms): it takes nothing and sends XOFF on the
// lossless priority. h1 sends lossless traffic to h0 and to h2 from the same PG. Without the
// watchdog, h0's queue holds h1's PG over XOFF and h1 stops sending to h2 too (the innocent
// flow); with it, the stuck queue is dropped and h1 -> h2 runs on.
struct StuckRun {
  uint64_t innocent_in_storm = 0, expected_in_storm = 0;
  uint64_t detected = 0, restored = 0, wd_drops = 0, h0_after = 0, xoff_from_h0 = 0;
};

StuckRun stuck_run(bool watchdog) {
  Net n;
  for (int h = 0; h < 3; ++h) n.add_host(1);
  constexpr uint64_t kStuck = kT0 + 5 * kMs, kFree = kT0 + 60 * kMs, kEnd = kT0 + 100 * kMs;
  n.cfg.ports[0].faults.stuck_start_ns = kStuck;
  n.cfg.ports[0].faults.stuck_stop_ns = kFree;
  n.cfg.ports[0].faults.stuck_pfc = 1u << kLossless;
  n.cfg.ports[0].faults.stuck_quanta = 20'000;
  n.cfg.mmu.pfcwd = {.enabled = watchdog, .action = PfcwdAction::Drop, .detection_ns = 10 * kMs, .restoration_ns = 10 * kMs,
                     .poll_ns = 2 * kMs};
  n.add_flow(1, 0, 0.3, 0x101);
  n.add_flow(1, 2, 0.3, 0x102);
  Switch sw(n.cfg, kT0);
  StuckRun r;
  // The innocent flow is measured from a watchdog poll after detection to the end of the hang.
  constexpr uint64_t kFrom = kStuck + 20 * kMs;
  uint64_t at_from = 0, at_free = 0, h0_at_free = 0;
  for (uint64_t t = kT0; t < kEnd; t += 10 * kUs) {
    sw.poll_all(t);
    RxFlowStats s{};
    host(sw, 2).rx_tracker().find(host_ip(1), 0x102, s);
    if (t < kFrom) at_from = s.packets;
    if (t < kFree) {
      at_free = s.packets;
      h0_at_free = host(sw, 0).received_packets();
    }
  }
  sw.shutdown(kEnd);
  EXPECT_TRUE(sw.totals().balanced());
  EXPECT_EQ(rte_mempool_in_use_count(sw.pool()), 0u) << "an mbuf leaked";
  r.innocent_in_storm = at_free - at_from;
  r.expected_in_storm = static_cast<uint64_t>(0.3e9 / 8 / wire_bytes(kFrame) * ((kFree - kFrom) / 1e9));
  const QueueCounters& q = sw.egress(0).queue(kLossless);
  r.detected = q.storms_detected.get();
  r.restored = q.storms_restored.get();
  r.wd_drops = qdrops(sw, 0, kLossless, DropReason::PfcWatchdog);
  r.h0_after = host(sw, 0).received_packets() - h0_at_free;
  r.xoff_from_h0 = faults(sw, 0).stuck_pfc_frames();
  std::printf("watchdog %s: innocent flow %lu of %lu packets during the hang, %lu watchdog drops\n", watchdog ? "on" : "off",
              static_cast<unsigned long>(r.innocent_in_storm), static_cast<unsigned long>(r.expected_in_storm),
              static_cast<unsigned long>(r.wd_drops));
  return r;
}

TEST(FaultInjection, StuckReceiverIsSurvivedThroughThePfcWatchdog) {
  const StuckRun on = stuck_run(true);
  EXPECT_GT(on.xoff_from_h0, 0u);
  EXPECT_EQ(on.detected, 1u);
  EXPECT_EQ(on.restored, 1u);
  EXPECT_GT(on.wd_drops, 0u);
  EXPECT_GT(on.innocent_in_storm, on.expected_in_storm * 8 / 10) << "the innocent flow runs through the hang";
  EXPECT_GT(on.h0_after, 0u) << "h0 receives again once it recovers";
  const StuckRun off = stuck_run(false);
  EXPECT_EQ(off.detected, 0u);
  EXPECT_LT(off.innocent_in_storm, off.expected_in_storm / 10) << "without the watchdog the hang spreads to h1's other flow";
  EXPECT_GT(off.h0_after, 0u);
}

}  // namespace
}  // namespace rs::test
