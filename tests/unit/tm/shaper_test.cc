// Shaper: what a frame costs on the wire, and that the token bucket holds the configured link
// rate for any packet size and any polling rhythm. The clock is injected: every call gets an
// explicit now_ns, stepped by a seeded generator, so the figures are exact and repeatable.
#include "dataplane/tm/queue/shaper.h"

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

// --- The burst helpers transmit() uses: covers(), consume_wire() and spend() -------------
//
// At 8 Gb/s the rate is 1e9 bytes/s: one nanosecond of refill is exactly one byte of credit,
// so these tests set the credit to the byte through configure()/refill().
constexpr double kByteGbps = 8.0;
constexpr uint64_t kT0 = 1'000'000;

// A shaper at 8 Gb/s whose credit is `bytes` (well under the 20,000-byte bucket).
Shaper with_credit(uint64_t bytes) {
  Shaper s;
  s.configure(kByteGbps, kT0);
  s.refill(kT0 + bytes);
  return s;
}

// The shaper's credit in whole bytes, read through its public face: a copy is refilled by a
// known 1 MB as a backlogged link (no bucket cap in the way: catch-up is 5 MB at 8 Gb/s),
// then covers(b, 0) (true while credit > b bytes) is bisected. `now` is the last refill time.
int64_t credit_bytes(Shaper s, uint64_t now) {
  constexpr int64_t kLift = 1'000'000;
  s.refill(now + kLift, true);
  uint64_t lo = 0, hi = uint64_t{1} << 32;  // covers(lo, 0) true .. covers(hi, 0) false
  if (!s.covers(0, 0)) return -kLift;       // still not positive: far below anything tested here
  while (hi - lo > 1) {
    const uint64_t mid = lo + (hi - lo) / 2;
    (s.covers(mid, 0) ? lo : hi) = mid;
  }
  return static_cast<int64_t>(hi) - kLift;
}

TEST(ShaperBurst, CreditProbeReadsTheRefill) {
  // The helper the tests below rely on: exact for a fresh bucket, a partly spent one and debt.
  EXPECT_EQ(credit_bytes(with_credit(1'000), kT0 + 1'000), 1'000);
  Shaper s = with_credit(100);
  s.consume(1500);  // 1524 wire bytes
  EXPECT_EQ(credit_bytes(s, kT0 + 100), 100 - 1524);
}

TEST(ShaperBurst, CoversNeedsCreditAboveBytesPlus84PerFrame) {
  // 10 frames, 5,000 bytes in all: the bound is 5,000 + 10 * 84 = 5,840 bytes.
  EXPECT_FALSE(with_credit(5'839).covers(5'000, 10));
  EXPECT_FALSE(with_credit(5'840).covers(5'000, 10)) << "strictly above: equal is not enough";
  EXPECT_TRUE(with_credit(5'841).covers(5'000, 10));
  EXPECT_TRUE(with_credit(19'000).covers(5'000, 10));
  // The per-frame allowance is 84 bytes, not the 24 a full-size frame adds.
  EXPECT_FALSE(with_credit(5'000 + 10 * 24 + 1).covers(5'000, 10));
  // One frame: bytes + 84.
  EXPECT_FALSE(with_credit(144).covers(60, 1));
  EXPECT_TRUE(with_credit(145).covers(60, 1));
  // An empty queue needs only positive credit.
  EXPECT_TRUE(with_credit(1).covers(0, 0));
}

TEST(ShaperBurst, CoversIsFalseWithoutCreditOrInDebt) {
  EXPECT_FALSE(with_credit(0).covers(0, 0));
  Shaper s = with_credit(100);
  s.consume(9000);  // deep debt: the unsigned view of it must not look like a huge credit
  EXPECT_FALSE(s.can_send());
  EXPECT_FALSE(s.covers(0, 0));
  EXPECT_FALSE(s.covers(60, 1));
}

TEST(ShaperBurst, CoverImpliesThePerFrameRuleSendsEveryFrame) {
  // Whenever covers() says yes, a can_send()/consume() loop would have started every frame:
  // the fast branch of transmit() never sends what the per-frame rule would hold back.
  Rng rng(0xc0de);
  for (int trial = 0; trial < 2'000; ++trial) {
    std::vector<uint32_t> q(rng.between(1, 32));
    uint64_t bytes = 0;
    for (auto& len : q) {
      len = static_cast<uint32_t>(rng.between(0, 1) ? rng.between(0, 80) : rng.between(60, 9216));
      bytes += len;
    }
    const uint64_t need = bytes + q.size() * 84;
    if (need >= 19'999) continue;
    Shaper s = with_credit(need + 1);
    ASSERT_TRUE(s.covers(bytes, q.size()));
    std::size_t sent = 0;
    while (sent < q.size() && s.can_send()) s.consume(q[sent++]);
    EXPECT_EQ(sent, q.size()) << "trial " << trial;
  }
}

TEST(ShaperBurst, ConsumeWireEqualsConsumePerFrame) {
  const std::vector<uint32_t> sizes = {60, 1500, 42, 9000, 61, 256};
  uint64_t wire = 0;
  for (uint32_t len : sizes) wire += wire_bytes(len);
  ASSERT_EQ(wire, 84u + 1524 + 84 + 9024 + 85 + 280);
  for (uint64_t start : {0ull, 1ull, 5'000ull, 11'080ull, 11'081ull, 19'999ull}) {
    Shaper per_frame = with_credit(start);
    Shaper summed = with_credit(start);
    for (uint32_t len : sizes) per_frame.consume(len);
    summed.consume_wire(wire);
    const uint64_t now = kT0 + start;
    EXPECT_EQ(credit_bytes(summed, now), static_cast<int64_t>(start) - static_cast<int64_t>(wire)) << start;
    EXPECT_EQ(credit_bytes(summed, now), credit_bytes(per_frame, now)) << start;
    EXPECT_EQ(summed.can_send(), per_frame.can_send()) << start;
    // And they stay in step as time goes on: the same nanosecond makes both sendable again.
    for (uint64_t t = now + 1; t < now + 12'000; ++t) {
      per_frame.refill(t);
      summed.refill(t);
      ASSERT_EQ(summed.can_send(), per_frame.can_send()) << "start " << start << " at +" << t - now;
    }
  }
}

TEST(ShaperBurst, WholeQueueBurstsKeepThePerFrameRate) {
  // transmit()'s two branches over the same arrivals and clock: when covers() holds, pop the
  // whole queue and consume_wire() the sum; otherwise can_send()/consume() per frame. The
  // per-frame rule alone must give exactly the same departures and the same credit.
  struct Run {
    uint64_t packets = 0, wire = 0, bursts = 0;
    int64_t credit = 0;
  };
  auto run = [](bool use_covers) {
    Shaper s;
    s.configure(kByteGbps, kT0);
    Rng rng(77);  // the same arrivals and clock for both
    std::vector<uint32_t> q;
    std::size_t head = 0;
    uint64_t now = kT0;
    Run r;
    for (int step = 0; step < 20'000; ++step) {
      const int arrivals = static_cast<int>(rng.between(0, 3));
      for (int i = 0; i < arrivals; ++i) q.push_back(static_cast<uint32_t>(rng.between(40, 1500)));
      now += rng.between(50, 3'000);
      s.refill(now, head < q.size());
      uint64_t bytes = 0;
      for (std::size_t i = head; i < q.size(); ++i) bytes += q[i];
      if (use_covers && head < q.size() && s.covers(bytes, q.size() - head)) {
        uint64_t wire = 0;
        for (; head < q.size(); ++head, ++r.packets) wire += wire_bytes(q[head]);
        s.consume_wire(wire);
        r.wire += wire;
        ++r.bursts;
      } else {
        while (head < q.size() && s.can_send()) {
          s.consume(q[head]);
          r.wire += wire_bytes(q[head++]);
          ++r.packets;
        }
      }
    }
    r.credit = credit_bytes(s, now);
    return r;
  };
  const Run fast = run(true), slow = run(false);
  EXPECT_GT(fast.bursts, 1'000u) << "the arrivals must exercise the whole-queue branch";
  EXPECT_EQ(fast.packets, slow.packets);
  EXPECT_EQ(fast.wire, slow.wire);
  EXPECT_EQ(fast.credit, slow.credit);
}

// What spend() must match: send while credit is positive, one frame's wire cost at a time.
struct Spent {
  std::size_t sent;
  int64_t credit;
};
Spent per_frame_loop(uint64_t credit, const std::vector<uint32_t>& q) {
  Shaper s = with_credit(credit);
  std::size_t i = 0;
  while (i < q.size() && s.can_send()) s.consume(q[i++]);
  return {i, credit_bytes(s, kT0 + credit)};
}
Spent spend_loop(uint64_t credit, const std::vector<uint32_t>& q, int* calls = nullptr) {
  Shaper s = with_credit(credit);
  const std::size_t n = s.spend([&](auto& more) {
    if (calls) ++*calls;
    std::size_t i = 0;
    while (i < q.size())
      if (!more(q[i++])) break;
    return i;
  });
  return {n, credit_bytes(s, kT0 + credit)};
}

TEST(ShaperBurst, SpendStopsWhenCreditIsNoLongerPositive) {
  const std::vector<uint32_t> q(10, 1500);  // 1524 wire bytes each
  // Exactly three frames' worth: the third leaves 0, which is not positive: three go.
  Spent s = spend_loop(3 * 1524, q);
  EXPECT_EQ(s.sent, 3u);
  EXPECT_EQ(s.credit, 0);
  // One byte more: a fourth frame starts on it and leaves the debt.
  s = spend_loop(3 * 1524 + 1, q);
  EXPECT_EQ(s.sent, 4u);
  EXPECT_EQ(s.credit, 1 - 1524);
  // One byte: one frame.
  s = spend_loop(1, q);
  EXPECT_EQ(s.sent, 1u);
  EXPECT_EQ(s.credit, 1 - 1524);
  // Credit for more than the queue: all ten, the rest kept.
  s = spend_loop(19'000, q);
  EXPECT_EQ(s.sent, 10u);
  EXPECT_EQ(s.credit, 19'000 - 10 * 1524);
}

TEST(ShaperBurst, SpendWithoutCreditSendsNothing) {
  int calls = 0;
  const std::vector<uint32_t> q(4, 60);
  const Spent s = spend_loop(0, q, &calls);
  EXPECT_EQ(calls, 0) << "no frame may start on zero credit";
  EXPECT_EQ(s.sent, 0u);
  EXPECT_EQ(s.credit, 0);
}

TEST(ShaperBurst, SpendMatchesCanSendConsume) {
  Rng rng(4242);
  for (int trial = 0; trial < 3'000; ++trial) {
    std::vector<uint32_t> q(rng.between(1, 40));
    for (auto& len : q) len = static_cast<uint32_t>(rng.between(0, 9216));
    const uint64_t credit = rng.between(0, 19'999);
    const Spent a = per_frame_loop(credit, q), b = spend_loop(credit, q);
    ASSERT_EQ(b.sent, a.sent) << "trial " << trial << " credit " << credit;
    ASSERT_EQ(b.credit, a.credit) << "trial " << trial << " credit " << credit;
  }
}

}  // namespace
}  // namespace rs
