// EgressPort over a fake port: per-queue limits and their named drops, depth and peak
// counters, strict-before-DWRR service, the shaper's link rate on the injected clock, a TX
// ring that accepts fewer than offered, the shutdown flush, and the packet books balancing.
#include "dataplane/tm/queue/egress_port.h"

#include <fmt/core.h>
#include <gtest/gtest.h>

#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "dataplane/routing/routing_policy.h"
#include "tests/support/egress_fixture.h"
#include "tests/support/seeded_rng.h"

namespace rs::test {
namespace {

constexpr uint16_t kPortId = 3;

// The scheduler alone: each port gets its private default buffer (no SharedBuffer here).
class EgressPortTest : public EgressFixture {
 protected:
  void make(const EgressConfig& cfg, uint64_t now_ns = 0) {
    ctx.now_ns = now_ns;
    port = std::make_unique<EgressPort>(kPortId, &fake, cfg, now_ns);
  }

  rte_mbuf* pkt(uint32_t len, uint8_t queue) {
    rte_mbuf* m = rte_pktmbuf_alloc(test_pool());
    EXPECT_NE(m, nullptr);
    if (!m) return nullptr;
    char* p = rte_pktmbuf_append(m, static_cast<uint16_t>(len));
    EXPECT_NE(p, nullptr);
    std::memset(p, 0, len);
    meta(m) = PacketMeta{};
    meta(m).queue = queue;
    meta(m).out_port = kPortId;
    return m;
  }
  // The owner publishes queue counters once per transmit(); here, after each batch.
  void enqueue(uint32_t len, uint8_t queue, int n = 1) {
    for (int i = 0; i < n; ++i) {
      port->enqueue(pkt(len, queue), ctx);
      ++in;
    }
    port->publish_counters();
  }
  uint16_t transmit_at(uint64_t now_ns) {
    ctx.now_ns = now_ns;
    return port->transmit(ctx);
  }

  uint64_t port_drops(DropReason r) const { return counters->port_drops[kPortId][static_cast<std::size_t>(r)].get(); }
  uint64_t all_port_drops() const {
    uint64_t s = 0;
    for (std::size_t r = 0; r < kNumDropReasons; ++r) s += counters->port_drops[kPortId][r].get();
    return s;
  }
  uint64_t tx_pkts() const { return counters->port_tx_pkts[kPortId].get(); }
  // The conservation law of the traffic manager: in = sent + queued + dropped.
  void expect_balanced(const char* where) {
    EXPECT_EQ(in, tx_pkts() + port->queued_packets() + all_port_drops()) << where;
    EXPECT_EQ(tx_pkts(), fake.sent.size()) << where;
  }

  PortLoad load;
  uint64_t in = 0;
};

TEST_F(EgressPortTest, PacketLimitTailDropsPerQueue) {
  EgressConfig cfg;
  cfg.limits[2].packets = 10;
  make(cfg);
  enqueue(100, 2, 15);
  enqueue(100, 5, 15);  // queue 5 keeps the default 1024 limit: unaffected by queue 2
  EXPECT_EQ(port->queue(2).depth_packets.get(), 10u);
  EXPECT_EQ(port->queue(2).enq_packets.get(), 10u);
  EXPECT_EQ(queue_drops(2, DropReason::TailDropPackets), 5u);
  EXPECT_EQ(queue_drops(2, DropReason::TailDropBytes), 0u);
  EXPECT_EQ(port->queue(5).depth_packets.get(), 15u);
  EXPECT_EQ(queue_drops(5, DropReason::TailDropPackets), 0u);
  // The same drops appear in the worker's per-port counters, charged to the egress port.
  EXPECT_EQ(port_drops(DropReason::TailDropPackets), 5u);
  EXPECT_EQ(counters->port_drops[0][static_cast<std::size_t>(DropReason::TailDropPackets)].get(), 0u);
  expect_balanced("after enqueue");
}

TEST_F(EgressPortTest, ByteLimitTailDropsPerQueue) {
  EgressConfig cfg;
  cfg.limits[4].bytes = 5'000;
  make(cfg);
  enqueue(1'000, 4, 5);  // exactly at the limit: all five fit
  EXPECT_EQ(queue_drops(4, DropReason::TailDropBytes), 0u);
  enqueue(1'000, 4, 2);
  enqueue(64, 4, 1);  // even a small one: the queue is full to the byte
  EXPECT_EQ(port->queue(4).depth_packets.get(), 5u);
  EXPECT_EQ(port->queue(4).depth_bytes.get(), 5'000u);
  EXPECT_EQ(queue_drops(4, DropReason::TailDropBytes), 3u);
  EXPECT_EQ(queue_drops(4, DropReason::TailDropPackets), 0u);
  EXPECT_EQ(port_drops(DropReason::TailDropBytes), 3u);
  expect_balanced("after enqueue");
}

TEST_F(EgressPortTest, ByteLimitAllowsSmallPacketThatFits) {
  EgressConfig cfg;
  cfg.limits[0].bytes = 1'100;
  make(cfg);
  enqueue(1'000, 0);
  enqueue(200, 0);  // 1200 > 1100: dropped
  enqueue(100, 0);  // 1100: fits exactly
  EXPECT_EQ(port->queue(0).depth_packets.get(), 2u);
  EXPECT_EQ(queue_drops(0, DropReason::TailDropBytes), 1u);
}

TEST_F(EgressPortTest, DepthAndPeakCounters) {
  EgressConfig cfg;
  cfg.speed_gbps = 10;
  make(cfg);
  port->set_load_view(&load);  // a fixture member: TearDown's flush still writes to it
  enqueue(500, 1, 20);
  enqueue(300, 6, 4);
  EXPECT_EQ(port->queue(1).depth_packets.get(), 20u);
  EXPECT_EQ(port->queue(1).depth_bytes.get(), 10'000u);
  EXPECT_EQ(port->queue(1).peak_packets.get(), 20u);
  EXPECT_EQ(port->queue(1).peak_bytes.get(), 10'000u);
  EXPECT_EQ(port->queued_packets(), 24u);
  // Adaptive routing policies read the port's total occupancy.
  EXPECT_EQ(load.queued_bytes[kPortId].get(), 11'200u);

  // 1 us at 10 Gb/s is 1250 bytes: a few packets leave; depth falls, peak stays.
  const uint16_t sent = transmit_at(1'000);
  EXPECT_GT(sent, 0u);
  EXPECT_LT(sent, 24u);
  EXPECT_EQ(port->queued_packets(), 24u - sent);
  uint64_t deq = 0;
  for (int q = 0; q < 8; ++q) deq += port->queue(q).deq_packets.get();
  EXPECT_EQ(deq, sent);
  EXPECT_EQ(port->queue(1).peak_packets.get(), 20u);
  EXPECT_EQ(port->queue(1).peak_bytes.get(), 10'000u);
  uint64_t depth_bytes = 0;
  for (int q = 0; q < 8; ++q) depth_bytes += port->queue(q).depth_bytes.get();
  EXPECT_EQ(load.queued_bytes[kPortId].get(), depth_bytes);

  // Drained completely: depth 0, peak still remembers.
  for (uint64_t t = 2'000; port->queued_packets() > 0 && t < 1'000'000; t += 1'000) transmit_at(t);
  EXPECT_EQ(port->queue(1).depth_packets.get(), 0u);
  EXPECT_EQ(port->queue(1).depth_bytes.get(), 0u);
  EXPECT_EQ(port->queue(1).peak_packets.get(), 20u);
  EXPECT_EQ(port->queue(1).deq_bytes.get(), 10'000u);
  EXPECT_EQ(load.queued_bytes[kPortId].get(), 0u);
  expect_balanced("drained");
}

TEST_F(EgressPortTest, StrictQueuesGoFirstThenDwrr) {
  EgressConfig cfg;
  cfg.speed_gbps = 100;
  cfg.sched[6] = QueueSched::Strict;
  cfg.sched[7] = QueueSched::Strict;
  make(cfg);
  enqueue(200, 1, 6);
  enqueue(200, 3, 6);
  enqueue(200, 6, 5);
  enqueue(200, 7, 5);
  // Enough time for everything (22 x 224 wire bytes is 0.4 us at 100 Gb/s).
  transmit_at(10'000);
  ASSERT_EQ(fake.sent.size(), 22u);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(fake.sent[i].queue, 7) << "position " << i;
  for (int i = 5; i < 10; ++i) EXPECT_EQ(fake.sent[i].queue, 6) << "position " << i;
  int q1 = 0, q3 = 0;
  for (std::size_t i = 10; i < 22; ++i) {
    EXPECT_TRUE(fake.sent[i].queue == 1 || fake.sent[i].queue == 3);
    (fake.sent[i].queue == 1 ? q1 : q3)++;
  }
  EXPECT_EQ(q1, 6);
  EXPECT_EQ(q3, 6);
}

TEST_F(EgressPortTest, StrictQueueArrivingLaterOvertakesDwrrBacklog) {
  EgressConfig cfg;
  cfg.speed_gbps = 10;
  cfg.sched[5] = QueueSched::Strict;
  make(cfg);
  enqueue(1'000, 0, 200);
  transmit_at(2'000);  // some of queue 0 goes
  const std::size_t before = fake.sent.size();
  ASSERT_GT(before, 0u);
  enqueue(1'000, 5, 3);
  transmit_at(10'000);  // 8 us at 10 Gb/s: ~9 frames
  ASSERT_GE(fake.sent.size(), before + 3);
  for (std::size_t i = before; i < before + 3; ++i) EXPECT_EQ(fake.sent[i].queue, 5) << "position " << i;
}

TEST_F(EgressPortTest, DwrrWeightsShareTheLinkWithinTwoPercent) {
  // Three backlogged DWRR queues at 1:2:4 with different frame sizes behind a 25 Gb/s port.
  EgressConfig cfg;
  cfg.speed_gbps = 25;
  cfg.weights = {1, 2, 4, 1, 1, 1, 1, 1};
  make(cfg);
  const uint32_t size[3] = {64, 1500, 700};
  uint64_t now = 0;
  for (int step = 0; step < 20'000; ++step) {
    for (uint8_t q = 0; q < 3; ++q)
      while (port->queue(q).depth_packets.get() < 40) enqueue(size[q], q);
    now += 1'000;
    transmit_at(now);
  }
  uint64_t bytes[3] = {};
  for (auto& s : fake.sent) bytes[s.queue] += s.len;
  const double total = static_cast<double>(bytes[0] + bytes[1] + bytes[2]);
  EXPECT_NEAR(static_cast<double>(bytes[0]) / total, 1.0 / 7, 1.0 / 7 * 0.02);
  EXPECT_NEAR(static_cast<double>(bytes[1]) / total, 2.0 / 7, 2.0 / 7 * 0.02);
  EXPECT_NEAR(static_cast<double>(bytes[2]) / total, 4.0 / 7, 4.0 / 7 * 0.02);
  expect_balanced("after run");
}

struct RateCase {
  double gbps;
  uint32_t len;
  uint64_t step_ns;
};

class EgressPortRate : public EgressPortTest, public ::testing::WithParamInterface<RateCase> {};

TEST_P(EgressPortRate, TransmitRateFollowsPortSpeed) {
  const RateCase c = GetParam();
  EgressConfig cfg;
  cfg.speed_gbps = c.gbps;
  make(cfg, 0);
  const uint64_t duration = 2'000'000;  // 2 ms of emulated time
  uint64_t now = 0;
  while (now < duration) {
    // Keep the queue backlogged so the shaper is the only limit.
    while (port->queue(3).depth_packets.get() < 64) enqueue(c.len, 3);
    now += c.step_ns;
    transmit_at(now);
  }
  const double gbps = static_cast<double>(fake.wire) * 8.0 / static_cast<double>(duration);
  EXPECT_NEAR(gbps, c.gbps, c.gbps * 0.01);
  EXPECT_EQ(counters->port_tx_bytes[kPortId].get(), static_cast<uint64_t>(fake.sent.size()) * c.len);
  if (c.len == 60 && c.gbps == 100) {
    const double mpps = static_cast<double>(fake.sent.size()) * 1e3 / static_cast<double>(duration);
    EXPECT_NEAR(mpps, 148.81, 148.81 * 0.01);
  }
  expect_balanced("after run");
}

INSTANTIATE_TEST_SUITE_P(Speeds, EgressPortRate,
                         ::testing::Values(RateCase{1, 1'000, 10'000}, RateCase{10, 1'000, 1'000},
                                           RateCase{25, 1'500, 1'000}, RateCase{100, 60, 100},
                                           RateCase{100, 1'500, 1'000}, RateCase{400, 1'500, 500}),
                         [](const ::testing::TestParamInfo<RateCase>& i) {
                           return fmt::format("{}G_{}B", static_cast<int>(i.param.gbps), i.param.len);
                         });

TEST_F(EgressPortTest, TxFullDropsWhatThePortRefuses) {
  EgressConfig cfg;
  cfg.speed_gbps = 100;
  make(cfg);
  fake.accept = 4;
  enqueue(500, 2, 20);
  const uint16_t sent = transmit_at(100'000);  // credit for all 20 in one burst
  EXPECT_EQ(sent, 4u);
  EXPECT_EQ(fake.offered, 20u);
  EXPECT_EQ(fake.sent.size(), 4u);
  EXPECT_EQ(port_drops(DropReason::TxFull), 16u);
  EXPECT_EQ(tx_pkts(), 4u);
  EXPECT_EQ(counters->port_tx_bytes[kPortId].get(), 4u * 500);
  EXPECT_EQ(port->queued_packets(), 0u);
  expect_balanced("after refused burst");
}

TEST_F(EgressPortTest, FlushCountsShutdownDrops) {
  EgressConfig cfg;
  make(cfg);
  enqueue(100, 0, 7);
  enqueue(100, 3, 5);
  enqueue(100, 7, 1);
  port->flush(ctx, DropReason::Shutdown);
  EXPECT_EQ(port->queued_packets(), 0u);
  EXPECT_EQ(queue_drops(0, DropReason::Shutdown), 7u);
  EXPECT_EQ(queue_drops(3, DropReason::Shutdown), 5u);
  EXPECT_EQ(queue_drops(7, DropReason::Shutdown), 1u);
  EXPECT_EQ(port_drops(DropReason::Shutdown), 13u);
  for (int q = 0; q < 8; ++q) EXPECT_EQ(port->queue(q).depth_bytes.get(), 0u);
  expect_balanced("after flush");
  // A flushed port keeps working.
  enqueue(100, 0, 2);
  transmit_at(1'000'000);
  EXPECT_EQ(fake.sent.size(), 2u);
  expect_balanced("after reuse");
}

TEST_F(EgressPortTest, BooksBalanceUnderChurn) {
  // Random arrivals over small limits into a slow port that sometimes refuses part of a
  // burst: after every step, in = sent + queued + dropped, with every drop named.
  EgressConfig cfg;
  cfg.speed_gbps = 5;
  cfg.sched[7] = QueueSched::Strict;
  for (auto& l : cfg.limits) l = {.packets = 24, .bytes = 20'000};
  make(cfg);
  uint64_t x = 0x9e3779b97f4a7c15ull;
  auto rnd = [&] {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
  };
  uint64_t now = 0;
  for (int step = 0; step < 5'000; ++step) {
    const int arrivals = static_cast<int>(rnd() % 8);
    for (int i = 0; i < arrivals; ++i) enqueue(64 + static_cast<uint32_t>(rnd() % 1'400), static_cast<uint8_t>(rnd() % 8));
    fake.accept = (step % 7 == 0) ? 1 : 0xFFFF;
    now += 100 + rnd() % 2'000;
    transmit_at(now);
    ASSERT_EQ(in, tx_pkts() + port->queued_packets() + all_port_drops()) << "step " << step;
  }
  EXPECT_GT(port_drops(DropReason::TailDropPackets) + port_drops(DropReason::TailDropBytes), 0u);
  EXPECT_GT(port_drops(DropReason::TxFull), 0u);
  EXPECT_GT(tx_pkts(), 0u);
  uint64_t named = 0;
  for (std::size_t r = 1; r < kNumDropReasons; ++r) named += counters->port_drops[kPortId][r].get();
  EXPECT_EQ(named, all_port_drops()) << "no drop may be counted under reason 'none'";
  port->flush(ctx, DropReason::Shutdown);
  EXPECT_EQ(in, tx_pkts() + all_port_drops());
}

// --- Enqueue counters: derived when published as dequeued + flushed + still queued ---------

// Bytes of `lens`.
uint64_t sum(const std::vector<uint32_t>& lens) {
  uint64_t s = 0;
  for (uint32_t l : lens) s += l;
  return s;
}

TEST_F(EgressPortTest, EnqueueCountsAfterEnqueueOnly) {
  EgressConfig cfg;
  make(cfg);
  const std::vector<uint32_t> q2 = {60, 1500, 333, 1024, 64, 999, 1200};
  for (uint32_t len : q2) enqueue(len, 2);
  enqueue(700, 6, 3);
  // Arrivals do not mark a queue dirty: these are published because the queues hold packets.
  EXPECT_EQ(port->queue(2).enq_packets.get(), 7u);
  EXPECT_EQ(port->queue(2).enq_bytes.get(), sum(q2));
  EXPECT_EQ(port->queue(6).enq_packets.get(), 3u);
  EXPECT_EQ(port->queue(6).enq_bytes.get(), 2'100u);
  for (int q : {0, 1, 3, 4, 5, 7}) {
    EXPECT_EQ(port->queue(q).enq_packets.get(), 0u) << q;
    EXPECT_EQ(port->queue(q).enq_bytes.get(), 0u) << q;
  }
  EXPECT_EQ(port->queue(2).deq_packets.get(), 0u);
}

TEST_F(EgressPortTest, EnqueueCountsAfterPartialTransmitAndDrain) {
  EgressConfig cfg;
  cfg.speed_gbps = 8;  // 1 byte of credit per ns
  make(cfg);
  const std::vector<uint32_t> lens = {1000, 200, 1500, 60, 700, 1200};
  for (uint32_t len : lens) enqueue(len, 4);
  // 1500 bytes of credit, frame by frame: 1024 wire (476 left), 224 (252 left), 1524 starts
  // on the last positive bytes: three frames.
  EXPECT_EQ(transmit_at(1'500), 3u);
  const QueueCounters& c = port->queue(4);
  EXPECT_EQ(c.deq_packets.get(), 3u);
  EXPECT_EQ(c.deq_bytes.get(), 2'700u);
  EXPECT_EQ(c.depth_packets.get(), 3u);
  EXPECT_EQ(c.depth_bytes.get(), 1'960u);
  EXPECT_EQ(c.enq_packets.get(), 6u) << "what left and what is still queued were all enqueued";
  EXPECT_EQ(c.enq_bytes.get(), sum(lens));
  // More arrivals between transmits.
  enqueue(300, 4);
  enqueue(400, 4);
  EXPECT_EQ(c.enq_packets.get(), 8u);
  EXPECT_EQ(c.enq_bytes.get(), sum(lens) + 700);
  // Drained: the queue is empty (published because transmit marked it), still 8 enqueued.
  EXPECT_EQ(transmit_at(100'000), 5u);
  EXPECT_EQ(c.depth_packets.get(), 0u);
  EXPECT_EQ(c.deq_packets.get(), 8u);
  EXPECT_EQ(c.enq_packets.get(), 8u);
  EXPECT_EQ(c.enq_bytes.get(), sum(lens) + 700);
  EXPECT_EQ(c.deq_bytes.get(), sum(lens) + 700);
  // Nothing new: another publication changes nothing.
  transmit_at(200'000);
  port->publish_counters();
  EXPECT_EQ(c.enq_packets.get(), 8u);
  EXPECT_EQ(c.enq_bytes.get(), sum(lens) + 700);
  expect_balanced("drained");
}

TEST_F(EgressPortTest, FlushedPacketsStillCountAsEnqueued) {
  EgressConfig cfg;
  cfg.speed_gbps = 8;
  make(cfg);
  enqueue(1'000, 0, 5);
  enqueue(500, 3, 4);
  transmit_at(2'000);  // two queues: DWRR shares 2000 bytes of credit; some of each may go
  const uint64_t deq0 = port->queue(0).deq_packets.get(), deq3 = port->queue(3).deq_packets.get();
  ASSERT_GT(deq0 + deq3, 0u);
  ASSERT_LT(deq0 + deq3, 9u) << "the flush must find packets still queued";
  port->flush(ctx, DropReason::Shutdown);
  EXPECT_EQ(queue_drops(0, DropReason::Shutdown), 5u - deq0);
  EXPECT_EQ(queue_drops(3, DropReason::Shutdown), 4u - deq3);
  // Emptied by the flush (not by the scheduler): still published, still all enqueued.
  EXPECT_EQ(port->queue(0).depth_packets.get(), 0u);
  EXPECT_EQ(port->queue(3).depth_packets.get(), 0u);
  EXPECT_EQ(port->queue(0).enq_packets.get(), 5u);
  EXPECT_EQ(port->queue(0).enq_bytes.get(), 5'000u);
  EXPECT_EQ(port->queue(3).enq_packets.get(), 4u);
  EXPECT_EQ(port->queue(3).enq_bytes.get(), 2'000u);
  EXPECT_EQ(port->queue(0).deq_packets.get(), deq0) << "flushed packets are not dequeued ones";
  EXPECT_EQ(port->queue(3).deq_packets.get(), deq3);
  // The port keeps counting after a flush, flushed packets included.
  enqueue(100, 0, 2);
  EXPECT_EQ(port->queue(0).enq_packets.get(), 7u);
  EXPECT_EQ(port->queue(0).enq_bytes.get(), 5'200u);
  transmit_at(1'000'000);
  EXPECT_EQ(port->queue(0).enq_packets.get(), 7u);
  EXPECT_EQ(port->queue(0).deq_packets.get(), deq0 + 2);
  port->flush(ctx, DropReason::Shutdown);  // nothing queued: counts unchanged
  EXPECT_EQ(port->queue(0).enq_packets.get(), 7u);
  EXPECT_EQ(port->queue(0).enq_bytes.get(), 5'200u);
  EXPECT_EQ(port->queue(3).enq_packets.get(), 4u);
  expect_balanced("after flushes");
}

TEST_F(EgressPortTest, TailDroppedPacketsAreNotEnqueued) {
  EgressConfig cfg;
  cfg.speed_gbps = 8;
  cfg.limits[1] = {.packets = 4, .bytes = 1u << 20};
  cfg.limits[5] = {.packets = 1024, .bytes = 3'000};
  make(cfg);
  enqueue(500, 1, 6);  // two over the packet limit
  EXPECT_EQ(queue_drops(1, DropReason::TailDropPackets), 2u);
  EXPECT_EQ(port->queue(1).enq_packets.get(), 4u);
  EXPECT_EQ(port->queue(1).enq_bytes.get(), 2'000u);
  enqueue(1'000, 5, 2);
  enqueue(1'001, 5);  // 3001 > 3000: dropped
  enqueue(1'000, 5);  // 3000: fits
  EXPECT_EQ(queue_drops(5, DropReason::TailDropBytes), 1u);
  EXPECT_EQ(port->queue(5).enq_packets.get(), 3u);
  EXPECT_EQ(port->queue(5).enq_bytes.get(), 3'000u);
  // After everything left, and more drops on a full queue again: only admitted ones count.
  transmit_at(1'000'000);
  EXPECT_EQ(port->queued_packets(), 0u);
  enqueue(200, 1, 7);  // 4 fit, 3 dropped
  EXPECT_EQ(queue_drops(1, DropReason::TailDropPackets), 5u);
  EXPECT_EQ(port->queue(1).enq_packets.get(), 8u);
  EXPECT_EQ(port->queue(1).enq_bytes.get(), 2'000u + 800);
  EXPECT_EQ(port->queue(5).enq_packets.get(), 3u);
  expect_balanced("after drops");
}

// --- transmit()'s fast branch: credit for the whole queue, no check per frame ----------------

// After a whole-queue burst the credit left must be what the per-frame rule leaves, to the
// byte. At 8 Gb/s the credit is the time in ns; ten 1500-byte frames (15,240 wire bytes, the
// cover needs 15,000 + 10 x 84) go at once, then eight more arrive at the same instant (no
// refill) and the leftover decides how many of them start: 1524 wire bytes each.
class EgressPortFastBranch : public EgressPortTest, public ::testing::WithParamInterface<int> {};

TEST_P(EgressPortFastBranch, LeavesThePerFrameCredit) {
  const int extra = GetParam();  // leftover = 5 frames' wire bytes + extra
  EgressConfig cfg;
  cfg.speed_gbps = 8;
  make(cfg);
  enqueue(1'500, 2, 10);
  const uint64_t t = 15'240 + 5 * 1'524 + extra;
  EXPECT_EQ(transmit_at(t), 10u) << "credit covers the queue: all of it at once";
  enqueue(1'500, 2, 8);  // the leftover does not cover these: frame by frame
  const uint16_t more = transmit_at(t);
  // Exactly five frames' worth: the fifth leaves 0 and the sixth may not start; one byte
  // more and it does; one byte less and the fifth starts on it.
  EXPECT_EQ(more, extra > 0 ? 6u : 5u);
  EXPECT_EQ(port->queue(2).deq_packets.get(), 10u + more);
  // And the debt after that is exact too: the next frame starts when credit is positive again.
  const int64_t debt = extra > 0 ? 1'524 - extra : -extra;  // credit after `more` frames: -debt
  EXPECT_EQ(transmit_at(t + static_cast<uint64_t>(debt)), 0u);
  EXPECT_EQ(transmit_at(t + static_cast<uint64_t>(debt) + 1), 1u);
  EXPECT_EQ(port->queue(2).enq_packets.get(), 18u);
  expect_balanced("after bursts");
}

INSTANTIATE_TEST_SUITE_P(Leftover, EgressPortFastBranch, ::testing::Values(-1, 0, 1),
                         [](const ::testing::TestParamInfo<int>& i) {
                           return std::string(i.param < 0 ? "OneByteShort" : i.param == 0 ? "Exact" : "OneByteOver");
                         });

TEST_F(EgressPortTest, RuntsAreChargedTheMinimumFrameInTheFastBranchCheck) {
  // A 40-byte packet is 84 bytes on the wire, not 40 + 24: the cover allows 84 per frame. Ten
  // of them are 840 wire bytes; with 700 bytes of credit the cover fails (400 + 840) and the
  // per-frame rule sends nine (the ninth starts on the last 28 bytes).
  EgressConfig cfg;
  cfg.speed_gbps = 8;
  make(cfg);
  enqueue(40, 5, 10);
  EXPECT_EQ(transmit_at(700), 9u);
  EXPECT_EQ(port->queue(5).depth_packets.get(), 1u);
  // 56 bytes of debt: the tenth may start 57 ns later, not before.
  EXPECT_EQ(transmit_at(756), 0u);
  EXPECT_EQ(transmit_at(757), 1u);
  EXPECT_EQ(port->queue(5).enq_packets.get(), 10u);
  EXPECT_EQ(port->queue(5).deq_bytes.get(), 400u);
}

TEST_F(EgressPortTest, EitherBranchSendsAtMostABurstPerCall) {
  // 100 packets of 60 bytes (84 on the wire). At 400 Gb/s the credit covers them all (the
  // fast branch); at 8 Gb/s 10,000 bytes cover 119 frames but not the queue's 6,000 + 8,400
  // (the per-frame branch). Either way one call hands the port kBurst, the next the rest.
  for (const double gbps : {400.0, 8.0}) {
    SCOPED_TRACE(gbps);
    EgressConfig cfg;
    cfg.speed_gbps = gbps;
    make(cfg);
    fake.sent.clear();
    enqueue(60, 0, 100);
    EXPECT_EQ(transmit_at(10'000), kBurst);
    EXPECT_EQ(port->queue(0).depth_packets.get(), 100u - kBurst);
    EXPECT_EQ(transmit_at(10'000), 100u - kBurst) << "the same instant: what credit is left";
    EXPECT_EQ(port->queue(0).deq_packets.get(), 100u);
    EXPECT_EQ(port->queue(0).enq_packets.get(), 100u);
    port->flush(ctx, DropReason::Shutdown);
  }
}

// What the per-frame rule predicts for one queue: the shaper refilled as transmit() does,
// then can_send()/consume() per frame, at most kBurst per call.
struct PerFrameModel {
  explicit PerFrameModel(double gbps) { shaper.configure(gbps, 0); }
  // Lengths sent at `now`, from the front of `q`.
  std::vector<uint32_t> transmit(std::deque<uint32_t>& q, uint64_t now) {
    shaper.refill(now, !q.empty());
    std::vector<uint32_t> out;
    while (out.size() < kBurst && !q.empty() && shaper.can_send()) {
      shaper.consume(q.front());
      out.push_back(q.front());
      q.pop_front();
    }
    return out;
  }
  Shaper shaper;
};

// One queue, the same seeded arrivals: at 400 Gb/s the credit covers the whole queue (the fast
// branch every time, kBurst at a time); at 8 Gb/s it covers only part of it most steps (the
// per-frame branch) and all of a short queue now and then (the fast branch). Both must send
// exactly what the per-frame rule predicts, step by step, in arrival order, with the same
// counters.
struct Departures {
  std::vector<uint32_t> lens;
  std::size_t partial_steps = 0, whole_steps = 0;
};

TEST_F(EgressPortTest, FastBranchSendsWhatThePerFrameRuleSends) {
  auto run = [this](double gbps) {
    EgressConfig cfg;
    cfg.speed_gbps = gbps;
    fake.sent.clear();
    fake.wire = 0;
    make(cfg, 0);
    PerFrameModel model(gbps);
    std::deque<uint32_t> mq;
    Rng rng(2024);
    Departures d;
    uint64_t now = 0, arrived = 0, arrived_bytes = 0;
    for (int step = 0; step < 3'000; ++step) {
      const int n = static_cast<int>(rng.between(0, step % 100 < 3 ? 40 : 2));  // now and then a burst
      for (int i = 0; i < n; ++i) {
        const uint32_t len = static_cast<uint32_t>(rng.between(40, 1500));
        enqueue(len, 3);
        mq.push_back(len);
        ++arrived;
        arrived_bytes += len;
      }
      now += rng.between(500, 3'000);  // ~70 % load at 8 Gb/s: the queue builds and drains
      const std::size_t queued = mq.size();
      const std::vector<uint32_t> expect = model.transmit(mq, now);
      const std::size_t before = fake.sent.size();
      const uint16_t sent = transmit_at(now);
      EXPECT_EQ(sent, expect.size()) << gbps << " Gb/s, step " << step;
      if (sent != expect.size()) return d;
      for (std::size_t i = 0; i < expect.size(); ++i) EXPECT_EQ(fake.sent[before + i].len, expect[i]) << step;
      if (expect.size() > 1 && expect.size() == queued) ++d.whole_steps;
      if (!expect.empty() && expect.size() < queued && expect.size() < kBurst) ++d.partial_steps;
      const QueueCounters& c = port->queue(3);
      EXPECT_EQ(c.enq_packets.get(), arrived) << step;
      EXPECT_EQ(c.enq_bytes.get(), arrived_bytes) << step;
      EXPECT_EQ(c.deq_packets.get(), fake.sent.size()) << step;
      EXPECT_EQ(c.depth_packets.get(), mq.size()) << step;
    }
    // Drain what is left, then the books.
    for (int i = 0; i < 1'000 && !mq.empty(); ++i) {
      now += 10'000;
      model.transmit(mq, now);
      transmit_at(now);
    }
    EXPECT_TRUE(mq.empty());
    EXPECT_EQ(port->queued_packets(), 0u);
    EXPECT_EQ(port->queue(3).enq_packets.get(), arrived);
    EXPECT_EQ(port->queue(3).deq_packets.get(), arrived);
    EXPECT_EQ(port->queue(3).deq_bytes.get(), arrived_bytes);
    EXPECT_EQ(all_port_drops(), 0u) << "the model has no limits: nothing may be tail-dropped";
    for (auto& s : fake.sent) d.lens.push_back(s.len);
    port->flush(ctx, DropReason::Shutdown);
    port.reset();
    return d;
  };
  const Departures fast = run(400.0);
  const Departures slow = run(8.0);
  RecordProperty("steps", fmt::format("400G whole {} partial {}; 8G whole {} partial {}; {} packets", fast.whole_steps,
                                      fast.partial_steps, slow.whole_steps, slow.partial_steps, slow.lens.size()));
  EXPECT_GT(fast.whole_steps, 500u);
  EXPECT_EQ(fast.partial_steps, 0u) << "at 400 Gb/s the credit always covers the queue";
  EXPECT_GT(slow.partial_steps, 100u) << "at 8 Gb/s the per-frame branch must be exercised";
  EXPECT_GT(slow.whole_steps, 100u) << "... and the fast branch on short queues";
  EXPECT_EQ(fast.lens.size(), slow.lens.size());
  EXPECT_EQ(fast.lens, slow.lens) << "the same packets in the same (arrival) order";
}

}  // namespace
}  // namespace rs::test
