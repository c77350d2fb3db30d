// DCQCN's reaction point (dataplane/nic/dcqcn.h) step by step against the HPCC simulator's
// formulas (rdma-hw.cc, the "Mlx" reaction point), and the notification point's CNP pacing.
#include "dataplane/nic/dcqcn.h"
#include "dataplane/nic/fct_histogram.h"

#include <gtest/gtest.h>

#include <cmath>

namespace rs::nic {
namespace {

constexpr uint64_t kUs = 1000, kT0 = 1'000'000'000;
constexpr double kG = 4.0 / 1024;

TEST(Dcqcn, AQpNeverMarkedSendsAtLineRate) {
  DcqcnRp rp({}, 100);
  rp.advance(kT0 + 1'000'000 * kUs);
  EXPECT_FALSE(rp.limiting());
  EXPECT_DOUBLE_EQ(rp.rate_gbps(), 100);
}

TEST(Dcqcn, TheFirstCnpCutsAtTheNextCheckThenFastRecoveryAdditiveAndHyperIncrease) {
  DcqcnConfig c;  // HPCC's: t_dec 4 us, t_inc 300 us, F = 1, g = 1/256, alpha 1
  DcqcnRp rp(c, 100);
  rp.on_cnp(kT0);
  EXPECT_TRUE(rp.limiting());
  rp.advance(kT0 + 4 * kUs - 1);
  EXPECT_DOUBLE_EQ(rp.rate_gbps(), 100) << "not before the check";
  rp.advance(kT0 + 4 * kUs);
  // Alpha started at 1 and decayed at 1, 2, 3 and 4 us (no CNP since).
  const double alpha = std::pow(1 - kG, 4);
  double rate = 100 * (1 - alpha / 2), target = 100;
  EXPECT_NEAR(rp.rate_gbps(), rate, 1e-9);
  EXPECT_EQ(rp.counters().cuts, 1u);
  // 300 us on: stage 0 < F, fast recovery toward the target (not clamped: no increase yet).
  rp.advance(kT0 + 304 * kUs - 1);
  EXPECT_NEAR(rp.rate_gbps(), rate, 1e-9);
  rp.advance(kT0 + 304 * kUs);
  rate = (rate + target) / 2;
  EXPECT_NEAR(rp.rate_gbps(), rate, 1e-9);
  EXPECT_EQ(rp.counters().fast_recovery, 1u);
  // Stage 1 = F: additive (the target is at the line rate already and stays there).
  rp.advance(kT0 + 604 * kUs);
  rate = (rate + target) / 2;
  EXPECT_NEAR(rp.rate_gbps(), rate, 1e-9);
  EXPECT_EQ(rp.counters().additive, 1u);
  rp.advance(kT0 + 904 * kUs);
  EXPECT_EQ(rp.counters().hyper, 1u);
  EXPECT_DOUBLE_EQ(rp.target_gbps(), 100) << "never above the line rate";
  // Alpha keeps decaying with no CNP: 904 updates since the first.
  EXPECT_NEAR(rp.alpha(), std::pow(1 - kG, 904), 1e-12);
}

TEST(Dcqcn, ASecondCnpClampsTheTargetAfterAnIncreaseAndRaisesAlpha) {
  DcqcnRp rp({}, 100);
  rp.on_cnp(kT0);
  rp.advance(kT0 + 304 * kUs);  // cut at 4 us, fast recovery at 304 us
  const double before = rp.rate_gbps();
  const double a0 = rp.alpha();
  rp.on_cnp(kT0 + 304 * kUs + 500);
  rp.advance(kT0 + 306 * kUs);
  // The alpha update at 305 us saw the CNP: (1 - g) a + g; at 306 us it decays.
  const double a = ((1 - kG) * a0 + kG) * (1 - kG);
  EXPECT_NEAR(rp.alpha(), a, 1e-12);
  rp.advance(kT0 + 308 * kUs);  // the check at 308 us (every 4 us from the first CNP)
  EXPECT_EQ(rp.counters().cuts, 2u);
  EXPECT_NEAR(rp.target_gbps(), before, 1e-9) << "an increase happened since the last cut: the target is clamped";
  EXPECT_NEAR(rp.rate_gbps(), before * (1 - a * (1 - kG) * (1 - kG) / 2), 1e-9);
}

TEST(Dcqcn, SteadyCnpsDriveTheRateToTheMinimumAndSilenceBringsItBack) {
  DcqcnRp rp({}, 100);
  uint64_t t = kT0;
  for (; t < kT0 + 20'000 * kUs; t += 4 * kUs) rp.on_cnp(t);
  rp.advance(t);
  EXPECT_NEAR(rp.rate_gbps(), 1.0, 1e-9) << "rpg_min_rate 1000 Mb/s";
  rp.advance(t + 1'000'000 * kUs);
  EXPECT_NEAR(rp.rate_gbps(), 100, 0.01);
}

TEST(Dcqcn, TheByteCounterAddsIncreasesWhenOn) {
  DcqcnConfig c;
  c.rpg_byte_reset = 1 << 20;
  DcqcnRp rp(c, 100);
  rp.on_sent(10 << 20, kT0);  // before any CNP: nothing to count
  rp.on_cnp(kT0);
  rp.advance(kT0 + 4 * kUs);
  const double cut = rp.rate_gbps();
  rp.on_sent((1 << 20) - 1, kT0 + 5 * kUs);
  EXPECT_DOUBLE_EQ(rp.rate_gbps(), cut);
  rp.on_sent(1, kT0 + 5 * kUs);
  EXPECT_EQ(rp.counters().fast_recovery, 1u);
  EXPECT_NEAR(rp.rate_gbps(), (cut + 100) / 2, 1e-9);
}

TEST(Dcqcn, CnpsArePacedPerQp) {
  CnpPacer p(DcqcnConfig{});
  EXPECT_TRUE(p.due(kT0));
  EXPECT_FALSE(p.due(kT0 + 1));
  EXPECT_FALSE(p.due(kT0 + 50 * kUs - 1));
  EXPECT_TRUE(p.due(kT0 + 50 * kUs));
  DcqcnConfig c;
  c.min_time_between_cnps_us = 0;
  CnpPacer every(c);
  EXPECT_TRUE(every.due(kT0));
  EXPECT_TRUE(every.due(kT0));
}

// The completion-time histogram: percentiles within a bucket (25 %) of the exact ones, the
// mean and maximum exact, snapshots that add up, and CDF steps that hold every sample once.
TEST(FctHistogram, PercentilesWithinABucketOfTheExactOnes) {
  FctHistogram h;
  for (uint64_t v = 1; v <= 100000; ++v) h.add(v * 10);
  const FctCounts c = h.snapshot();
  EXPECT_EQ(c.count, 100000u);
  EXPECT_DOUBLE_EQ(c.mean(), 10 * 50000.5);
  EXPECT_EQ(c.max, 1'000'000u);
  EXPECT_NEAR(c.percentile(0.5), 500'000, 0.13 * 500'000);
  EXPECT_NEAR(c.percentile(0.99), 990'000, 0.13 * 990'000);
  EXPECT_EQ(FctCounts().percentile(0.5), 0);
  for (uint64_t v : {0ull, 1ull, 3ull, 4ull, 7ull, 1000ull, 1ull << 40, ~0ull})
    EXPECT_LE(FctCounts::bucket(v), FctCounts::kBuckets - 1) << v;
  // Every value lies in its bucket's range.
  for (uint64_t v : {4ull, 5ull, 7ull, 8ull, 1000ull, 1023ull, 1024ull, 123456789ull}) {
    const unsigned b = FctCounts::bucket(v);
    EXPECT_LE(FctCounts::lower(b), static_cast<double>(v)) << v;
    EXPECT_GT(FctCounts::lower(b + 1), static_cast<double>(v)) << v;
  }
}

TEST(FctHistogram, CdfStepsAndSums) {
  FctHistogram a, b;
  for (int i = 0; i < 90; ++i) a.add(10'000);
  for (int i = 0; i < 10; ++i) b.add(1'000'000);
  FctCounts all = a.snapshot();
  all += b.snapshot();
  EXPECT_EQ(all.count, 100u);
  EXPECT_EQ(all.max, 1'000'000u);
  const auto steps = all.steps();
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_GT(steps[0].first, 10'000);
  EXPECT_LE(steps[0].first, 12'500) << "the step is the bucket's upper edge, within 25 %";
  EXPECT_EQ(steps[0].second, 90u);
  EXPECT_GT(steps[1].first, 1'000'000);
  EXPECT_EQ(steps[1].second, 10u);
  EXPECT_NEAR(all.percentile(0.5), 10'000, 1250);
  EXPECT_NEAR(all.percentile(0.95), 1'000'000, 125'000);
  EXPECT_LE(all.percentile(0.999), 1'000'000) << "never above the largest sample";
}

}  // namespace
}  // namespace rs::nic
