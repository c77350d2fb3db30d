// Traffic-manager enqueue: a packet whose egress port this worker owns goes straight into that
// port's priority queue; one owned by another worker lands in the handoff burst for that worker.
// Consumes every packet (no next edges).
#include "dataplane/stages/egress/tm_enqueue.h"

#include <gtest/gtest.h>

#include <vector>

#include "dataplane/io/port.h"
#include "dataplane/queues/egress_port.h"
#include "tests/support/stage_harness.h"
#include "tests/unit/stages/stage_test_util.h"

namespace rs::test {
namespace {

// A port that keeps what it is given, so the test can see what left through it.
class FakePort final : public Port {
 public:
  uint16_t rx_burst(rte_mbuf**, uint16_t, uint64_t) override { return 0; }
  uint16_t tx_burst(rte_mbuf** pkts, uint16_t n, uint64_t) override {
    for (uint16_t i = 0; i < n; ++i) sent.push_back(pkts[i]);
    return n;
  }
  const char* kind() const override { return "fake"; }
  ~FakePort() override { free_all(sent); }
  std::vector<rte_mbuf*> sent;
};

// noinline: GCC 12 at -O2 reports a false -Wmaybe-uninitialized in std::variant's move when the
// packet builder is inlined into a loop.
[[gnu::noinline]] PacketSpec roce(int i) {
  return Eth{} / Ipv4{} / Udp{.sport = static_cast<uint16_t>(0xC000 + i)} / Bth{.psn = static_cast<uint32_t>(i)} / Payload::of_size(64);
}

// World: 4 ports. This worker (0) owns ports 0 and 1; worker 2 owns port 2, worker 3 port 3.
class TmEnqueueTest : public ::testing::Test {
 protected:
  // Egress ports publish their counters once per transmit(); the stage alone never transmits.
  void publish() {
    for (auto& e : egress)
      if (e) e->publish_counters();
  }

  void SetUp() override {
    w.port_owner[2] = 2;
    w.port_owner[3] = 3;
    for (uint16_t p = 0; p < 2; ++p) {
      port[p].id = p;
      egress[p] = std::make_unique<EgressPort>(p, &port[p], EgressConfig{}, 0);
      egress_ptrs[p] = egress[p].get();
    }
    // TestWorld leaves both null: a real worker wires them.
    w.ctx.egress = egress_ptrs;
    w.ctx.handoff = handoff;
  }
  void TearDown() override {
    for (auto& b : handoff) {
      for (uint16_t i = 0; i < b.n; ++i) rte_pktmbuf_free(b.pkts[i]);
      b.clear();
    }
    for (auto& e : egress)
      if (e) e->flush(w.ctx, DropReason::Shutdown);
  }

  // Parsed packets the earlier stages sent to `out_port`, queue `q`.
  std::vector<rte_mbuf*> to_port(uint16_t out_port, uint8_t q, int n) {
    std::vector<PacketSpec> specs;
    for (int i = 0; i < n; ++i) specs.push_back(roce(i));
    auto v = parsed(specs);
    for (auto* m : v) {
      meta(m).out_port = out_port;
      meta(m).queue = q;
      meta(m).tc = q;
    }
    return v;
  }

  TestWorld w;
  StageHarness<TmEnqueue> h{{}, &w};
  FakePort port[2];
  std::unique_ptr<EgressPort> egress[2];
  EgressPort* egress_ptrs[kMaxPorts] = {};
  Burst handoff[kMaxWorkers];
};

TEST_F(TmEnqueueTest, OwnPortGoesToItsQueue) {
  auto v = to_port(1, 3, 5);
  std::vector<rte_mbuf*> sent_in = v;
  auto out = h.run_mbufs(v);
  publish();
  EXPECT_TRUE(out.edge.empty()) << "every packet is consumed";
  EXPECT_EQ(egress[1]->queue(3).enq_packets.get(), 5u);
  EXPECT_EQ(egress[1]->queue(3).depth_packets.get(), 5u);
  EXPECT_EQ(egress[1]->queued_packets(), 5u);
  EXPECT_EQ(egress[0]->queued_packets(), 0u);
  for (auto& b : handoff) EXPECT_EQ(b.n, 0);
  EXPECT_EQ(h.counter("local"), 5u);
  EXPECT_EQ(h.counter("handoff"), 0u);
  // Let the shaper earn credit, then the packets leave through the fake port in order.
  w.ctx.now_ns = 1'000'000;
  EXPECT_EQ(egress[1]->transmit(w.ctx), 5);
  EXPECT_EQ(port[1].sent, sent_in);
}

TEST_F(TmEnqueueTest, QueueComesFromMeta) {
  auto a = to_port(0, 0, 2);
  auto b = to_port(0, 7, 3);
  a.insert(a.end(), b.begin(), b.end());
  auto out = h.run_mbufs(a);
  publish();
  EXPECT_EQ(egress[0]->queue(0).enq_packets.get(), 2u);
  EXPECT_EQ(egress[0]->queue(7).enq_packets.get(), 3u);
  EXPECT_EQ(egress[0]->queued_packets(), 5u);
}

TEST_F(TmEnqueueTest, OtherWorkersPortGoesToItsHandoffBurst) {
  auto v2 = to_port(2, 3, 4);
  auto v3 = to_port(3, 5, 2);
  std::vector<rte_mbuf*> all = v2;
  all.insert(all.end(), v3.begin(), v3.end());
  auto out = h.run_mbufs(all);
  publish();
  EXPECT_TRUE(out.edge.empty());
  ASSERT_EQ(handoff[2].n, 4);
  ASSERT_EQ(handoff[3].n, 2);
  for (uint16_t i = 0; i < 4; ++i) EXPECT_EQ(handoff[2].pkts[i], v2[i]) << "order within a handoff burst is kept";
  for (uint16_t i = 0; i < 2; ++i) EXPECT_EQ(handoff[3].pkts[i], v3[i]);
  EXPECT_EQ(handoff[0].n, 0) << "nothing is handed to ourselves";
  EXPECT_EQ(handoff[1].n, 0);
  EXPECT_EQ(egress[0]->queued_packets() + egress[1]->queued_packets(), 0u);
  EXPECT_EQ(h.counter("handoff"), 6u);
  EXPECT_EQ(h.counter("local"), 0u);
}

TEST_F(TmEnqueueTest, MixedBurstSplitsByOwner) {
  // One full burst alternating over the four ports.
  constexpr uint16_t kEach = kBurst / 4;
  std::vector<rte_mbuf*> v;
  for (int i = 0; i < kEach; ++i)
    for (uint16_t p = 0; p < 4; ++p) {
      auto one = to_port(p, 1, 1);
      v.push_back(one[0]);
    }
  ASSERT_EQ(v.size(), kBurst);
  auto out = h.run_mbufs(v);
  publish();
  EXPECT_EQ(egress[0]->queued_packets(), kEach);
  EXPECT_EQ(egress[1]->queued_packets(), kEach);
  EXPECT_EQ(handoff[2].n, kEach);
  EXPECT_EQ(handoff[3].n, kEach);
  EXPECT_EQ(h.counter("local"), 2u * kEach);
  EXPECT_EQ(h.counter("handoff"), 2u * kEach);
}

TEST_F(TmEnqueueTest, FullQueueTailDropsAndCounts) {
  // The stage hands over; the egress port applies its own limit and counts the drop against
  // the egress port (the packet is still consumed, never returned).
  EgressConfig cfg;
  cfg.limits[2].packets = 2;
  egress[0] = std::make_unique<EgressPort>(0, &port[0], cfg, 0);
  egress_ptrs[0] = egress[0].get();
  auto out = h.run_mbufs(to_port(0, 2, 5));
  publish();
  EXPECT_TRUE(out.edge.empty());
  EXPECT_EQ(egress[0]->queue(2).enq_packets.get(), 2u);
  EXPECT_EQ(egress[0]->queue(2).drops[static_cast<std::size_t>(DropReason::TailDropPackets)].get(), 3u);
  EXPECT_EQ(w.counters.port_drops[0][static_cast<std::size_t>(DropReason::TailDropPackets)].get(), 3u);
}

}  // namespace
}  // namespace rs::test
