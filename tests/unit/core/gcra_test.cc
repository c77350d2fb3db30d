// The GCRA rate limit (core/gcra.h) against a token bucket's arithmetic: `burst` packets at
// once, then one per interval; a refused packet does not move the stream's time.
#include "dataplane/core/gcra.h"

#include <gtest/gtest.h>

namespace rs {
namespace {

TEST(Gcra, BurstThenOnePerInterval) {
  const GcraRate r = GcraRate::of(1000, 3);  // 1 ms apart, 3 at once
  EXPECT_EQ(r.interval_ns, 1'000'000u);
  EXPECT_EQ(r.tolerance_ns, 2'000'000u);
  uint64_t tat = 0;
  const uint64_t t0 = 5'000'000'000;
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(r.admit(tat, t0)) << i;
  EXPECT_FALSE(r.admit(tat, t0));
  EXPECT_FALSE(r.admit(tat, t0 + 999'999)) << "not before one interval";
  EXPECT_EQ(tat, t0 + 3'000'000) << "refusals leave the stream's time alone";
  EXPECT_TRUE(r.admit(tat, t0 + 1'000'000));
  EXPECT_FALSE(r.admit(tat, t0 + 1'000'000));
  // Idle for long: the burst is back, never more.
  int n = 0;
  while (r.admit(tat, t0 + 10'000'000'000)) ++n;
  EXPECT_EQ(n, 3);
}

TEST(Gcra, ABurstOfOneIsStrictPacingAndZeroPpsHasNoInterval) {
  const GcraRate r = GcraRate::of(4, 1);  // 250 ms apart
  uint64_t tat = 0;
  EXPECT_TRUE(r.admit(tat, 1'000'000'000));
  EXPECT_FALSE(r.admit(tat, 1'249'999'999));
  EXPECT_TRUE(r.admit(tat, 1'250'000'000));
  EXPECT_EQ(GcraRate::of(0, 100).interval_ns, 0u) << "callers decide what pps 0 means (none, or no limit)";
  EXPECT_EQ(GcraRate::of(2'000'000'000, 1).interval_ns, 1u) << "never a zero interval for a rate above 1 Gpps";
}

}  // namespace
}  // namespace rs
