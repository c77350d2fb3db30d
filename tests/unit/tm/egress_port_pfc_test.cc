// EgressPort over a fake port with a real SharedBuffer: PFC reception (only the paused priority
// stops, pause length = quanta x 512 / rate, XON resumes at once, non-lossless priorities and an
// empty vector do nothing, 802.3x PAUSE stops every queue), the PFC watchdog against a PAUSE
// storm on every priority at once, and the WRED/ECN marking rate at held queue depths.
#include <gtest/gtest.h>

#include <cmath>

#include <fmt/core.h>

#include "dataplane/routing/routing_policy.h"
#include "tests/support/egress_fixture.h"

namespace rs::test {
namespace {

constexpr uint16_t kPortId = 3;
constexpr uint16_t kInPort = 1;  // where the test's packets claim to come from
constexpr uint16_t kPorts = 4;

PauseFrame pfc(uint8_t enable, uint16_t quanta) {
  PauseFrame f;
  f.pfc = true;
  f.enable = enable;
  for (int p = 0; p < 8; ++p)
    if (enable & (1u << p)) f.quanta[p] = quanta;
  return f;
}
PauseFrame pause_8023x(uint16_t quanta) {
  PauseFrame f;
  f.pfc = false;
  f.enable = 0xff;
  f.quanta.fill(quanta);
  return f;
}

// The watchdog on, with the drop action and these times.
PfcwdConfig dropping_watchdog(uint64_t detection_ns, uint64_t restoration_ns, uint64_t poll_ns) {
  return {.enabled = true, .action = PfcwdAction::Drop, .detection_ns = detection_ns, .restoration_ns = restoration_ns,
          .poll_ns = poll_ns};
}

class EgressPfcTest : public EgressFixture {
 protected:
  // Priorities 3 and 4 lossless (SONiC's RDMA classes) on every port; generous PG limits so
  // admission never refuses here.
  void make(double gbps = 10, PfcwdConfig wd = {}, PortLosslessConfig lc = {}) {
    MmuConfig mc;
    mc.pfc_enable = 0x18;
    mc.pool.size = uint64_t{256} << 20;
    mc.pfcwd = wd;
    for (int pg : {3, 4}) lc.pg[pg] = {.lossless = true, .xoff = 8u << 20, .xon = 4u << 20, .headroom = 1u << 20};
    EgressConfig ec;
    ec.speed_gbps = gbps;
    for (auto& l : ec.limits) l = {.packets = 4096, .bytes = 16u << 20};
    make_over_buffer(kPortId, mc, kPorts, lc, ec);
  }

  // A RoCE-shaped IPv4 packet in queue = tc = `q`, from kInPort.
  rte_mbuf* pkt(uint8_t q, uint32_t payload = 940, uint8_t ecn = 0) {
    return roce_to_queue(kInPort, kPortId, q, /*dscp=*/26, ecn, payload);
  }
  void enqueue(uint8_t q, int n) {
    for (int i = 0; i < n; ++i) port->enqueue(pkt(q), ctx);
    port->publish_counters();
  }
  void transmit_at(uint64_t now) {
    ctx.now_ns = now;
    port->transmit(ctx);
  }
};

TEST_F(EgressPfcTest, PfcPausesOnlyThatPriorityForQuantaTimes512OverRate) {
  for (double gbps : {10.0, 25.0, 100.0}) {
    SCOPED_TRACE(gbps);
    fake.sent.clear();
    make(gbps);
    for (uint8_t q : {1, 3, 4}) enqueue(q, 8);
    const uint16_t quanta = 1000;
    const uint64_t t0 = 10 * kUs;
    port->on_pause_frame(pfc(1u << 3, quanta), t0);
    EXPECT_TRUE(port->paused(3));
    EXPECT_FALSE(port->paused(1));
    EXPECT_FALSE(port->paused(4));
    EXPECT_EQ(port->pfc_rx().xoff[3].get(), 1u);
    const double expect_ns = quanta * 512.0 / gbps;
    constexpr uint64_t kStep = 20;  // ns: well under 1 % of the shortest pause here (5.1 us)
    for (uint64_t t = t0; t < t0 + static_cast<uint64_t>(2 * expect_ns) + 20 * kUs; t += kStep) transmit_at(t);
    // Queues 1 and 4 were never held: each sent everything, and before queue 3 restarted.
    EXPECT_EQ(fake.count_of(1), 8u);
    EXPECT_EQ(fake.count_of(4), 8u);
    EXPECT_EQ(fake.count_of(3), 8u);
    EXPECT_LT(fake.first_of(1), fake.first_of(3));
    EXPECT_LT(fake.first_of(4), fake.first_of(3));
    const double held = static_cast<double>(fake.first_of(3) - t0);
    EXPECT_NEAR(held, expect_ns, expect_ns * 0.01) << "first queue-3 packet " << held << " ns after PAUSE";
    EXPECT_NEAR(static_cast<double>(port->queue(3).paused_ns.get()), expect_ns, expect_ns * 0.01);
    EXPECT_EQ(port->queue(1).paused_ns.get(), 0u);
    RecordProperty(fmt::format("pause_ns_at_{}g", gbps), std::to_string(held));
    port->flush(ctx, DropReason::Shutdown);
  }
}

TEST_F(EgressPfcTest, XonResumesAtOnceAndNewFrameRestartsTimer) {
  make(10);
  enqueue(3, 4);
  transmit_at(0);
  fake.sent.clear();
  enqueue(3, 4);
  port->on_pause_frame(pfc(1u << 3, 0xffff), 1 * kUs);
  for (uint64_t t = 1 * kUs; t < 50 * kUs; t += kUs) transmit_at(t);
  EXPECT_EQ(fake.count_of(3), 0u);
  // A shorter XOFF replaces the long timer (802.1Qbb: a new frame restarts it).
  port->on_pause_frame(pfc(1u << 3, 100), 50 * kUs);  // 5.12 us at 10 Gb/s
  transmit_at(54 * kUs);
  EXPECT_EQ(fake.count_of(3), 0u);
  transmit_at(55 * kUs + 200);
  EXPECT_GT(fake.count_of(3), 0u) << "the shorter pause did not replace the longer one";
  // XON (time 0) resumes immediately, counted as XON, and never is a pause.
  enqueue(3, 4);
  port->on_pause_frame(pfc(1u << 3, 0xffff), 60 * kUs);
  transmit_at(61 * kUs);
  const std::size_t before = fake.count_of(3);
  port->on_pause_frame(pfc(1u << 3, 0), 62 * kUs);
  EXPECT_FALSE(port->paused(3));
  transmit_at(62 * kUs);
  EXPECT_GT(fake.count_of(3), before);
  EXPECT_EQ(port->pfc_rx().xon[3].get(), 1u);
  EXPECT_EQ(port->pfc_rx().xoff[3].get(), 3u);
  // Pause time: 1..55 us (the second frame's 5.12 us ran out at 55.12), then 60..62 us.
  EXPECT_NEAR(static_cast<double>(port->queue(3).paused_ns.get()), 54'120.0 + 2'000.0, 1.0);
}

TEST_F(EgressPfcTest, NonLosslessPriorityAndEmptyVectorDoNothing) {
  make(10);
  for (uint8_t q = 0; q < 8; ++q) enqueue(q, 2);
  // Priority 1 is not in pfc_enable (0x18): ignored and counted so.
  port->on_pause_frame(pfc(1u << 1, 0xffff), 0);
  // An empty class-enable vector carries no request, whatever the times say.
  PauseFrame empty = pfc(0, 0);
  empty.quanta.fill(0xffff);
  port->on_pause_frame(empty, 0);
  for (int q = 0; q < 8; ++q) EXPECT_FALSE(port->paused(q)) << q;
  EXPECT_EQ(port->pfc_rx().ignored.get(), 1u);
  for (int p = 0; p < 8; ++p) EXPECT_EQ(port->pfc_rx().xoff[p].get() + port->pfc_rx().xon[p].get(), 0u) << p;
  for (uint64_t t = 0; t < 20 * kUs; t += kUs) transmit_at(t);
  for (uint8_t q = 0; q < 8; ++q) EXPECT_EQ(fake.count_of(q), 2u) << q;
  for (int q = 0; q < 8; ++q) EXPECT_EQ(port->queue(q).paused_ns.get(), 0u) << q;
}

TEST_F(EgressPfcTest, Pause8023xStopsEveryQueue) {
  make(10);
  for (uint8_t q = 0; q < 8; ++q) enqueue(q, 2);
  port->on_pause_frame(pause_8023x(1000), 0);  // 51.2 us
  for (int q = 0; q < 8; ++q) EXPECT_TRUE(port->paused(q)) << q;
  EXPECT_EQ(port->pfc_rx().pause.get(), 1u);
  for (uint64_t t = 0; t < 51 * kUs; t += 100) transmit_at(t);
  EXPECT_TRUE(fake.sent.empty());
  for (uint64_t t = 51 * kUs; t < 80 * kUs; t += 100) transmit_at(t);
  for (uint8_t q = 0; q < 8; ++q) EXPECT_EQ(fake.count_of(q), 2u) << q;
}

// Every priority of the port stormed at once (802.3x PAUSE refreshed for ever): the watchdog
// finds both lossless queues stuck in the same poll window, flushes both (drop action), drops
// their arrivals, and restores both once the PAUSEs stop. The lossy queue is not watched.
TEST_F(EgressPfcTest, WatchdogPauseStormOnAllPrioritiesDropsBothLosslessQueues) {
  const PfcwdConfig wd = dropping_watchdog(100 * kMs, 100 * kMs, 20 * kMs);
  make(10, wd);
  const uint64_t t_storm = 7 * kMs;  // the storm starts between two polls
  const uint64_t t_stop = 400 * kMs;
  uint64_t next_tick = wd.poll_ns;
  uint64_t det[8] = {}, res[8] = {};
  uint64_t arrivals_in_storm[8] = {}, flushed[8] = {};
  for (uint64_t t = 0; t < 800 * kMs; t += 100 * kUs) {
    ctx.now_ns = t;
    if (t == t_storm) {  // packets wait in 3, 4 and 1 when the first PAUSE lands
      enqueue(3, 5);
      enqueue(4, 6);
      enqueue(1, 2);
    }
    if (t >= t_storm && t < t_stop && (t - t_storm) % kMs == 0) port->on_pause_frame(pause_8023x(0xffff), t);
    // Lossless arrivals every 5 ms, to a queue that is paused or being dropped.
    if (t > t_storm && t % (5 * kMs) == 0) {
      for (uint8_t q : {3, 4}) {
        port->enqueue(pkt(q), ctx);
        if (port->in_storm(q)) ++arrivals_in_storm[q];
      }
    }
    transmit_at(t);
    if (t >= next_tick) {
      uint64_t depth[8];
      for (int q = 0; q < 8; ++q) depth[q] = port->queue(q).depth_packets.get();
      port->watchdog_tick(ctx);
      for (int q : {3, 4})
        if (!det[q] && port->queue(q).storms_detected.get()) flushed[q] = depth[q];
      next_tick += wd.poll_ns;
      for (int q : {3, 4}) {
        if (!det[q] && port->queue(q).storms_detected.get()) det[q] = t;
        if (!res[q] && port->queue(q).storms_restored.get()) res[q] = t;
      }
    }
  }
  // Queues 3 and 4 held packets when the first PAUSE landed at t_storm.
  for (int q : {3, 4}) {
    SCOPED_TRACE(q);
    ASSERT_NE(det[q], 0u);
    EXPECT_GT(det[q] - t_storm, wd.detection_ns);
    EXPECT_LE(det[q] - t_storm, wd.detection_ns + wd.poll_ns);
    // The last PAUSE arrived at t_stop - 1 ms.
    ASSERT_NE(res[q], 0u);
    const uint64_t last_pause = t_stop - kMs;
    EXPECT_GT(res[q] - last_pause, wd.restoration_ns);
    EXPECT_LE(res[q] - last_pause, wd.restoration_ns + wd.poll_ns);
    EXPECT_EQ(port->queue(q).storms_detected.get(), 1u);
    EXPECT_EQ(port->queue(q).storms_restored.get(), 1u);
  }
  EXPECT_EQ(det[3], det[4]);
  // Drop action: what was queued (5 + 6 plus arrivals before detection) and what arrived during
  // the storm are the watchdog's drops, and nothing else dropped.
  for (int q : {3, 4}) {
    EXPECT_GE(flushed[q], q == 3 ? 5u : 6u);
    EXPECT_EQ(queue_drops(q, DropReason::PfcWatchdog), flushed[q] + arrivals_in_storm[q]) << q;
    uint64_t other = 0;
    for (std::size_t r = 1; r < kNumDropReasons; ++r)
      if (r != static_cast<std::size_t>(DropReason::PfcWatchdog)) other += port->queue(q).drops[r].get();
    EXPECT_EQ(other, 0u) << q;
  }
  EXPECT_GT(arrivals_in_storm[3], 50u);
  // Queue 1 (lossy) was paused by the 802.3x PAUSE too but is not the watchdog's: no drops.
  for (std::size_t r = 1; r < kNumDropReasons; ++r) EXPECT_EQ(port->queue(1).drops[r].get(), 0u) << r;
  EXPECT_EQ(port->queue(1).deq_packets.get(), 2u);
  // After restoration, new arrivals flow again.
  EXPECT_FALSE(port->in_storm(3));
  EXPECT_GT(port->queue(3).deq_packets.get(), 0u);
  RecordProperty("detect_ms", std::to_string((det[3] - t_storm) / kMs));
  RecordProperty("restore_ms", std::to_string((res[3] - (t_stop - kMs)) / kMs));
}

// Reconfiguring the watchdog in the middle of a storm (or stopping it) must not leave stale
// storm state: the storm ends and is counted restored, the queue takes packets again, the
// port's PFC generation for that PG is released, and the new settings apply from then on.
TEST_F(EgressPfcTest, WatchdogReconfiguredDuringStormLeavesNoStaleState) {
  const PfcwdConfig wd = dropping_watchdog(50 * kMs, 50 * kMs, 10 * kMs);
  make(10, wd);
  ctx.now_ns = 0;
  enqueue(3, 4);
  uint64_t t = 0;
  for (; t <= 100 * kMs && !port->in_storm(3); t += kMs) {
    ctx.now_ns = t;
    port->on_pause_frame(pfc(0x08, 0xffff), t);
    transmit_at(t);
    if (t % wd.poll_ns == 0) port->watchdog_tick(ctx);
  }
  ASSERT_TRUE(port->in_storm(3));
  EXPECT_EQ(queue_drops(3, DropReason::PfcWatchdog), 4u) << "the stuck queue was flushed";
  EXPECT_EQ(sb->wd_dropping(kPortId) & 0x08, 0x08) << "the port's PG 3 ingress is being dropped";
  port->enqueue(pkt(3), ctx);
  EXPECT_EQ(queue_drops(3, DropReason::PfcWatchdog), 5u) << "arrivals during the storm are dropped";

  PfcwdConfig slower = wd;
  slower.detection_ns = 400 * kMs;
  ctx.now_ns = t;
  port->set_pfcwd(slower, ctx);
  port->publish_counters();
  EXPECT_FALSE(port->in_storm(3));
  EXPECT_EQ(port->queue(3).storms_detected.get(), 1u);
  EXPECT_EQ(port->queue(3).storms_restored.get(), 1u);
  EXPECT_EQ(sb->wd_dropping(kPortId), 0) << "no stale ingress drop after reconfiguration";
  EXPECT_EQ(port->pfcwd().detection_ns, 400 * kMs);
  port->enqueue(pkt(3), ctx);
  port->publish_counters();
  EXPECT_EQ(queue_drops(3, DropReason::PfcWatchdog), 5u) << "the queue takes packets again";
  EXPECT_EQ(port->queue(3).depth_packets.get(), 1u);
  // PAUSE keeps coming: under the new 400 ms detection time, 100 ms more is not a storm.
  for (uint64_t u = t; u <= t + 100 * kMs; u += kMs) {
    ctx.now_ns = u;
    port->on_pause_frame(pfc(0x08, 0xffff), u);
    transmit_at(u);
    if (u % wd.poll_ns == 0) port->watchdog_tick(ctx);
  }
  EXPECT_FALSE(port->in_storm(3));
  EXPECT_EQ(port->queue(3).storms_detected.get(), 1u);
}

// DCQCN's law at a held depth: the queue is filled with Not-ECT packets (which a lossless
// queue neither marks nor drops) to depth D, then one ECT packet arrives and is marked with
// probability p(D). Repeated N times per depth, the mark count must lie in the 99 % binomial
// interval of the configured curve.
TEST_F(EgressPfcTest, WredMarkingRateFollowsConfiguredCurve) {
  PortLosslessConfig lc;
  lc.wred[3] = {.enabled = true, .wred_drop = false, .ecn_mark = true, .kmin = 10'000, .kmax = 60'000, .pmax_percent = 20};
  make(10, {}, lc);
  port->on_pause_frame(pfc(1u << 3, 0xffff), 0);  // held: nothing leaves queue 3
  constexpr uint32_t kLen = 998;  // payload 940: Eth + IPv4 + UDP + BTH + payload + ICRC
  constexpr int kTrials = 3000;
  const WredProfile& w = lc.wred[3];
  // Depths by filler count: below Kmin, three points on the slope, at and above Kmax.
  for (int fill : {5, 20, 35, 55, 61, 70}) {
    const uint64_t depth = static_cast<uint64_t>(fill) * kLen;
    const double p = depth < w.kmin   ? 0.0
                     : depth >= w.kmax ? 1.0
                                       : static_cast<double>(depth - w.kmin) / static_cast<double>(w.kmax - w.kmin) *
                                             w.pmax_percent / 100.0;
    struct {
      uint64_t depth;
      double p;
    } pt{depth, p};
    uint64_t marks = 0;
    for (int i = 0; i < kTrials; ++i) {
      for (int k = 0; k < fill; ++k) port->enqueue(pkt(3, 940, 0), ctx);
      const uint64_t before = port->queue(3).ecn_marked.get();
      rte_mbuf* probe = pkt(3, 940, 2);
      EXPECT_EQ(probe->pkt_len, kLen);
      port->enqueue(probe, ctx);
      port->publish_counters();
      marks += port->queue(3).ecn_marked.get() - before;
      // The marked packet is CE with a still-valid IPv4 checksum (incremental update).
      if (port->queue(3).ecn_marked.get() != before) {
        const auto bytes = mbuf_bytes(probe);
        EXPECT_EQ(bytes[15] & 3, 3);
        EXPECT_TRUE(ipv4_checksum_ok(bytes));
      }
      port->flush(ctx, DropReason::Shutdown);
    }
    const double n = kTrials, mean = n * pt.p, sd = std::sqrt(n * pt.p * (1 - pt.p));
    // 99 % two-sided normal approximation of the binomial; exact at p = 0 and p = 1.
    EXPECT_NEAR(static_cast<double>(marks), mean, 2.576 * sd + 1e-9) << "depth " << pt.depth;
    RecordProperty(fmt::format("marks_at_{}", pt.depth), fmt::format("{}/{}", marks, kTrials));
    std::printf("depth %6lu: %4lu marks of %d (expected %.0f +- %.1f)\n", static_cast<unsigned long>(pt.depth),
                static_cast<unsigned long>(marks), kTrials, mean, 2.576 * sd);
  }
  EXPECT_EQ(queue_drops(3, DropReason::WredDrop), 0u) << "a lossless queue never drops by WRED";
}

}  // namespace
}  // namespace rs::test
