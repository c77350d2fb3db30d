// The receive-side flow tracker: out_of_order, late and missing for in-order, reordered and
// lossy PSN sequences, the 24-bit wrap, the window's edge, the fixed capacity, and a reader
// thread walking the table while the writer fills it.
#include "dataplane/emu/rx_tracker.h"

#include <gtest/gtest.h>

#include <atomic>
#include <initializer_list>
#include <thread>

namespace rs {
namespace {

constexpr uint32_t kSrc = 0x0209000a;  // 10.0.9.2 in network order (little-endian host)
constexpr uint32_t kQp = 0x77;

RxFlowStats feed(RxTracker& t, std::initializer_list<uint32_t> psns, uint32_t qp = kQp) {
  uint64_t now = 1000;
  for (uint32_t p : psns) t.on_packet(kSrc, qp, p, 1024, 1082, now++);
  RxFlowStats s;
  EXPECT_TRUE(t.find(kSrc, qp, s));
  return s;
}

void expect_counts(const RxFlowStats& s, uint64_t ooo, uint64_t late, uint64_t missing) {
  EXPECT_EQ(s.out_of_order, ooo);
  EXPECT_EQ(s.late, late);
  EXPECT_EQ(s.missing, missing);
}

TEST(RxTracker, InOrderFlowHasNoReorderingOrLoss) {
  RxTracker t;
  for (uint32_t p = 0; p < 10000; ++p) t.on_packet(kSrc, kQp, p, 1024, 1082, p);
  RxFlowStats s;
  ASSERT_TRUE(t.find(kSrc, kQp, s));
  expect_counts(s, 0, 0, 0);
  EXPECT_EQ(s.packets, 10000u);
  EXPECT_EQ(s.bytes, 10000u * 1024);
  EXPECT_EQ(s.frame_bytes, 10000u * 1082);
  EXPECT_EQ(s.first_ns, 0u);
  EXPECT_EQ(s.last_ns, 9999u);
  EXPECT_EQ(t.untracked(), 0u);
}

TEST(RxTracker, SwappedPairIsOneGapAndOneLateArrival) {
  RxTracker t;
  expect_counts(feed(t, {0, 1, 3, 2, 4}), 1, 1, 0);
}

TEST(RxTracker, LostPsnStaysMissing) {
  RxTracker t;
  expect_counts(feed(t, {0, 1, 3, 4, 5}), 1, 0, 1);
}

TEST(RxTracker, LateArrivalsFillTheirGapsOnce) {
  RxTracker t;
  // 2..4 skipped, then 4 and 2 come late, 4 again (a duplicate: late, fills nothing).
  expect_counts(feed(t, {0, 1, 5, 4, 2, 4, 6}), 1, 3, 1);
}

TEST(RxTracker, NothingBeforeTheFirstPacketIsMissing) {
  RxTracker t;
  // A NIC starts at any PSN; one overtaken at the very start is late, not a gap.
  expect_counts(feed(t, {100, 99, 101}), 0, 1, 0);
}

TEST(RxTracker, PsnWrapsAt24Bits) {
  RxTracker a;
  expect_counts(feed(a, {0xFFFFFD, 0xFFFFFE, 0xFFFFFF, 0, 1, 2}), 0, 0, 0);
  RxTracker b;
  expect_counts(feed(b, {0xFFFFFE, 0, 1}), 1, 0, 1);  // 0xFFFFFF lost across the wrap
  RxTracker c;
  expect_counts(feed(c, {0xFFFFFE, 0, 1, 0xFFFFFF}), 1, 1, 0);  // ...or only late
  RxTracker d;
  expect_counts(feed(d, {0xFFFFFF, 1, 0, 2}), 1, 1, 0);
}

TEST(RxTracker, GapsBeyondTheWindowStayMissing) {
  constexpr uint32_t W = RxTracker::kWindow;
  RxTracker t;
  // 1 .. W+9 skipped; PSN 1 arrives after it fell out of the window, W+9 while still in it.
  RxFlowStats s = feed(t, {0, W + 10, 1, W + 9});
  EXPECT_EQ(s.out_of_order, 1u);
  EXPECT_EQ(s.late, 2u);
  EXPECT_EQ(s.missing, W + 9 - 1);
  // A gap of less than a window, wrapping round the bitmap.
  RxTracker u;
  s = feed(u, {W - 3, W + 100, W + 5, W - 1});
  expect_counts(s, 1, 2, 102 - 2);
}

TEST(RxTracker, FlowsAreKeyedBySourceAndQp) {
  RxTracker t;
  t.on_packet(kSrc, 1, 0, 10, 100, 0);
  t.on_packet(kSrc, 2, 5, 10, 100, 0);
  t.on_packet(kSrc + 1, 1, 7, 10, 100, 0);
  t.on_packet(kSrc, 1, 1, 10, 100, 0);
  int n = 0;
  t.for_each([&](const RxFlowStats& s) {
    ++n;
    expect_counts(s, 0, 0, 0);
  });
  EXPECT_EQ(n, 3);
  RxFlowStats s;
  ASSERT_TRUE(t.find(kSrc, 1, s));
  EXPECT_EQ(s.packets, 2u);
  EXPECT_FALSE(t.find(kSrc + 2, 1, s));
}

TEST(RxTracker, FlowsBeyondCapacityAreUntracked) {
  RxTracker t(4);
  for (uint32_t qp = 1; qp <= 6; ++qp)
    for (uint32_t p = 0; p < 3; ++p) t.on_packet(kSrc, qp, p, 10, 100, 0);
  int n = 0;
  t.for_each([&](const RxFlowStats& s) {
    ++n;
    EXPECT_EQ(s.packets, 3u);
    EXPECT_LE(s.qp, 4u) << "the first four flows to arrive hold the table";
  });
  EXPECT_EQ(n, 4);
  EXPECT_EQ(t.untracked(), 2u * 3);
  EXPECT_THROW(RxTracker(0), std::invalid_argument);
}

// The main thread samples while the worker writes: published slots are whole (key set, counts
// only growing), and the final reading is exact.
TEST(RxTracker, ReadersRunConcurrentlyWithTheWriter) {
  constexpr uint32_t kFlows = 512, kRounds = 400;
  RxTracker t(kFlows);
  std::atomic<bool> done{false};
  std::thread reader([&] {
    while (!done.load()) {
      t.for_each([&](const RxFlowStats& s) {
        EXPECT_GE(s.qp, 1u);
        EXPECT_LE(s.qp, kFlows);
        EXPECT_LE(s.packets, kRounds);
      });
    }
  });
  for (uint32_t r = 0; r < kRounds; ++r)
    for (uint32_t q = 1; q <= kFlows; ++q) t.on_packet(kSrc, q, r, 100, 150, r);
  done = true;
  reader.join();
  int n = 0;
  t.for_each([&](const RxFlowStats& s) {
    ++n;
    EXPECT_EQ(s.packets, kRounds);
    expect_counts(s, 0, 0, 0);
  });
  EXPECT_EQ(n, static_cast<int>(kFlows));
}

}  // namespace
}  // namespace rs
