// The shared buffer on its own (cells, headroom reservation, per-worker rows summed on read)
// and through an egress port: SONiC's dynamic threshold (alpha x free pool), a pool smaller
// than the queues' static limits, WRED drops of non-ECT lossy packets vs CE marks of ECT ones,
// and every cell given back once the queues drain.
#include "dataplane/tm/buffer/shared_buffer.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "tests/support/egress_fixture.h"

namespace rs::test {
namespace {

constexpr uint16_t kPortId = 1;
constexpr uint16_t kInPort = 0;

// Eth 14 + IPv4 20 + UDP 8 + BTH 12 + 1000 + ICRC 4, as pkt() builds them.
uint32_t pkt_len_of_one() { return roce_frame_len(1000); }

TEST(SharedBuffer, ChargesWholeCellsAndReservesHeadroom) {
  MmuConfig mc;
  mc.pool.size = 1 << 20;
  mc.pool.cell_size = 256;
  std::vector<PortLosslessConfig> ports(2);
  ports[0].pg[3] = {.lossless = true, .xoff = 50000, .xon = 25000, .headroom = 30000};
  ports[1].pg[3] = {.lossless = true, .xoff = 50000, .xon = 25000, .headroom = 20000};
  SharedBuffer sb(mc, ports, 2);
  EXPECT_EQ(sb.charge(1), 256u);
  EXPECT_EQ(sb.charge(256), 256u);
  EXPECT_EQ(sb.charge(257), 512u);
  EXPECT_EQ(sb.charge(1078), 1280u);
  EXPECT_EQ(sb.headroom_reserved(), 50000u);
  EXPECT_EQ(sb.shared_size(), (1u << 20) - 50000u);
  EXPECT_EQ(sb.lossless_pgs(0), 0x08);
  EXPECT_TRUE(sb.any_lossless());
  // One worker charges at ingress, another gives the bytes back at egress: the rows may each
  // be "negative", the sum is the level.
  sb.usage(1).pg[0][3].add(5120);
  sb.usage(0).pg[0][3].sub(1280);
  EXPECT_EQ(sb.pg_level(0, 3), 3840u);
  sb.usage(0).pg[0][3].sub(3840);
  EXPECT_EQ(sb.pg_level(0, 3), 0u);
}

TEST(SharedBuffer, RefusesHeadroomThatDoesNotFitAndBadCells) {
  MmuConfig mc;
  mc.pool.size = 40000;
  std::vector<PortLosslessConfig> ports(1);
  ports[0].pg[3] = {.lossless = true, .xoff = 10000, .xon = 5000, .headroom = 40000};
  EXPECT_THROW(SharedBuffer(mc, ports, 1), std::runtime_error);
  mc.pool.size = 1 << 20;
  mc.pool.cell_size = 192;
  EXPECT_THROW(SharedBuffer(mc, ports, 1), std::runtime_error);
}

class MmuEgressTest : public EgressFixture {
 protected:
  void after_flush() override {
    if (sb) {
      EXPECT_EQ(sb->used(), 0u) << "every cell goes back when the queues empty";
      for (int g = 0; g < 8; ++g) EXPECT_EQ(sb->pg_level(kInPort, static_cast<uint8_t>(g)), 0u);
    }
  }
  void make(uint64_t pool, PortLosslessConfig lc, uint64_t static_sum, bool dynamic, uint8_t pfc_enable = 0) {
    MmuConfig mc;
    mc.pool.size = pool;
    mc.pfc_enable = pfc_enable;
    EgressConfig ec;
    ec.speed_gbps = 1;
    for (auto& l : ec.limits) l = {.packets = 8192, .bytes = 8u << 20};
    make_over_buffer(kPortId, mc, 2, lc, ec, static_sum, dynamic);
  }
  rte_mbuf* pkt(uint8_t q, uint8_t ecn = 0) { return roce_to_queue(kInPort, kPortId, q, /*dscp=*/0, ecn, 1000); }
};

TEST_F(MmuEgressTest, LossyPortsChargeThePoolByTheTimeAnyoneLooks) {
  // A pool that cannot fill and plain lossy queues: the light enqueue, which sums cells and
  // hands them to the pool's usage at publication and transmit. Usage must still be exact there.
  make(64u << 20, PortLosslessConfig{}, 8u << 20, false);
  ASSERT_FALSE(sb->pool_can_fill());
  const uint64_t cells = sb->charge(pkt_len_of_one());
  for (int i = 0; i < 10; ++i) port->enqueue(pkt(1), ctx);
  port->publish_counters();
  EXPECT_EQ(sb->used(), 10 * cells) << "queued cells are in the pool's usage once published";
  // 1 Gb/s: 10 us of credit sends one ~1100-byte frame (the first may start at once).
  ctx.now_ns = 10'000;
  const uint16_t sent = port->transmit(ctx);
  ASSERT_GT(sent, 0u);
  ASSERT_LT(sent, 10u);
  EXPECT_EQ(sb->used(), (10u - sent) * cells) << "sent packets' cells go back, queued ones stay";
  for (int i = 0; i < 5; ++i) port->enqueue(pkt(1), ctx);
  ctx.now_ns += 1'000;
  const uint16_t sent2 = port->transmit(ctx);
  EXPECT_EQ(sb->used(), (15u - sent - sent2) * cells) << "cells enqueued since are counted at the next transmit";
  // after_flush(): every cell back once the queues are flushed.
}

TEST_F(MmuEgressTest, LossyPoolUsageStaysExactWhenQueuesGoOutWholeOrRefusedOrArbitrated) {
  // The lossy mode's pool usage follows the FIFOs' own cell sums: a queue taken whole (its
  // slots handed to the port uncopied), a port that refuses part of a burst (TxFull drops),
  // and two queues arbitrated packet by packet must all leave usage equal to what is queued.
  make(64u << 20, PortLosslessConfig{}, 8u << 20, false);
  ASSERT_FALSE(sb->pool_can_fill());
  auto queued_cells = [&] {
    uint64_t c = 0;
    for (int q = 0; q < 8; ++q) c += port->fifo(q).cells();
    return c;
  };
  // Mixed sizes, so cells differ per packet. 1 Gb/s gives at most ~18 KB of credit: 8 frames of
  // up to ~1.1 KB go out in one transmit, whole.
  uint64_t expect_cells = 0;
  for (uint32_t payload : {16u, 200u, 1000u, 64u, 700u, 300u, 900u, 40u}) {
    rte_mbuf* m = roce_to_queue(kInPort, kPortId, 1, 0, 0, payload);
    expect_cells += sb->charge(m->pkt_len);
    port->enqueue(m, ctx);
  }
  port->publish_counters();
  EXPECT_EQ(queued_cells(), expect_cells);
  EXPECT_EQ(sb->used(), expect_cells);
  ctx.now_ns = 1'000'000;
  EXPECT_EQ(port->transmit(ctx), 8u) << "the whole queue fits the link's credit";
  EXPECT_EQ(sb->used(), 0u);
  EXPECT_EQ(port->fifo(1).packets(), 0u);
  // The port takes 3 of 6: the other 3 are dropped (TxFull), their cells go back too.
  fake.accept = 3;
  for (int i = 0; i < 6; ++i) port->enqueue(pkt(2), ctx);
  ctx.now_ns += 1'000'000;
  EXPECT_EQ(port->transmit(ctx), 3u);
  EXPECT_EQ(ctx.counters->port_drops[kPortId][static_cast<std::size_t>(DropReason::TxFull)].get(), 3u);
  EXPECT_EQ(sb->used(), 0u);
  fake.accept = 0xFFFF;
  // Two queues with traffic: the scheduler picks packet by packet, at most a burst (64) per
  // transmit, so some of the 80 stay queued.
  for (int i = 0; i < 40; ++i) {
    port->enqueue(pkt(1), ctx);
    port->enqueue(pkt(5), ctx);
  }
  ctx.now_ns += 1'000'000;
  const uint16_t sent = port->transmit(ctx);
  ASSERT_GT(sent, 0u);
  ASSERT_LT(sent, 80u);
  EXPECT_GT(port->fifo(1).packets(), 0u);
  EXPECT_EQ(queued_cells(), (80u - sent) * sb->charge(pkt_len_of_one()));
  EXPECT_EQ(sb->used(), queued_cells()) << "usage is what is still queued";
  // after_flush(): every cell back once the queues are flushed.
}

TEST_F(MmuEgressTest, DynamicThresholdIsAlphaTimesTheFreePool) {
  // alpha = 2^0 = 1: a lone queue stops growing where its bytes reach what is left free,
  // i.e. at half the pool (in cells). dynamic_th = -1 (alpha 1/2) stops it at a third.
  for (int8_t dt : {int8_t{0}, int8_t{-1}}) {
    SCOPED_TRACE(static_cast<int>(dt));
    PortLosslessConfig lc;
    lc.dynamic_th[1] = dt;
    make(256 * 1024, lc, 0, true);
    int admitted = 0;
    for (int i = 0; i < 400; ++i) {
      const uint64_t before = queue_drops(1, DropReason::DynamicThreshold);
      port->enqueue(pkt(1), ctx);
      if (queue_drops(1, DropReason::DynamicThreshold) == before) ++admitted;
    }
    port->publish_counters();
    const uint64_t cells = sb->charge(pkt_len_of_one());
    const double share = dt == 0 ? 1.0 / 2 : 1.0 / 3;
    const double expect = share * static_cast<double>(sb->shared_size()) / static_cast<double>(cells);
    EXPECT_NEAR(admitted, expect, 1.5) << "queue stops at alpha/(1+alpha) of the pool";
    EXPECT_EQ(queue_drops(1, DropReason::DynamicThreshold), static_cast<uint64_t>(400 - admitted));
    EXPECT_EQ(queue_drops(1, DropReason::TailDropBytes), 0u);
    port->flush(ctx, DropReason::Shutdown);
    port.reset();
  }
}

TEST_F(MmuEgressTest, QueueSizeIsAdmittedEvenWhenThePoolIsFull) {
  // Queue 2 fills the pool; queue 1 (dynamic_th -7: almost nothing of the free pool) still
  // gets its reserved `size` of 3 packets' cells, and not one more.
  PortLosslessConfig lc;
  lc.dynamic_th[1] = -7;
  lc.reserved[1] = 3 * 1280;
  make(64 * 1024, lc, 8u << 20, true);
  for (int i = 0; i < 100; ++i) port->enqueue(pkt(2), ctx);
  EXPECT_GT(queue_drops(2, DropReason::SharedPoolFull), 0u);
  for (int i = 0; i < 10; ++i) port->enqueue(pkt(1), ctx);
  port->publish_counters();
  EXPECT_EQ(port->queue(1).enq_packets.get(), 3u);
  EXPECT_EQ(queue_drops(1, DropReason::DynamicThreshold), 7u);
  EXPECT_EQ(sb->queue_reserved(), 2u * 3 * 1280) << "both ports' reservations leave the pool";
}

TEST_F(MmuEgressTest, PoolSmallerThanTheStaticLimitsFillsAndDrops) {
  make(64 * 1024, PortLosslessConfig{}, 8u << 20, false);
  const uint64_t cells = sb->charge(pkt_len_of_one());
  for (int i = 0; i < 100; ++i) port->enqueue(pkt(i % 2 ? 1 : 2), ctx);
  const uint64_t fit = sb->shared_size() / cells;
  EXPECT_EQ(queue_drops(1, DropReason::SharedPoolFull) + queue_drops(2, DropReason::SharedPoolFull), 100 - fit);
  EXPECT_LE(sb->used(), sb->shared_size());
}

TEST_F(MmuEgressTest, WredDropsNonEctLossyAndMarksEct) {
  PortLosslessConfig lc;
  // Kmin 0, Kmax 1 byte: from the second packet on the law says "always".
  lc.wred[1] = {.enabled = true, .wred_drop = true, .ecn_mark = true, .kmin = 0, .kmax = 1, .pmax_percent = 100};
  lc.wred[3] = lc.wred[1];
  lc.pg[3] = {.lossless = true, .xoff = 1u << 20, .xon = 1u << 19, .headroom = 1u << 20};
  make(32u << 20, lc, 0, false, 0x08);
  for (int i = 0; i < 10; ++i) port->enqueue(pkt(1, 0), ctx);  // lossy, not ECN-capable
  for (int i = 0; i < 10; ++i) port->enqueue(pkt(3, 0), ctx);  // lossless, not ECN-capable
  for (int i = 0; i < 10; ++i) port->enqueue(pkt(5, 2), ctx);  // no profile on queue 5
  port->publish_counters();
  EXPECT_EQ(queue_drops(1, DropReason::WredDrop), 9u);
  EXPECT_EQ(port->queue(1).enq_packets.get(), 1u);
  EXPECT_EQ(queue_drops(3, DropReason::WredDrop), 0u) << "lossless packets are never WRED-dropped";
  EXPECT_EQ(port->queue(3).enq_packets.get(), 10u);
  EXPECT_EQ(port->queue(5).ecn_marked.get(), 0u);
  port->flush(ctx, DropReason::Shutdown);
  for (int i = 0; i < 10; ++i) port->enqueue(pkt(1, 1), ctx);  // ECT(1): marked, never dropped
  port->publish_counters();
  EXPECT_EQ(port->queue(1).ecn_marked.get(), 9u);
  EXPECT_EQ(queue_drops(1, DropReason::WredDrop), 9u) << "unchanged";
  // Drain through the shaper: every cell comes back (checked in TearDown).
  for (uint64_t t = 0; t < 10'000'000 && port->queued_packets(); t += 100'000) {
    ctx.now_ns = t;
    port->transmit(ctx);
  }
  EXPECT_EQ(port->queued_packets(), 0u);
}

}  // namespace
}  // namespace rs::test
