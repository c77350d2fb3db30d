// ECN/WRED at enqueue: DCQCN's law exactly (integer figures), the marking rate it produces
// with FastRng (binomial 99 % bounds), every branch of the verdict, and CE marks that keep
// the IPv4 checksum equal to a full recompute and the RoCE ICRC valid.
#include "dataplane/tm/ecn/wred.h"

#include <gtest/gtest.h>
#include <fmt/core.h>
#include <rte_ip.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "dataplane/proto/icrc.h"
#include "tests/support/eal_env.h"
#include "tests/support/packet_builder.h"

namespace rs {
namespace {

constexpr uint64_t kOne = 1ull << 32;

// HPCC's DCQCN figures: 100 KB / 400 KB / 20 %.
WredProfile hpcc(bool ecn = true, bool drop = false) {
  return WredProfile{.enabled = true, .wred_drop = drop, .ecn_mark = ecn, .kmin = 100'000, .kmax = 400'000,
                     .pmax_percent = 20};
}

TEST(WredLaw, AtChosenDepths) {
  const auto p = hpcc();
  EXPECT_EQ(wred_threshold(p, 0), 0u);
  EXPECT_EQ(wred_threshold(p, 99'999), 0u);
  EXPECT_EQ(wred_threshold(p, 100'000), 0u) << "0 at Kmin itself";
  // Quarter, half and three quarters of the way: 5 %, 10 %, 15 % of 2^32, floored.
  EXPECT_EQ(wred_threshold(p, 175'000), kOne * 5 / 100);
  EXPECT_EQ(wred_threshold(p, 250'000), kOne * 10 / 100);
  EXPECT_EQ(wred_threshold(p, 325'000), kOne * 15 / 100);
  EXPECT_EQ(wred_threshold(p, 100'001), kOne * 20 / 100 / 300'000);
  EXPECT_EQ(wred_threshold(p, 399'999), kOne * 20 * 299'999 / 100 / 300'000);
  EXPECT_LT(wred_threshold(p, 399'999), kOne * 20 / 100);
  EXPECT_EQ(wred_threshold(p, 400'000), kOne) << "always at Kmax";
  EXPECT_EQ(wred_threshold(p, 1ull << 40), kOne);
  EXPECT_EQ(wred_threshold(p, UINT64_MAX), kOne);

  // NVIDIA's 150 KB / 1.5 MB / 100 %: just under Kmax is just under certainty.
  const WredProfile nv{.enabled = true, .ecn_mark = true, .kmin = 150'000, .kmax = 1'500'000, .pmax_percent = 100};
  EXPECT_EQ(wred_threshold(nv, 825'000), kOne / 2);
  EXPECT_LT(wred_threshold(nv, 1'499'999), kOne);
  EXPECT_GT(wred_threshold(nv, 1'499'999), kOne - kOne / 1'000'000);
}

TEST(WredLaw, MonotonicAndNoOverflowAtHugeDepths) {
  // (depth - kmin) × pmax × 2^32 overflows 64 bits for depths over ~2^25: must not wrap.
  const WredProfile big{.enabled = true, .ecn_mark = true, .kmin = 0, .kmax = 1ull << 63, .pmax_percent = 100};
  EXPECT_EQ(wred_threshold(big, 1ull << 62), kOne / 2);
  EXPECT_EQ(wred_threshold(big, (1ull << 63) - 1), kOne - 1);
  const auto p = hpcc();
  uint64_t prev = 0;
  for (uint64_t d = 0; d < 500'000; d += 997) {
    const uint64_t t = wred_threshold(p, d);
    EXPECT_GE(t, prev) << d;
    EXPECT_LE(t, kOne);
    prev = t;
  }
}

TEST(WredLaw, DegenerateProfiles) {
  // Kmax == Kmin is rejected by validation, but must not divide by zero: a step at Kmin.
  const WredProfile step{.enabled = true, .ecn_mark = true, .kmin = 1000, .kmax = 1000, .pmax_percent = 50};
  EXPECT_EQ(wred_threshold(step, 999), 0u);
  EXPECT_EQ(wred_threshold(step, 1000), kOne);
  const WredProfile zero{.enabled = true, .ecn_mark = true, .kmin = 0, .kmax = 0, .pmax_percent = 50};
  EXPECT_EQ(wred_threshold(zero, 0), kOne);
  // Pmax 0: never below Kmax, always at it.
  const WredProfile p0{.enabled = true, .ecn_mark = true, .kmin = 10, .kmax = 20, .pmax_percent = 0};
  EXPECT_EQ(wred_threshold(p0, 19), 0u);
  EXPECT_EQ(wred_threshold(p0, 20), kOne);
}

// Counts each verdict over n decisions at one depth.
struct Tally {
  int pass = 0, mark = 0, drop = 0;
};
Tally decide_n(const WredProfile& p, uint64_t depth, uint8_t ecn, bool lossless, int n, FastRng& rng) {
  Tally t;
  for (int i = 0; i < n; ++i) {
    switch (wred_decide(p, depth, ecn, lossless, rng)) {
      case EcnVerdict::Pass: ++t.pass; break;
      case EcnVerdict::Mark: ++t.mark; break;
      case EcnVerdict::Drop: ++t.drop; break;
    }
  }
  return t;
}

// Within the 99 % interval of Binomial(n, p), normal approximation.
void expect_binomial(int count, int n, double p, const char* what, uint64_t depth) {
  const double mean = n * p;
  const double half = 2.576 * std::sqrt(n * p * (1 - p));
  EXPECT_GE(count, mean - half) << what << " at depth " << depth << ": p=" << p;
  EXPECT_LE(count, mean + half) << what << " at depth " << depth << ": p=" << p;
}

TEST(WredDecide, MarkingRateFollowsTheLaw) {
  // Each check is a 99 % interval, so a fair generator fails one of these seven for about 7 %
  // of seeds; the seed is fixed, so the result is repeatable. FastRng itself was checked
  // over 2000 seeds at p = 0.04/0.1/0.2: 0.6-0.95 % of runs outside the interval, mean z ~0.
  const auto p = hpcc();
  FastRng rng(2024);
  constexpr int kN = 20'000;
  uint8_t ecn = 1;
  for (uint64_t depth : {110'000ull, 160'000ull, 220'000ull, 250'000ull, 310'000ull, 370'000ull, 399'000ull}) {
    const double prob = static_cast<double>(wred_threshold(p, depth)) / static_cast<double>(kOne);
    ASSERT_NEAR(prob, 0.20 * static_cast<double>(depth - 100'000) / 300'000.0, 1e-9);
    const Tally t = decide_n(p, depth, ecn, false, kN, rng);
    EXPECT_EQ(t.drop, 0);
    EXPECT_EQ(t.mark + t.pass, kN);
    expect_binomial(t.mark, kN, prob, "marks", depth);
    ecn = static_cast<uint8_t>(3 - ecn);  // alternate ECT(1) and ECT(0)
  }
}

TEST(WredDecide, BelowKminAndAtKmax) {
  FastRng rng(3);
  const auto p = hpcc(true, true);
  for (uint8_t ecn = 0; ecn < 4; ++ecn) {
    for (bool lossless : {false, true}) {
      for (uint64_t depth : {0ull, 50'000ull, 99'999ull}) EXPECT_EQ(decide_n(p, depth, ecn, lossless, 2000, rng).pass, 2000);
    }
  }
  for (uint64_t depth : {400'000ull, 400'001ull, 10'000'000ull}) {
    for (uint8_t ecn : {1, 2}) {
      EXPECT_EQ(decide_n(p, depth, ecn, false, 2000, rng).mark, 2000);
      EXPECT_EQ(decide_n(p, depth, ecn, true, 2000, rng).mark, 2000) << "lossless ECT traffic is marked too";
    }
    EXPECT_EQ(decide_n(p, depth, 0, false, 2000, rng).drop, 2000);
  }
}

TEST(WredDecide, NonEctLossyDroppedByTheLawOnlyWithWred) {
  FastRng rng(11);
  constexpr int kN = 20'000;
  const auto with = hpcc(true, true);
  const auto without = hpcc(true, false);
  for (uint64_t depth : {130'000ull, 250'000ull, 380'000ull}) {
    const double prob = static_cast<double>(wred_threshold(with, depth)) / static_cast<double>(kOne);
    const Tally t = decide_n(with, depth, 0, false, kN, rng);
    EXPECT_EQ(t.mark, 0) << "a non-ECT packet is never marked";
    expect_binomial(t.drop, kN, prob, "drops", depth);
    EXPECT_EQ(decide_n(without, depth, 0, false, kN, rng).pass, kN) << "left to the tail drop";
  }
  EXPECT_EQ(decide_n(without, 500'000, 0, false, kN, rng).pass, kN);
}

TEST(WredDecide, LosslessNonEctNeverDropped) {
  FastRng rng(12);
  const auto p = hpcc(true, true);
  for (uint64_t depth : std::initializer_list<uint64_t>{0, 200'000, 400'000, UINT64_MAX}) EXPECT_EQ(decide_n(p, depth, 0, true, 5000, rng).pass, 5000);
}

TEST(WredDecide, EcnModeWithoutGreenPassesEct) {
  FastRng rng(13);
  const auto p = hpcc(false, true);  // WRED drop on, ECN marking off for green
  for (uint64_t depth : {200'000ull, 400'000ull}) {
    EXPECT_EQ(decide_n(p, depth, 1, false, 5000, rng).pass, 5000);
    EXPECT_EQ(decide_n(p, depth, 2, false, 5000, rng).pass, 5000) << "ECT is not dropped in place of marking";
  }
  EXPECT_EQ(decide_n(p, 400'000, 0, false, 100, rng).drop, 100) << "non-ECT still dropped";
}

TEST(WredDecide, AlreadyCePassesAndDisabledPasses) {
  FastRng rng(14);
  EXPECT_EQ(decide_n(hpcc(true, true), 1'000'000, 3, false, 5000, rng).pass, 5000);
  auto off = hpcc(true, true);
  off.enabled = false;
  for (uint8_t ecn = 0; ecn < 4; ++ecn) EXPECT_EQ(decide_n(off, 1'000'000, ecn, false, 1000, rng).pass, 1000);
}

// ---- mark_ce -----------------------------------------------------------------------------

std::size_t datagram_len(const std::vector<uint8_t>& f, std::size_t l3, bool v6) {
  if (v6) return 40u + (f[l3 + 4] << 8 | f[l3 + 5]);
  return static_cast<std::size_t>(f[l3 + 2] << 8 | f[l3 + 3]);
}

// Builds the packet, marks it, returns the bytes before and after.
struct Marked {
  std::vector<uint8_t> before, after;
  PacketMeta pm;
};
Marked mark(const test::PacketSpec& s, std::size_t l3_offset, L3Type l3) {
  Marked r;
  r.before = s.bytes();
  rte_mbuf* m = s.mbuf(test::test_pool());
  EXPECT_NE(m, nullptr);
  if (!m) return r;
  PacketMeta& pm = meta(m);
  pm.l3 = l3;
  pm.l3_offset = static_cast<uint16_t>(l3_offset);
  pm.ecn = r.before[l3_offset + 1] & 3;
  mark_ce(m, pm);
  r.pm = pm;
  r.after = test::mbuf_bytes(m);
  rte_pktmbuf_free(m);
  return r;
}

uint16_t full_ipv4_checksum(std::vector<uint8_t> f, std::size_t l3) {
  f[l3 + 10] = f[l3 + 11] = 0;
  const uint16_t c = rte_ipv4_cksum(reinterpret_cast<const rte_ipv4_hdr*>(&f[l3]));
  return static_cast<uint16_t>(c >> 8 | c << 8);  // as stored: big-endian
}

TEST(MarkCe, Ipv4RoceChecksumAndIcrc) {
  const auto r = mark(test::Eth{} / test::Ipv4{.dscp = 26, .ecn = 2, .ttl = 64} / test::Udp{.sport = 0xC0DE} /
                          test::Bth{.opcode = 0x0a, .dest_qp = 0x123, .psn = 77} / test::Payload::of_size(256, 3),
                      14, L3Type::Ipv4);
  ASSERT_EQ(r.after.size(), r.before.size());
  EXPECT_EQ(r.after[15], 26 << 2 | 3) << "DSCP kept, ECN = CE";
  EXPECT_EQ(r.pm.ecn, 3);
  EXPECT_TRUE(test::ipv4_checksum_ok(r.after));
  EXPECT_EQ(r.after[24] << 8 | r.after[25], full_ipv4_checksum(r.after, 14));
  EXPECT_TRUE(roce_icrc_ok(&r.before[14], datagram_len(r.before, 14, false), false)) << "builder made a bad ICRC";
  EXPECT_TRUE(roce_icrc_ok(&r.after[14], datagram_len(r.after, 14, false), false));
  for (std::size_t i = 0; i < r.after.size(); ++i) {
    if (i == 15 || i == 24 || i == 25) continue;
    EXPECT_EQ(r.after[i], r.before[i]) << "byte " << i << " changed";
  }
}

TEST(MarkCe, Ipv4ChecksumEqualsFullRecomputeForManyHeaders) {
  // Random addresses, TTL, DSCP and ECT value, tagged and untagged: every incremental
  // checksum must equal the full recompute (carry cases included).
  FastRng rng(77);
  int checked = 0;
  for (int i = 0; i < 3000; ++i) {
    const uint32_t a = rng.next(), b = rng.next(), c = rng.next();
    const bool tagged = c & 1;
    const std::string src = fmt::format("{}.{}.{}.{}", a >> 24, a >> 16 & 255, a >> 8 & 255, a & 255);
    const std::string dst = fmt::format("{}.{}.{}.{}", b >> 24, b >> 16 & 255, b >> 8 & 255, b & 255);
    test::Ipv4 ip{.src = src, .dst = dst, .dscp = static_cast<uint8_t>(c >> 8 & 63),
                  .ecn = static_cast<uint8_t>(1 + (c >> 14 & 1)), .ttl = static_cast<uint8_t>(c >> 16)};
    const auto s = tagged ? test::Eth{} / test::Vlan{.pcp = 3} / ip / test::Udp{} / test::Payload::of_size(20)
                          : test::Eth{} / ip / test::Udp{} / test::Payload::of_size(20);
    const std::size_t l3 = tagged ? 18 : 14;
    const auto r = mark(s, l3, L3Type::Ipv4);
    ASSERT_EQ(r.after[l3 + 1] & 3, 3);
    ASSERT_EQ(r.after[l3 + 1] >> 2, static_cast<int>(c >> 8 & 63));
    ASSERT_EQ(r.after[l3 + 10] << 8 | r.after[l3 + 11], full_ipv4_checksum(r.after, l3)) << src << " > " << dst;
    ++checked;
  }
  EXPECT_EQ(checked, 3000);
}

TEST(MarkCe, Ipv6RoceTrafficClassAndIcrc) {
  const auto r = mark(test::Eth{} / test::Ipv6{.dscp = 26, .ecn = 1, .hop_limit = 64, .flow_label = 0xABCDE} /
                          test::Udp{} / test::Bth{.psn = 0xFFFFFF} / test::Payload::of_size(1024),
                      14, L3Type::Ipv6);
  ASSERT_EQ(r.after.size(), r.before.size());
  uint32_t w;
  std::memcpy(&w, &r.after[14], 4);
  w = rte_be_to_cpu_32(w);
  EXPECT_EQ(w >> 28, 6u) << "version";
  EXPECT_EQ(w >> 20 & 0xff, 26u << 2 | 3) << "traffic class: DSCP kept, ECN = CE";
  EXPECT_EQ(w & 0xfffff, 0xABCDEu) << "flow label";
  EXPECT_EQ(r.pm.ecn, 3);
  EXPECT_TRUE(roce_icrc_ok(&r.before[14], datagram_len(r.before, 14, true), true)) << "builder made a bad ICRC";
  EXPECT_TRUE(roce_icrc_ok(&r.after[14], datagram_len(r.after, 14, true), true));
  for (std::size_t i = 0; i < r.after.size(); ++i) {
    if (i == 15) continue;
    EXPECT_EQ(r.after[i], r.before[i]) << "byte " << i << " changed";
  }
}

TEST(MarkCe, IcrcCheckIsSensitive) {
  // Guard for the ICRC checks above: a change the ICRC covers must fail them.
  auto f = (test::Eth{} / test::Ipv4{.ecn = 2} / test::Udp{} / test::Bth{} / test::Payload::of_size(64)).bytes();
  f[14 + 20 + 8 + 12 + 5] ^= 1;
  EXPECT_FALSE(roce_icrc_ok(&f[14], datagram_len(f, 14, false), false));
}

}  // namespace
}  // namespace rs
