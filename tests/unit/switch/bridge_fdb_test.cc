// The bridge's FDB (tables/fdb.h) through a whole switch (bridge_rig.h): ageing and the flush
// of a port whose link goes down, learning in the right order around it, the live count,
// active stations kept, moves, the learn ring's and the table's limits and room made by
// ageing; two workers learning and forwarding; a chained jumbo frame flooded whole.
#include "tests/unit/switch/bridge_rig.h"

namespace rs::test {
namespace {

// ---------------------------------------------------------------------------------------------
// 7. Ageing (ageing_s 1): entries not refreshed for over a second go, and traffic to them
// floods again; a port whose link goes down has its entries flushed at once.
TEST_F(BridgeTest, AgeingAndLinkDownFlush) {
  make({{10, {}}, {10, {}}, {10, {}}}, {10}, [](SwitchConfig& c) { c.bridge.ageing_s = 1; });
  send(0, roce(kB, kA));
  send(1, roce(kA, kB));
  settle();
  take_all();
  ASSERT_EQ(fdb().size(), 2u);
  now += 500 * kMs;
  settle();
  EXPECT_EQ(fdb().size(), 2u) << "half a second: still there";
  now += 2'000 * kMs;
  settle();
  EXPECT_TRUE(fdb().empty());
  EXPECT_EQ(sw->fdb()->aged(), 2u);
  const uint64_t flooded0 = ctr("flooded");
  EXPECT_EQ(send_and_count(0, roce(kB, kA)), (Counts{0, 1, 1})) << "B unknown again: flooded";
  EXPECT_EQ(ctr("flooded"), flooded0 + 1);

  // Relearned; then p1 goes down: B's entry goes with it, A's stays.
  send(1, roce(kA, kB));
  settle();
  take_all();
  ASSERT_EQ(fdb().size(), 2u);
  EXPECT_EQ(sw->fdb()->learned(), 4u);
  sw->set_admin(1, false);
  sw->poll_links(now);
  EXPECT_EQ((fdb()), (std::map<std::pair<uint16_t, std::string>, uint16_t>{{{10, kA}, 0}}));
  EXPECT_EQ(sw->fdb()->aged(), 2u) << "a flush is not ageing";
  EXPECT_EQ(send_and_count(0, roce(kB, kA)), (Counts{0, 0, 1})) << "flooded, to the members that are up";
  sw->set_admin(1, true);
  settle();
  send(1, roce(kA, kB));
  settle();
  EXPECT_EQ(counts(), (Counts{1, 0, 0}));
  EXPECT_EQ(fdb().at({10, kB}), 1);
}

// A station reported by a worker just before its port's link went down is not learned on the
// dead port: the flush leaves no entry on it, and traffic to the station floods to the members
// that are up instead of being dropped as link_down until the entry ages (300 s by default).
TEST_F(BridgeTest, LearnEventOfAPortThatWentDownIsNotLearnedOnIt) {
  make({{10, {}}, {10, {}}, {10, {}}}, {10});
  send(0, roce(kBcast, kA));
  settle();
  take_all();
  send(1, roce(kBcast, kB));
  sw->poll(0, now += kStep);  // the worker switched B's frame and reported B; no control poll yet
  ASSERT_EQ(sw->fdb()->pending(), 1u);
  sw->set_admin(1, false);
  sw->poll_links(now += kStep);  // p1 goes down: its entries are flushed, then the events learned
  EXPECT_EQ(fdb().count({10, kB}), 0u) << "B learned on p1 after p1's flush";
  take_all();  // B's own broadcast, flooded before p1 went down
  EXPECT_EQ(send_and_count(0, roce(kB, kA)), (Counts{0, 0, 1})) << "B is unknown: flooded to p2";
  EXPECT_EQ(sw->drops(0, DropReason::LinkDown), 0u);
}

// The FDB's entry count (fdb_entries in the stats) is what it holds: after ageing it is 0.
TEST_F(BridgeTest, SizeCountsOnlyLiveEntriesAfterAgeing) {
  make({{10, {}}, {10, {}}}, {10}, [](SwitchConfig& c) { c.bridge.ageing_s = 1; });
  send(0, roce(kB, kA));
  send(1, roce(kA, kB));
  settle();
  ASSERT_EQ(sw->fdb()->size(), 2u);
  now += 3'000 * kMs;
  settle();
  ASSERT_TRUE(fdb().empty());
  EXPECT_EQ(sw->fdb()->size(), 0u);
  EXPECT_EQ(stats_json(*sw)["bridge"]["fdb_entries"], 0);
}

// A station that keeps sending is never aged out, whatever the ageing time (1 s is the least
// the config takes): here one frame every 200 ms for 5 s.
TEST_F(BridgeTest, AnActiveStationIsNotAged) {
  make({{10, {}}, {10, {}}, {10, {}}}, {10}, [](SwitchConfig& c) { c.bridge.ageing_s = 1; });
  send(1, roce(kA, kB));
  settle();
  take_all();
  const uint64_t flooded0 = ctr("flooded");
  for (int i = 0; i < 25; ++i) {
    now += 200 * kMs;
    send(1, roce(kA, kB, kRoceDscp, 0, std::nullopt, 64, i));  // B keeps talking
    settle();
    send(0, roce(kB, kA, kRoceDscp, 0, std::nullopt, 64, i));  // and A to B
    settle();
  }
  take_all();
  EXPECT_EQ(sw->fdb()->aged(), 0u) << "both stations talked every 200 ms";
  EXPECT_EQ(fdb().size(), 2u);
  EXPECT_LE(ctr("flooded") - flooded0, 1u) << "only A's first frame, before A was known, may flood";
}

// ---------------------------------------------------------------------------------------------
// 8. Moves: a station seen on another port moves there (counted once), and traffic follows it.
TEST_F(BridgeTest, StationMovesAndTrafficFollows) {
  make({{10, {}}, {10, {}}, {0, {10}}}, {10});
  send(0, roce(kB, kA));
  send(1, roce(kA, kB));
  settle();
  take_all();
  EXPECT_EQ(send_and_count(1, roce(kA, kB)), (Counts{1, 0, 0}));
  send(2, raw_l2(kBcast, kA, tag(10)));  // A is behind the trunk now
  settle();
  take_all();
  EXPECT_EQ(fdb().at({10, kA}), 2);
  EXPECT_EQ(sw->fdb()->moved(), 1u);
  EXPECT_EQ(sw->fdb()->learned(), 2u) << "a move is not a new station";
  const PacketSpec ba = roce(kA, kB);
  send(1, ba);
  settle();
  auto out = take_all();
  EXPECT_EQ(out[0].size(), 0u) << "not to A's old port";
  ASSERT_EQ(out[2].size(), 1u);
  EXPECT_EQ(out[2][0].vid(), 10);
  // A keeps sending from there: no more moves; then back to p0: a second one.
  send(2, raw_l2(kB, kA, tag(10)));
  settle();
  EXPECT_EQ(sw->fdb()->moved(), 1u);
  send(0, raw_l2(kB, kA));
  settle();
  take_all();
  EXPECT_EQ(sw->fdb()->moved(), 2u);
  EXPECT_EQ(send_and_count(1, roce(kA, kB)), (Counts{1, 0, 0}));
  const nlohmann::json j = stats_json(*sw);
  EXPECT_EQ(j["bridge"]["moved"], 2);
}

// ---------------------------------------------------------------------------------------------
// Learning's limits: the learn ring holds 1024 reports between two polls of the control
// thread (learn_ring_full beyond, relearned when the station sends again); the FDB holds
// fdb_size stations (fdb_full beyond).
TEST_F(BridgeTest, LearnRingFullAndFdbFull) {
  make({{10, {}}, {10, {}}}, {10});
  send(1, roce(kBcast, kB));
  settle();
  take_all();
  // 1100 new stations on p0 within worker polls and no control-thread poll in between.
  constexpr int kN = 1100;
  auto station = [](int i) { return fmt::format("02:00:00:01:{:02x}:{:02x}", i >> 8, i & 0xff); };
  for (int sent = 0; sent < kN;) {
    for (int k = 0; k < 300 && sent < kN; ++k, ++sent) send(0, roce(kB, station(sent)));
    sw->poll(0, now += kStep);
  }
  // An rte_ring of 1024 slots holds 1023.
  constexpr int kRing = 1023;
  EXPECT_EQ(ctr("learn_reports"), 1u + kRing);
  EXPECT_EQ(ctr("learn_ring_full"), static_cast<uint64_t>(kN - kRing));
  EXPECT_EQ(sw->fdb()->pending(), static_cast<uint64_t>(kRing));
  settle();
  EXPECT_EQ(sw->fdb()->pending(), 0u);
  EXPECT_EQ(sw->fdb()->learned(), 1u + kRing);
  EXPECT_EQ(counts(), (Counts{0, static_cast<std::size_t>(kN)})) << "all forwarded to B";
  for (int i = kRing; i < kN; ++i) send(0, roce(kB, station(i)));
  settle();
  EXPECT_EQ(sw->fdb()->learned(), 1u + kN) << "the stations the ring missed, learned on their next frame";
  EXPECT_EQ(ctr("learn_ring_full"), static_cast<uint64_t>(kN - kRing));
  EXPECT_EQ(sw->fdb()->full(), 0u);
  take_all();
}

TEST_F(BridgeTest, FdbFull) {
  make({{10, {}}, {10, {}}}, {10}, [](SwitchConfig& c) { c.bridge.fdb_size = 64; });
  for (int i = 0; i < 100; ++i) send(0, roce(kBcast, fmt::format("02:00:00:02:00:{:02x}", i)));
  settle();
  take_all();
  EXPECT_EQ(sw->fdb()->learned() + sw->fdb()->full(), 100u);
  EXPECT_EQ(sw->fdb()->rows().size(), sw->fdb()->learned());
  EXPECT_LE(sw->fdb()->learned(), 64u);
  EXPECT_GE(sw->fdb()->learned(), 48u) << "a table of 64 holds most of 64";
  EXPECT_EQ(stats_json(*sw)["bridge"]["fdb_full"], sw->fdb()->full());
}

// Aged entries make room: with fdb_size 64, 40 stations learned then aged, 40 new ones must all
// be learned (the table is empty).
TEST_F(BridgeTest, AgedEntriesMakeRoomForNewStations) {
  make({{10, {}}, {10, {}}}, {10}, [](SwitchConfig& c) {
    c.bridge.fdb_size = 64;
    c.bridge.ageing_s = 1;
  });
  for (int i = 0; i < 40; ++i) send(0, roce(kBcast, fmt::format("02:00:00:03:00:{:02x}", i)));
  settle();
  ASSERT_EQ(sw->fdb()->learned(), 40u);
  now += 3'000 * kMs;
  settle();
  ASSERT_EQ(sw->fdb()->aged(), 40u);
  ASSERT_TRUE(sw->fdb()->rows().empty());
  for (int i = 0; i < 40; ++i) send(0, roce(kBcast, fmt::format("02:00:00:04:00:{:02x}", i)));
  settle();
  EXPECT_EQ(sw->fdb()->full(), 0u);
  EXPECT_EQ(sw->fdb()->learned(), 80u);
  EXPECT_EQ(sw->fdb()->rows().size(), 40u);
  take_all();
}

// ---------------------------------------------------------------------------------------------
// 10. Two workers: p0 and p1 on worker 0, p2 (tagged) and p3 on worker 1. Floods and known
// unicast cross the handoff rings; both workers' learn rings are read.
TEST_F(BridgeTest, TwoWorkersLearnAndForward) {
  make({{10, {}, 0}, {10, {}, 0}, {0, {10}, 1}, {10, {}, 1}}, {10});
  ASSERT_EQ(sw->num_workers(), 2);
  auto out = (send(0, roce(kB, kA)), settle(), take_all());
  EXPECT_EQ(out[0].size(), 0u);
  EXPECT_EQ(out[1].size(), 1u);
  ASSERT_EQ(out[2].size(), 1u);
  EXPECT_EQ(out[2][0].vid(), 10) << "tagged by worker 0 for worker 1's port";
  EXPECT_EQ(out[3].size(), 1u);
  EXPECT_EQ(fdb().at({10, kA}), 0) << "from worker 0's ring";
  // B behind p2 (worker 1) answers: to A on p0 (worker 0).
  out = (send(2, roce(kA, kB, kRoceDscp, 0, tag(10))), settle(), take_all());
  ASSERT_EQ(out[0].size(), 1u);
  EXPECT_FALSE(out[0][0].tagged());
  EXPECT_EQ(out[1].size() + out[2].size() + out[3].size(), 0u);
  EXPECT_EQ(fdb().at({10, kB}), 2) << "from worker 1's ring";
  EXPECT_EQ(send_and_count(0, roce(kB, kA)), (Counts{0, 0, 1, 0}));
  EXPECT_EQ(send_and_count(3, roce(kA, kC)), (Counts{1, 0, 0, 0})) << "worker 1 to worker 0";
  EXPECT_EQ(ctr("flooded"), 1u);
  EXPECT_EQ(ctr("forwarded"), 3u);
  EXPECT_EQ(sw->fdb()->learned(), 3u);
  // Broadcasts from each side.
  EXPECT_EQ(send_and_count(3, raw_l2(kBcast, kC)), (Counts{1, 1, 1, 0}));
  EXPECT_EQ(send_and_count(1, raw_l2(kBcast, "02:00:00:00:aa:0d")), (Counts{1, 0, 1, 1}));
  EXPECT_EQ(sw->totals().replicated, 2u + 2 + 2);
}

// Two workers, priority 3 lossless on p0: a broadcast's copies to a port of the same worker and
// to ports of the other (charged to p0's PG before the handoff) all give their charge back once
// sent.
TEST_F(BridgeTest, TwoWorkersLosslessFloodGivesItsPgChargeBack) {
  make({{10, {}, 0}, {10, {}, 0}, {10, {}, 1}, {0, {10}, 1}}, {10}, [](SwitchConfig& c) {
    c.mmu.pfc_enable = 1u << kTc3;
    c.ports[0].lossless.pg[kTc3] = {.lossless = true, .xoff = 40 * kCells, .xon = 20 * kCells, .headroom = 40 * kCells};
  });
  for (uint32_t i = 0; i < 6; ++i) send(0, roce(kBcast, kA, kRoceDscp, 0, std::nullopt, kPayload, i));
  sw->poll(0, now += kStep);
  EXPECT_GT(sw->buffer().pg_level(0, kTc3), 0u) << "charged on the ingress worker";
  settle();
  EXPECT_EQ(counts(), (Counts{0, 6, 6, 6}));
  EXPECT_EQ(sw->buffer().pg_level(0, kTc3), 0u) << "every copy gave its cells back";
  EXPECT_EQ(sw->totals().replicated, 12u);
  EXPECT_EQ(sw->lossless_drops(), 0u);
}

// A jumbo frame in a chain of segments (as a scattering NIC delivers it) is flooded whole: the
// copies are chains too, the tag popped or kept on each.
TEST_F(BridgeTest, ChainedJumboFrameIsFloodedWhole) {
  make({{10, {}}, {10, {}}, {0, {10}}, {0, {10}}}, {10});
  const PacketSpec in = roce(kBcast, kB, kRoceDscp, 0, tag(10, 3), 6000);
  links[2]->inject(in.bytes());  // from the test pool, in 2 KB segments
  settle();
  auto out = take_all();
  ASSERT_EQ(out[0].size(), 1u);
  ASSERT_EQ(out[1].size(), 1u);
  ASSERT_EQ(out[3].size(), 1u);
  EXPECT_EQ(out[2].size(), 0u);
  for (int p : {0, 1}) {
    EXPECT_FALSE(out[p][0].tagged());
    EXPECT_EQ(out[p][0].after_tag(), after_tag(in.bytes())) << p;
  }
  EXPECT_EQ(out[3][0].bytes, in.bytes());
}


}  // namespace
}  // namespace rs::test
