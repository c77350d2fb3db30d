// EgressPort over a fake port: per-queue limits and their named drops, depth and peak
// counters, strict-before-DWRR service, the shaper's link rate on the injected clock, a TX
// ring that accepts fewer than offered, the shutdown flush, and the packet books balancing.
#include "dataplane/queues/egress_port.h"

#include <fmt/core.h>
#include <gtest/gtest.h>

#include <cstring>
#include <memory>

#include "dataplane/policies/routing/routing_policy.h"
#include "tests/support/egress_fixture.h"

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

}  // namespace
}  // namespace rs::test
