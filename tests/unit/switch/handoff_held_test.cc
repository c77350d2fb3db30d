// A full handoff ring loses no lossless packet: the ingress worker holds what the ring turns
// back, still charged to its ingress PG (so XOFF pauses the sender), and sends it before any
// newer packet to that worker. Lossy packets meeting the full ring are dropped, as before. The
// egress worker here stops polling while the ingress one goes on, which is what a slow worker
// (a sanitizer build, a busy core) does to the ring.
#include <gtest/gtest.h>

#include "app/stats_json.h"
#include "dataplane/switch/worker.h"
#include "tests/unit/switch/lossless_net.h"

namespace rs::test {
namespace {

// A PG that lets its sender fill more than the ring holds before XOFF, as a deep-buffer
// switch's (SONiC's dynamic thresholds) does.
PgSettings deep_pg() {
  return {.lossless = true, .xoff = 3000 * kCells, .xon = 2900 * kCells, .headroom = 200 * kCells};
}

// Ports 0 and 2 are worker 0's, port 1 worker 1's. h0 sends h1 on the lossless priority, h2
// sends h1 on a lossy one, both across the handoff ring.
SwitchConfig two_flows_across_the_ring() {
  Net n;
  n.cfg.workers = 2;
  n.pg = deep_pg();
  for (int h = 0; h < 3; ++h) n.add_host(100);
  n.add_flow(0, 1, 20, 0x101);
  n.add_flow(2, 1, 60, 0x121, kLossyDscp);
  return n.cfg;
}

// Worker 1 never polls (while worker 0 does) from `t` to `until`.
void only_worker0(Switch& sw, uint64_t& t, uint64_t until) {
  for (; t < until; t += kUs) {
    sw.poll_links(t);
    sw.worker(0).poll(t);
  }
}

TEST(HandoffHeld, AFullRingHoldsLosslessPacketsDropsLossyOnesAndKeepsOrder) {
  Switch sw(two_flows_across_the_ring(), kT0);
  uint64_t t = kT0;
  only_worker0(sw, t, kT0 + 3 * kMs);  // the ring fills, first with both flows' packets
  // Charged to the port the ring leads to, as a queue's drop would be.
  EXPECT_GT(sw.drops(1, DropReason::HandoffFull), 1000u) << "the lossy flow meets the full ring";
  EXPECT_EQ(sw.lossless_drops_before_queue(1), 0u) << "the lossless one is held instead";
  const uint32_t held = sw.worker(0).held_now();
  EXPECT_GT(held, 0u);
  EXPECT_GT(sw.worker(0).counters.handoff_held.get(), 0u);
  EXPECT_GT(host(sw, 0).pfc_received(), 0u) << "held packets stay charged to their PG: XOFF paused h0";
  EXPECT_EQ(sw.lossless_drops(), 0u);
  EXPECT_TRUE(sw.totals().balanced()) << "held packets are between workers";
  EXPECT_EQ(stats_json(sw)["workers"][0]["handoff_held"].get<uint64_t>(), sw.worker(0).counters.handoff_held.get());

  // Worker 1 wakes up: what was held gets through, in order.
  for (; t < kT0 + 6 * kMs; t += kUs) sw.poll_all(t);
  EXPECT_EQ(sw.worker(0).held_now(), 0u);
  EXPECT_EQ(sw.lossless_drops(), 0u);
  RxFlowStats f;
  ASSERT_TRUE(host(sw, 1).rx_tracker().find(host_ip(0), 0x101, f));
  EXPECT_GT(f.packets, held);
  EXPECT_EQ(f.out_of_order, 0u) << "held packets went before newer ones";
  EXPECT_EQ(f.missing, 0u);
  sw.shutdown(t);
  EXPECT_EQ(sw.lossless_drops(), 0u);
  EXPECT_TRUE(sw.totals().balanced());
}

// Held packets the switch still has when it stops are not lost either: shutdown puts them in
// their queues behind the ring's contents, and flushes them with the queues (shutdown_flush).
TEST(HandoffHeld, ShutdownDeliversHeldPacketsToTheirQueues) {
  Switch sw(two_flows_across_the_ring(), kT0);
  uint64_t t = kT0;
  only_worker0(sw, t, kT0 + 3 * kMs);
  ASSERT_GT(sw.worker(0).held_now(), 0u);
  sw.shutdown(t);
  EXPECT_EQ(sw.worker(0).held_now(), 0u);
  EXPECT_EQ(sw.totals().in_flight, 0u);
  EXPECT_TRUE(sw.totals().balanced());
}

}  // namespace
}  // namespace rs::test
