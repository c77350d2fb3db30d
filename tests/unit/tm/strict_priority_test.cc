// Strict priority: the highest-numbered eligible queue always wins (queue 7 highest, as SONiC
// numbers them), so lower queues starve while a higher one has packets.
#include "dataplane/tm/sched/strict_priority.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>

namespace rs {
namespace {

TEST(StrictPriority, NothingEligibleReturnsMinusOne) { EXPECT_EQ(StrictPriority::select(0), -1); }

TEST(StrictPriority, PicksTheHighestEligibleQueue) {
  EXPECT_EQ(StrictPriority::select(0b0000'0001), 0);
  EXPECT_EQ(StrictPriority::select(0b1000'0000), 7);
  EXPECT_EQ(StrictPriority::select(0b1111'1111), 7);
  EXPECT_EQ(StrictPriority::select(0b0001'1001), 4);
  EXPECT_EQ(StrictPriority::select(0b0100'0110), 6);
}

TEST(StrictPriority, EveryMaskPicksItsTopBit) {
  // Exhaustive over all 255 non-empty masks: the pick is eligible and nothing above it is.
  for (unsigned m = 1; m < 256; ++m) {
    const int q = StrictPriority::select(static_cast<uint8_t>(m));
    ASSERT_GE(q, 0);
    EXPECT_TRUE(m & (1u << q)) << "mask " << m;
    EXPECT_EQ(m >> (q + 1), 0u) << "mask " << m << " has an eligible queue above " << q;
  }
}

TEST(StrictPriority, LowerQueuesStarveWhileAHigherOneHasPackets) {
  // Queue 5 holds 100 packets, queues 1 and 3 are backlogged forever: queue 5 drains first,
  // completely, before anything else is picked; then queue 3 takes everything.
  std::array<int, 8> backlog{0, 1'000'000, 0, 1'000'000, 0, 100, 0, 0};
  std::array<int, 8> sent{};
  auto mask = [&] {
    uint8_t m = 0;
    for (int q = 0; q < 8; ++q)
      if (backlog[q]) m |= static_cast<uint8_t>(1u << q);
    return m;
  };
  for (int i = 0; i < 100; ++i) {
    const int q = StrictPriority::select(mask());
    ASSERT_EQ(q, 5) << "pick " << i;
    --backlog[q];
    ++sent[q];
  }
  for (int i = 0; i < 10'000; ++i) {
    const int q = StrictPriority::select(mask());
    --backlog[q];
    ++sent[q];
  }
  EXPECT_EQ(sent[5], 100);
  EXPECT_EQ(sent[3], 10'000);
  EXPECT_EQ(sent[1], 0) << "queue 1 must starve while queue 3 has packets";
}

TEST(StrictPriority, PausedHigherQueueLetsLowerOnesThrough) {
  // A PFC-paused queue is simply not in the eligible mask: the next one down goes.
  const uint8_t nonempty = 0b1000'1010;
  const uint8_t paused = 0b1000'0000;
  EXPECT_EQ(StrictPriority::select(nonempty & static_cast<uint8_t>(~paused)), 3);
}

}  // namespace
}  // namespace rs
