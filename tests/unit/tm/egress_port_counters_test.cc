// EgressPort over a fake port: depth and peak counters, and the enqueue counters derived when
// published as dequeued + flushed + still queued.
#include "dataplane/tm/queue/egress_port.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "tests/unit/tm/egress_port_fixture.h"

namespace rs::test {
namespace {

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
  EXPECT_EQ(load.port_bytes(kPortId), 11'200u);

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
  EXPECT_EQ(load.port_bytes(kPortId), depth_bytes);

  // Drained completely: depth 0, peak still remembers.
  for (uint64_t t = 2'000; port->queued_packets() > 0 && t < 1'000'000; t += 1'000) transmit_at(t);
  EXPECT_EQ(port->queue(1).depth_packets.get(), 0u);
  EXPECT_EQ(port->queue(1).depth_bytes.get(), 0u);
  EXPECT_EQ(port->queue(1).peak_packets.get(), 20u);
  EXPECT_EQ(port->queue(1).deq_bytes.get(), 10'000u);
  EXPECT_EQ(load.port_bytes(kPortId), 0u);
  expect_balanced("drained");
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

}  // namespace
}  // namespace rs::test
