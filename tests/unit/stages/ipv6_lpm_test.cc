// IPv6 LPM stage (P4 ipv6_lpm): longest prefix wins, /128 host routes, ::/0, NoRoute and
// hop-limit expiry as named, counted drops.
#include "dataplane/stages/route/ipv6_lpm.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/stage_harness.h"
#include "tests/unit/stages/stage_test_util.h"

namespace rs::test {
namespace {

PacketSpec to(const std::string& dst, uint8_t hop_limit = 64) {
  return Eth{} / Ipv6{.dst = dst, .hop_limit = hop_limit} / Udp{} / Bth{} / Payload::of_size(16);
}

constexpr uint32_t kNoGroup = 0xFFFFFFFF;

// Looks each destination up in its own burst; a drop must be NoRoute.
std::vector<uint32_t> groups_for(StageHarness<Ipv6Lpm>& h, const std::vector<std::string>& dsts) {
  std::vector<uint32_t> r;
  for (const auto& d : dsts) {
    auto out = h.run_mbufs(parsed({to(d)}));
    if (out[Ipv6Lpm::Group].size() == 1) {
      r.push_back(meta(out[Ipv6Lpm::Group][0]).group);
    } else {
      EXPECT_EQ(out.dropped(), 1u) << d;
      if (out.dropped() == 1) {
        EXPECT_EQ(meta(out[kNextDrop][0]).drop_reason, DropReason::NoRoute) << d;
      }
      r.push_back(kNoGroup);
    }
  }
  return r;
}

TEST(Ipv6Lpm, LongestPrefixWins) {
  TestWorld w;
  StageHarness<Ipv6Lpm> h{{}, &w};
  const uint32_t g32 = w.route("2001:db8::/32", 1, "02:00:00:00:bb:01");
  const uint32_t g48 = w.route("2001:db8:2::/48", 2, "02:00:00:00:bb:02");
  const uint32_t g64 = w.route("2001:db8:2:7::/64", 3, "02:00:00:00:bb:03");
  const uint32_t g128 = w.route("2001:db8:2:7::2/128", 0, "02:00:00:00:bb:04");
  auto g = groups_for(h, {"2001:db8:2:7::2", "2001:db8:2:7::3", "2001:db8:2:7:ffff:ffff:ffff:ffff", "2001:db8:2:8::1",
                          "2001:db8:ffff::1", "2001:db9::1", "fe80::1"});
  EXPECT_EQ(g[0], g128);
  EXPECT_EQ(g[1], g64);
  EXPECT_EQ(g[2], g64);
  EXPECT_EQ(g[3], g48);
  EXPECT_EQ(g[4], g32);
  EXPECT_EQ(g[5], kNoGroup);
  EXPECT_EQ(g[6], kNoGroup);
  EXPECT_EQ(h.counter("hit"), 5u);
  EXPECT_EQ(h.counter("miss"), 2u);
}

TEST(Ipv6Lpm, InsertionOrderAndOddDepths) {
  // Most specific first, and depths that are not multiples of 8 (rte_lpm6 works per byte).
  TestWorld w;
  StageHarness<Ipv6Lpm> h{{}, &w};
  const uint32_t g127 = w.route("2001:db8:1::4/127", 3, "02:00:00:00:bb:03");
  const uint32_t g61 = w.route("2001:db8:1::/61", 2, "02:00:00:00:bb:02");
  const uint32_t g22 = w.route("2001:c00::/22", 1, "02:00:00:00:bb:01");  // 2001:0c00:: - 2001:0fff:ffff...
  auto g = groups_for(h, {"2001:db8:1::4", "2001:db8:1::5", "2001:db8:1::6", "2001:db8:1:7::1", "2001:db8:1:8::1",
                          "2001:fff::1", "2001:1000::1", "2001:bff::1"});
  EXPECT_EQ(g[0], g127);
  EXPECT_EQ(g[1], g127);
  EXPECT_EQ(g[2], g61);
  EXPECT_EQ(g[3], g61);
  EXPECT_EQ(g[4], g22);
  EXPECT_EQ(g[5], g22);
  EXPECT_EQ(g[6], kNoGroup);
  EXPECT_EQ(g[7], kNoGroup);
}

TEST(Ipv6Lpm, HostRoutes) {
  TestWorld w;
  StageHarness<Ipv6Lpm> h{{}, &w};
  const uint32_t a = w.route("2001:db8:2::2/128", 1, "02:00:00:00:bb:01");
  const uint32_t b = w.route("2001:db8:2::3", 2, "02:00:00:00:bb:02");  // no length: a host route
  auto g = groups_for(h, {"2001:db8:2::2", "2001:db8:2::3", "2001:db8:2::1", "2001:db8:2::4"});
  EXPECT_EQ(g[0], a);
  EXPECT_EQ(g[1], b);
  EXPECT_EQ(g[2], kNoGroup);
  EXPECT_EQ(g[3], kNoGroup);
}

TEST(Ipv6Lpm, EmptyFibIsNoRoute) {
  StageHarness<Ipv6Lpm> h;
  auto out = h.run_mbufs(parsed({to("2001:db8:2::2"), to("::1")}));
  ASSERT_EQ(out.dropped(), 2u);
  for (auto* m : out[kNextDrop]) EXPECT_EQ(meta(m).drop_reason, DropReason::NoRoute);
  EXPECT_EQ(h.counter("miss"), 2u);
}

// rte_lpm6 rejects depth 0, so the FIB keeps ::/0 beside the table and answers every lookup the
// table misses with it (regression: the first FIB threw "route add failed" on a /0).
TEST(Ipv6Lpm, DefaultRouteCatchesEverythingElse) {
  TestWorld w;
  StageHarness<Ipv6Lpm> h{{}, &w};
  const uint32_t g48 = w.route("2001:db8:2::/48", 1, "02:00:00:00:bb:01");
  uint32_t gdef = kNoGroup;
  ASSERT_NO_THROW(gdef = w.route("::/0", 3, "02:00:00:00:bb:0d"));
  auto g = groups_for(h, {"2001:db8:2::9", "2001:db8:3::1", "::1", "ffff::1", "::"});
  EXPECT_EQ(g[0], g48);
  for (std::size_t i = 1; i < g.size(); ++i) EXPECT_EQ(g[i], gdef) << "dst " << i;
  EXPECT_EQ(h.counter("miss"), 0u);
}

TEST(Ipv6Lpm, DefaultRouteAloneInAnEmptyTable) {
  // Only ::/0: the LPM table itself is never created, the default must still answer.
  TestWorld w;
  StageHarness<Ipv6Lpm> h{{}, &w};
  const uint32_t gdef = w.route("::/0", 2, "02:00:00:00:bb:0d");
  auto g = groups_for(h, {"2001:db8:2::9", "fe80::1"});
  EXPECT_EQ(g[0], gdef);
  EXPECT_EQ(g[1], gdef);
}

TEST(Ipv6Lpm, HopLimitOneAndZeroExpire) {
  TestWorld w;
  StageHarness<Ipv6Lpm> h{{}, &w};
  const uint32_t g = w.route("2001:db8:2::/48", 1, "02:00:00:00:bb:01");
  auto out = h.run_mbufs(parsed({to("2001:db8:2::2", 1), to("2001:db8:2::2", 0), to("2001:db8:2::2", 2), to("2001:db8:2::2", 255)}));
  ASSERT_EQ(out.dropped(), 2u);
  for (auto* m : out[kNextDrop]) EXPECT_EQ(meta(m).drop_reason, DropReason::TtlExpired);
  ASSERT_EQ(out[Ipv6Lpm::Group].size(), 2u);
  for (auto* m : out[Ipv6Lpm::Group]) EXPECT_EQ(meta(m).group, g);
  EXPECT_EQ(h.counter("hop_limit_expired"), 2u);
  EXPECT_EQ(h.counter("hit"), 2u);
  EXPECT_EQ(h.counter("miss"), 0u);
}

TEST(Ipv6Lpm, HopLimitIsCheckedBeforeTheLookup) {
  StageHarness<Ipv6Lpm> h;
  auto out = h.run_mbufs(parsed({to("2001:db8:9::1", 1)}));
  ASSERT_EQ(out.dropped(), 1u);
  EXPECT_EQ(meta(out[kNextDrop][0]).drop_reason, DropReason::TtlExpired);
  EXPECT_EQ(h.counter("miss"), 0u);
}

TEST(Ipv6Lpm, ReadsHeaderAtL3OffsetBehindVlan) {
  TestWorld w;
  StageHarness<Ipv6Lpm> h{{}, &w};
  const uint32_t g = w.route("2001:db8:2::/48", 1, "02:00:00:00:bb:01");
  auto out = h.run_mbufs(parsed({Eth{} / Vlan{.pcp = 3} / Ipv6{.dst = "2001:db8:2::9"} / Udp{} / Bth{} / Payload::of_size(16)}));
  ASSERT_EQ(out[Ipv6Lpm::Group].size(), 1u);
  EXPECT_EQ(meta(out[Ipv6Lpm::Group][0]).group, g);
}

TEST(Ipv6Lpm, DoesNotTouchThePacket) {
  TestWorld w;
  StageHarness<Ipv6Lpm> h{{}, &w};
  w.route("2001:db8:2::/48", 1, "02:00:00:00:bb:01");
  const PacketSpec s = to("2001:db8:2::2", 9);
  auto out = h.run_mbufs(parsed({s}));
  ASSERT_EQ(out[Ipv6Lpm::Group].size(), 1u);
  EXPECT_EQ(mbuf_bytes(out[Ipv6Lpm::Group][0]), s.bytes());
}

TEST(Ipv6Lpm, Ipv4AndIpv6TablesAreSeparate) {
  // An IPv4 route must not answer an IPv6 lookup (and an IPv4-mapped address is still IPv6).
  TestWorld w;
  StageHarness<Ipv6Lpm> h{{}, &w};
  w.route("10.0.0.0/8", 1, "02:00:00:00:bb:01");
  auto g = groups_for(h, {"::ffff:10.0.0.1", "::a00:1"});
  EXPECT_EQ(g[0], kNoGroup);
  EXPECT_EQ(g[1], kNoGroup);
}

}  // namespace
}  // namespace rs::test
