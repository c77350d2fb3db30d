// EgressPort over a fake port: per-queue limits and their named drops, a TX ring that accepts
// fewer than offered, the shutdown flush, and the packet books balancing.
#include "dataplane/tm/queue/egress_port.h"

#include <gtest/gtest.h>

#include "tests/unit/tm/egress_port_fixture.h"

namespace rs::test {
namespace {

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
