// Shaper: what a frame costs on the wire, and that the token bucket holds the configured link
// rate for any packet size and any polling rhythm. The clock is injected: every call gets an
// explicit now_ns, stepped by a seeded generator, so the figures are exact and repeatable.
#include "dataplane/queues/shaper.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "tests/support/seeded_rng.h"

namespace rs {
namespace {

using test::Rng;  // seeded: the same clock rhythm on every machine

struct ShapedRun {
  uint64_t packets = 0;
  uint64_t wire_bytes = 0;
  uint64_t elapsed_ns = 0;
  double gbps() const { return static_cast<double>(wire_bytes) * 8.0 / static_cast<double>(elapsed_ns); }
  double mpps() const { return static_cast<double>(packets) * 1e3 / static_cast<double>(elapsed_ns); }
};

// Offers an endless backlog of `sizes` (cycled) to a shaper at `gbps` for `duration_ns`,
// stepping the clock by 100 ns..10 us at random and sending everything the shaper allows at
// each step, as EgressPort::transmit does.
ShapedRun run_backlogged(double gbps, const std::vector<uint32_t>& sizes, uint64_t duration_ns, uint64_t seed) {
  Shaper s;
  const uint64_t t0 = 1'000'000;  // not zero: the shaper must not assume time starts at 0
  s.configure(gbps, t0);
  Rng rng(seed);
  ShapedRun r;
  std::size_t next = 0;
  uint64_t now = t0;
  while (now - t0 < duration_ns) {
    now = std::min(now + rng.between(100, 10'000), t0 + duration_ns);
    s.refill(now);
    while (s.can_send()) {
      const uint32_t len = sizes[next++ % sizes.size()];
      s.consume(len);
      ++r.packets;
      r.wire_bytes += wire_bytes(len);
    }
  }
  r.elapsed_ns = now - t0;
  return r;
}

// The bucket size the shaper documents: ~20 us of line time, at least two jumbo frames.
uint64_t bucket_bytes(double gbps) {
  return std::max<uint64_t>(2 * 9216 + 64, static_cast<uint64_t>(gbps * 1e9 / 8.0) / 50'000);
}

TEST(WireBytes, AddsFcsPreambleAndGap) {
  // A 64-byte Ethernet frame is 60 bytes in the mbuf (no FCS) and 84 bytes of line time.
  EXPECT_EQ(wire_bytes(60), 84u);
  EXPECT_EQ(wire_bytes(61), 85u);
  EXPECT_EQ(wire_bytes(1500), 1524u);
  EXPECT_EQ(wire_bytes(1514), 1538u);
  EXPECT_EQ(wire_bytes(9216), 9240u);
}

TEST(WireBytes, ShortFramesArePaddedToTheMinimum) {
  // The MAC pads runts to 64 bytes with FCS, so anything up to 60 bytes costs the same.
  EXPECT_EQ(wire_bytes(0), 84u);
  EXPECT_EQ(wire_bytes(1), 84u);
  EXPECT_EQ(wire_bytes(42), 84u);
  EXPECT_EQ(wire_bytes(59), 84u);
}

TEST(Shaper, RateIsConfiguredInBytesPerSecond) {
  Shaper s;
  s.configure(100.0, 0);
  EXPECT_EQ(s.rate_bytes_per_s(), 12'500'000'000u);
  s.configure(1.0, 0);
  EXPECT_EQ(s.rate_bytes_per_s(), 125'000'000u);
  s.configure(400.0, 0);
  EXPECT_EQ(s.rate_bytes_per_s(), 50'000'000'000u);
}

TEST(Shaper, NothingToSendRightAfterConfigure) {
  // The bucket starts empty: a freshly configured port must not emit a burst at t0.
  Shaper s;
  s.configure(100.0, 5'000);
  s.refill(5'000);
  EXPECT_FALSE(s.can_send());
  s.refill(5'001);  // 1 ns at 100 Gb/s is 12.5 bytes of credit: enough to start one frame
  EXPECT_TRUE(s.can_send());
}

TEST(Shaper, TimeGoingBackwardsAddsNoCredit) {
  Shaper s;
  s.configure(10.0, 10'000);
  s.refill(20'000);  // 10 us at 10 Gb/s = 12500 bytes
  uint64_t sent = 0;
  while (s.can_send()) {
    s.consume(1500);
    sent += wire_bytes(1500);
  }
  s.refill(15'000);  // an older timestamp (another worker's clock read) must be ignored
  EXPECT_FALSE(s.can_send());
  EXPECT_GE(sent, 12'500u);
  EXPECT_LT(sent, 12'500u + wire_bytes(1500));
}

struct RateCase {
  double gbps;
  std::vector<uint32_t> sizes;
  const char* name;
};

class ShaperRate : public ::testing::TestWithParam<RateCase> {};

TEST_P(ShaperRate, WithinOnePercentOfLinkRate) {
  const RateCase& c = GetParam();
  // 5 ms is 2,500..1,000,000 steps of the clock and always hundreds of frames or more.
  const ShapedRun r = run_backlogged(c.gbps, c.sizes, 5'000'000, 0x5eed + static_cast<uint64_t>(c.gbps));
  EXPECT_NEAR(r.gbps(), c.gbps, c.gbps * 0.01) << c.name << ": " << r.packets << " packets";
  // The debt rule means the shaper is never behind by more than the current frame either.
  const double ideal = c.gbps * 1e9 / 8.0 * static_cast<double>(r.elapsed_ns) / 1e9;
  EXPECT_LE(static_cast<double>(r.wire_bytes), ideal + 9240.0) << c.name;
}

const std::vector<uint32_t> kMix = {60, 1500, 256, 60, 4096, 1024, 60, 9000, 128, 1500};

INSTANTIATE_TEST_SUITE_P(
    Speeds, ShaperRate,
    ::testing::Values(RateCase{1, {60}, "1G_64B"}, RateCase{1, {1500}, "1G_1500B"}, RateCase{1, kMix, "1G_mix"},
                      RateCase{25, {60}, "25G_64B"}, RateCase{25, {1500}, "25G_1500B"}, RateCase{25, kMix, "25G_mix"},
                      RateCase{100, {60}, "100G_64B"}, RateCase{100, {1500}, "100G_1500B"},
                      RateCase{100, kMix, "100G_mix"}, RateCase{400, {60}, "400G_64B"},
                      RateCase{400, {1500}, "400G_1500B"}, RateCase{400, kMix, "400G_mix"}),
    [](const ::testing::TestParamInfo<RateCase>& i) { return std::string(i.param.name); });

TEST(Shaper, SixtyFourByteLineRateAt100G) {
  // 100e9 / 8 / 84 = 148.81 Mpps: the figure every 100G data sheet quotes.
  const ShapedRun r = run_backlogged(100.0, {60}, 5'000'000, 42);
  EXPECT_NEAR(r.mpps(), 148.81, 148.81 * 0.01);
  RecordProperty("mpps", std::to_string(r.mpps()));
}

TEST(Shaper, DifferentClockRhythmsGiveTheSameRate) {
  // Polling every 100 ns or every 10 us must not change the long-run rate by more than 1 %.
  for (uint64_t seed : {1u, 2u, 3u, 99u}) {
    const ShapedRun r = run_backlogged(25.0, kMix, 5'000'000, seed);
    EXPECT_NEAR(r.gbps(), 25.0, 0.25) << "seed " << seed;
  }
}

class ShaperIdle : public ::testing::TestWithParam<double> {};

TEST_P(ShaperIdle, NoBurstBeyondTheBucketAfterLongIdle) {
  const double gbps = GetParam();
  Shaper s;
  s.configure(gbps, 0);
  // One second of silence would be 125 MB..50 GB of credit without a cap.
  const uint64_t t = 1'000'000'000;
  s.refill(t);
  uint64_t burst = 0;
  while (s.can_send()) {
    s.consume(1500);
    burst += wire_bytes(1500);
  }
  const uint64_t bucket = bucket_bytes(gbps);
  EXPECT_LE(burst, bucket + wire_bytes(1500)) << "a frame may start on the last positive byte, no more";
  EXPECT_GE(burst, bucket) << "the bucket should be full after a long idle";

  // And after the burst the port is back to line rate, not above it.
  Rng rng(7);
  uint64_t now = t, sent = 0;
  while (now < t + 2'000'000) {
    now += rng.between(100, 10'000);
    s.refill(now);
    while (s.can_send()) {
      s.consume(1500);
      sent += wire_bytes(1500);
    }
  }
  const double ideal = gbps * 1e9 / 8.0 * static_cast<double>(now - t) / 1e9;
  EXPECT_LE(static_cast<double>(sent), ideal + wire_bytes(1500));
  EXPECT_GE(static_cast<double>(sent), ideal * 0.99);
}

INSTANTIATE_TEST_SUITE_P(Speeds, ShaperIdle, ::testing::Values(1.0, 25.0, 100.0, 400.0));

// A backlogged link whose worker was descheduled makes up the lost time (up to 5 ms); an
// idle link does not, so an incast still queues from its first packet.
TEST(Shaper, BackloggedLinkCatchesUpAfterAStallIdleLinkDoesNot) {
  auto frames_after_gap = [](bool backlogged, uint64_t gap_ns) {
    Shaper s;
    s.configure(1.0, 0);  // 1 Gb/s: 1500-byte frames (1524 wire bytes) every 12.192 us
    s.refill(gap_ns, backlogged);
    uint64_t n = 0;
    while (s.can_send()) {
      s.consume(1500);
      ++n;
    }
    return n;
  };
  // 2 ms at 1 Gb/s is 250,000 bytes = 164 frames of 1524 wire bytes (+1 for the debt rule).
  EXPECT_NEAR(static_cast<double>(frames_after_gap(true, 2'000'000)), 250'000.0 / 1524, 2.0);
  // Idle: only the ~20 us bucket (at least two jumbo frames' worth): 13 frames, not 164.
  EXPECT_LE(frames_after_gap(false, 2'000'000), 14u);
  // The catch-up is bounded: a 1 s stall gives 5 ms of credit, not 1 s.
  EXPECT_NEAR(static_cast<double>(frames_after_gap(true, 1'000'000'000)), 625'000.0 / 1524, 2.0);
}

}  // namespace
}  // namespace rs
