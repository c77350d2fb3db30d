// DWRR on its own: byte shares follow the weights whatever the packet sizes, idle queues bank
// no credit, and a queue that is not eligible (paused by PFC) never holds the others up.
#include "dataplane/tm/sched/dwrr.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <numeric>
#include <vector>

namespace rs {
namespace {

// Eight backlogged queues with a fixed packet size each (0 = the queue has no packets).
struct Backlog {
  std::array<uint32_t, 8> size{};
  std::array<uint64_t, 8> bytes{};
  std::array<uint64_t, 8> packets{};

  uint8_t nonempty() const {
    uint8_t m = 0;
    for (int q = 0; q < 8; ++q)
      if (size[q]) m |= static_cast<uint8_t>(1u << q);
    return m;
  }
  uint64_t total() const { return std::accumulate(bytes.begin(), bytes.end(), uint64_t{0}); }
};

// Lets the scheduler pick `n` packets among the eligible queues (never emptied).
void serve(Dwrr& d, Backlog& b, uint64_t n, uint8_t eligible_mask = 0xFF) {
  for (uint64_t i = 0; i < n; ++i) {
    const uint8_t elig = b.nonempty() & eligible_mask;
    const int q = d.select(elig, b.size.data());
    ASSERT_GE(q, 0);
    ASSERT_TRUE(elig & (1u << q)) << "picked queue " << q << " which is not eligible";
    b.bytes[q] += b.size[q];
    ++b.packets[q];
    d.on_sent(q, b.size[q], false);
  }
}

void expect_shares(const Backlog& b, const std::array<uint32_t, 8>& weights, uint8_t active, double tol) {
  uint64_t wsum = 0;
  for (int q = 0; q < 8; ++q)
    if (active & (1u << q)) wsum += weights[q];
  const double total = static_cast<double>(b.total());
  for (int q = 0; q < 8; ++q) {
    const double want = (active & (1u << q)) ? static_cast<double>(weights[q]) / static_cast<double>(wsum) : 0.0;
    const double got = static_cast<double>(b.bytes[q]) / total;
    // `tol` is relative to the queue's own share: 2 % of 1/7 is 0.29 percentage points.
    EXPECT_NEAR(got, want, want * tol + 1e-12) << "queue " << q;
  }
}

TEST(Dwrr, NothingEligibleReturnsMinusOne) {
  Dwrr d;
  std::array<uint32_t, 8> head{};
  EXPECT_EQ(d.select(0, head.data()), -1);
}

TEST(Dwrr, ByteSharesFollowWeightsOneTwoFour) {
  Dwrr d;
  const std::array<uint32_t, 8> w{1, 2, 4, 1, 1, 1, 1, 1};
  for (int q = 0; q < 8; ++q) d.set_weight(q, w[q]);
  Backlog b;
  b.size[0] = b.size[1] = b.size[2] = 1000;
  serve(d, b, 70'000);
  expect_shares(b, w, 0b111, 0.02);
}

TEST(Dwrr, ByteSharesIgnorePacketSize) {
  // Packet-count round robin would give the 64-byte queue a sliver; DWRR counts bytes, so
  // each queue gets its weight's share of the link whatever its frames look like.
  Dwrr d;
  const std::array<uint32_t, 8> w{1, 2, 4, 1, 1, 1, 1, 1};
  for (int q = 0; q < 8; ++q) d.set_weight(q, w[q]);
  Backlog b;
  b.size[0] = 64;
  b.size[1] = 9000;
  b.size[2] = 1500;
  serve(d, b, 200'000);
  expect_shares(b, w, 0b111, 0.02);
}

TEST(Dwrr, SonicDefaultWeightsFourteenFifteen) {
  // SONiC's default: 15 for the lossless queues 3 and 4, 14 for the rest; RoCE (1 KiB + headers)
  // on queue 3, small CNP-like frames on 4, mixed best effort elsewhere.
  Dwrr d;
  const std::array<uint32_t, 8> w{14, 14, 14, 15, 15, 14, 14, 14};
  for (int q = 0; q < 8; ++q) d.set_weight(q, w[q]);
  Backlog b;
  b.size = {1500, 64, 512, 1082, 78, 9000, 256, 1024};
  serve(d, b, 400'000);
  expect_shares(b, w, 0xFF, 0.02);
}

TEST(Dwrr, WeightZeroIsTreatedAsOne) {
  // A zero weight would starve the queue forever (or spin the scheduler): it counts as 1.
  Dwrr d;
  d.set_weight(0, 0);
  d.set_weight(1, 3);
  Backlog b;
  b.size[0] = b.size[1] = 700;
  serve(d, b, 40'000);
  std::array<uint32_t, 8> w{1, 3};
  expect_shares(b, w, 0b11, 0.02);
}

TEST(Dwrr, EmptyQueueDoesNotBankCredit) {
  Dwrr d;
  d.set_weight(0, 1);
  d.set_weight(1, 1);
  Backlog b;
  b.size[1] = 1000;
  // Queue 0 is idle while queue 1 sends for a long time: the scheduler visits queue 0's slot
  // thousands of times, and none of those visits may turn into saved-up credit.
  serve(d, b, 50'000);
  ASSERT_EQ(b.packets[0], 0u);

  // Queue 0 wakes up. With equal weights it must alternate with queue 1 quantum by quantum,
  // never send a long run of back-to-back packets.
  b.size[0] = 1000;
  b.bytes = {};
  int run = 0, longest = 0, last = -1;
  for (int i = 0; i < 2'000; ++i) {
    const int q = d.select(b.nonempty(), b.size.data());
    ASSERT_GE(q, 0);
    run = q == last ? run + 1 : 1;
    last = q;
    if (q == 0) longest = std::max(longest, run);
    b.bytes[q] += b.size[q];
    d.on_sent(q, b.size[q], false);
  }
  // One quantum (1024 bytes) plus a leftover deficit is at most two 1000-byte packets.
  EXPECT_LE(longest, 2);
  EXPECT_NEAR(static_cast<double>(b.bytes[0]) / static_cast<double>(b.total()), 0.5, 0.01);
}

TEST(Dwrr, QueueThatDrainsLosesItsDeficit) {
  // Queue 0 (weight 8) sends one small packet and empties: its remaining ~8 KB of deficit must
  // be forfeited, or it could later burst 8 KB ahead of its share.
  Dwrr d;
  d.set_weight(0, 8);
  d.set_weight(1, 1);
  std::array<uint32_t, 8> head{};
  head[0] = 64;
  head[1] = 1000;
  ASSERT_EQ(d.select(0b11, head.data()), 0);
  d.on_sent(0, 64, /*now_empty=*/true);
  // Queue 1 sends on its own for a while; then both are backlogged with 1000-byte packets.
  for (int i = 0; i < 10; ++i) {
    ASSERT_EQ(d.select(0b10, head.data()), 1);
    d.on_sent(1, 1000, false);
  }
  head[0] = 1000;
  Backlog b;
  b.size[0] = 1000;
  b.size[1] = 1000;
  // In the first round queue 0 may send at most its fresh quantum (8 x 1024 -> 8 packets).
  int q0_before_q1 = 0;
  for (;;) {
    const int q = d.select(0b11, b.size.data());
    d.on_sent(q, 1000, false);
    if (q == 1 && q0_before_q1 > 0) break;
    if (q == 0) ++q0_before_q1;
    ASSERT_LT(q0_before_q1, 100) << "queue 1 is starved";
  }
  EXPECT_LE(q0_before_q1, 8);
}

TEST(Dwrr, IneligibleQueueDoesNotBlockOthers) {
  // Queue 2 has the biggest weight and packets, but PFC paused it: the others share the link
  // by their own weights and the scheduler never returns the paused queue.
  Dwrr d;
  const std::array<uint32_t, 8> w{1, 2, 4, 1, 1, 1, 1, 1};
  for (int q = 0; q < 8; ++q) d.set_weight(q, w[q]);
  Backlog b;
  b.size[0] = 300;
  b.size[1] = 1500;
  b.size[2] = 1500;
  serve(d, b, 30'000, static_cast<uint8_t>(~0b100));
  EXPECT_EQ(b.packets[2], 0u);
  expect_shares(b, w, 0b011, 0.02);

  // Resumed, queue 2 takes its 4/7 again.
  b.bytes = {};
  serve(d, b, 60'000);
  expect_shares(b, w, 0b111, 0.02);
}

TEST(Dwrr, LongPauseBanksNoCredit) {
  // A paused queue keeps the deficit it had, but the scheduler passing over it while paused
  // must not add quanta: after a long pause it resumes at its share, not with a burst.
  Dwrr d;
  d.set_weight(0, 1);
  d.set_weight(1, 1);
  Backlog b;
  b.size[0] = 1000;
  b.size[1] = 1000;
  serve(d, b, 1'000);
  serve(d, b, 10'000, static_cast<uint8_t>(0b10));  // queue 0 paused, still backlogged
  b.bytes = {};
  int run = 0, longest = 0, last = -1;
  for (int i = 0; i < 4'000; ++i) {
    const int q = d.select(b.nonempty(), b.size.data());
    ASSERT_GE(q, 0);
    run = q == last ? run + 1 : 1;
    last = q;
    if (q == 0) longest = std::max(longest, run);
    b.bytes[q] += b.size[q];
    d.on_sent(q, b.size[q], false);
  }
  // Retained deficit (< one packet) plus one fresh quantum: at most two packets in a row.
  EXPECT_LE(longest, 2);
  EXPECT_NEAR(static_cast<double>(b.bytes[0]) / static_cast<double>(b.total()), 0.5, 0.01);
}

}  // namespace
}  // namespace rs
