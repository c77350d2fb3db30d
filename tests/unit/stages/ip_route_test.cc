// ipv4_route and ipv6_route (P4 ipv4_lpm / ipv6_lpm, then the nexthop_selector member): the TTL or hop
// limit is checked before the lookup; the longest prefix wins whatever the insertion order; host
// routes, the default route; NoRoute and TtlExpired as named, counted drops. A group whose policy
// is the redirection table at the flow hash (ecmp) has its member chosen here (nexthop and
// out_port written, edge rewrite); other groups go on `select`. The general forms
// (`*_route_general`) never choose: every routed packet takes `select`.
#include "dataplane/stages/ip_route.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "tests/support/stage_harness.h"
#include "tests/unit/stages/stage_test_util.h"

namespace rs::test {
namespace {

constexpr uint32_t kNoGroup = 0xFFFFFFFF;

template <typename T>
constexpr bool is_general() {
  return std::string_view(T::kName).ends_with("_general");
}
// The edge a routed packet of an ECMP (inline) group takes in this form.
template <typename T>
constexpr uint8_t hit_edge() {
  return is_general<T>() ? uint8_t{T::Select} : uint8_t{T::Rewrite};
}

// Looks each packet up in its own burst; returns its group, or kNoGroup for a drop (which must
// be NoRoute). A routed packet must take the form's edge.
template <typename T>
std::vector<uint32_t> groups_for(StageHarness<T>& h, const std::vector<PacketSpec>& pkts) {
  std::vector<uint32_t> r;
  for (const auto& p : pkts) {
    auto out = h.run_mbufs(parsed({p}));
    if (out[hit_edge<T>()].size() == 1) {
      r.push_back(meta(out[hit_edge<T>()][0]).group);
    } else {
      EXPECT_EQ(out.dropped(), 1u);
      if (out.dropped() == 1) {
        EXPECT_EQ(meta(out[kNextDrop][0]).drop_reason, DropReason::NoRoute);
      }
      r.push_back(kNoGroup);
    }
  }
  return r;
}

PacketSpec to4(const std::string& dst, uint8_t ttl = 64, uint16_t sport = 0xC001) {
  return Eth{} / Ipv4{.dst = dst, .ttl = ttl} / Udp{.sport = sport} / Bth{} / Payload::of_size(16);
}
PacketSpec to6(const std::string& dst, uint8_t hop_limit = 64, uint16_t sport = 0xC001) {
  return Eth{} / Ipv6{.dst = dst, .hop_limit = hop_limit} / Udp{.sport = sport} / Bth{} / Payload::of_size(16);
}
template <typename T>
std::vector<uint32_t> groups4(StageHarness<T>& h, const std::vector<std::string>& dsts) {
  std::vector<PacketSpec> v;
  for (const auto& d : dsts) v.push_back(to4(d));
  return groups_for(h, v);
}
template <typename T>
std::vector<uint32_t> groups6(StageHarness<T>& h, const std::vector<std::string>& dsts) {
  std::vector<PacketSpec> v;
  for (const auto& d : dsts) v.push_back(to6(d));
  return groups_for(h, v);
}

template <typename T>
class Ipv4RouteTest : public ::testing::Test {};
using V4Forms = ::testing::Types<Ipv4Route, Ipv4RouteGeneral>;
TYPED_TEST_SUITE(Ipv4RouteTest, V4Forms);
template <typename T>
class Ipv6RouteTest : public ::testing::Test {};
using V6Forms = ::testing::Types<Ipv6Route, Ipv6RouteGeneral>;
TYPED_TEST_SUITE(Ipv6RouteTest, V6Forms);

// --- IPv4 LPM ----------------------------------------------------------------------------------

TYPED_TEST(Ipv4RouteTest, LongestPrefixWins) {
  TestWorld w;
  StageHarness<TypeParam> h{{}, &w};
  const uint32_t g8 = w.route("10.0.0.0/8", 1, "02:00:00:00:bb:01");
  const uint32_t g16 = w.route("10.1.0.0/16", 2, "02:00:00:00:bb:02");
  const uint32_t g24 = w.route("10.1.2.0/24", 3, "02:00:00:00:bb:03");
  const uint32_t g32 = w.route("10.1.2.3/32", 0, "02:00:00:00:bb:04");
  auto g = groups4(h, {"10.1.2.3", "10.1.2.4", "10.1.2.255", "10.1.3.1", "10.9.9.9", "10.255.255.255", "11.0.0.1", "9.255.255.255"});
  EXPECT_EQ(g, (std::vector<uint32_t>{g32, g24, g24, g16, g8, g8, kNoGroup, kNoGroup}));
  EXPECT_EQ(h.counter("hit"), 6u);
  EXPECT_EQ(h.counter("miss"), 2u);
  EXPECT_EQ(h.counter("ttl_expired"), 0u);
  EXPECT_EQ(h.counter(is_general<TypeParam>() ? "to_select" : "member_inline"), 6u);
}

TYPED_TEST(Ipv4RouteTest, InsertionOrderDoesNotMatter) {
  // Most specific first: a naive "first match" table would get these wrong.
  TestWorld w;
  StageHarness<TypeParam> h{{}, &w};
  const uint32_t g32 = w.route("10.1.2.3/32", 0, "02:00:00:00:bb:04");
  const uint32_t g24 = w.route("10.1.2.0/24", 3, "02:00:00:00:bb:03");
  const uint32_t g8 = w.route("10.0.0.0/8", 1, "02:00:00:00:bb:01");
  EXPECT_EQ(groups4(h, {"10.1.2.3", "10.1.2.9", "10.200.0.1"}), (std::vector<uint32_t>{g32, g24, g8}));
}

TYPED_TEST(Ipv4RouteTest, PrefixBoundariesBeyondTbl24) {
  // Depths above 24 live in rte_lpm's tbl8s: check both ends of a /25 and a /31.
  TestWorld w;
  StageHarness<TypeParam> h{{}, &w};
  const uint32_t g24 = w.route("192.168.1.0/24", 1, "02:00:00:00:bb:01");
  const uint32_t g25 = w.route("192.168.1.128/25", 2, "02:00:00:00:bb:02");
  const uint32_t g31 = w.route("192.168.1.6/31", 3, "02:00:00:00:bb:03");
  auto g = groups4(h, {"192.168.1.127", "192.168.1.128", "192.168.1.255", "192.168.1.5", "192.168.1.6", "192.168.1.7", "192.168.1.8"});
  EXPECT_EQ(g, (std::vector<uint32_t>{g24, g25, g25, g24, g31, g31, g24}));
}

TYPED_TEST(Ipv4RouteTest, HostRoutes) {
  TestWorld w;
  StageHarness<TypeParam> h{{}, &w};
  const uint32_t a = w.route("10.0.2.2/32", 1, "02:00:00:00:bb:01");
  const uint32_t b = w.route("10.0.2.3", 2, "02:00:00:00:bb:02");  // no length: a host route
  EXPECT_EQ(groups4(h, {"10.0.2.2", "10.0.2.3", "10.0.2.1", "10.0.2.4"}), (std::vector<uint32_t>{a, b, kNoGroup, kNoGroup}));
}

TYPED_TEST(Ipv4RouteTest, EmptyFibIsNoRoute) {
  StageHarness<TypeParam> h;
  auto out = h.run_mbufs(parsed({to4("10.0.2.2"), to4("1.1.1.1")}));
  ASSERT_EQ(out.dropped(), 2u);
  for (auto* m : out[kNextDrop]) EXPECT_EQ(meta(m).drop_reason, DropReason::NoRoute);
  EXPECT_EQ(h.counter("miss"), 2u);
}

// A fabric leaf needs a default route towards its spines. rte_lpm rejects depth 0, so the FIB
// keeps the /0 beside the table (regression: the first FIB threw "route add failed" although
// the config loader accepted "0.0.0.0/0").
TYPED_TEST(Ipv4RouteTest, DefaultRouteCatchesEverythingElse) {
  TestWorld w;
  StageHarness<TypeParam> h{{}, &w};
  uint32_t gdef = kNoGroup;
  ASSERT_NO_THROW(gdef = w.route("0.0.0.0/0", 3, "02:00:00:00:bb:0d"));
  const uint32_t g16 = w.route("10.1.0.0/16", 1, "02:00:00:00:bb:01");
  auto g = groups4(h, {"10.1.2.3", "1.2.3.4", "255.255.255.255", "0.0.0.1", "10.2.0.0"});
  EXPECT_EQ(g, (std::vector<uint32_t>{g16, gdef, gdef, gdef, gdef}));
  EXPECT_EQ(h.counter("miss"), 0u);
}

TYPED_TEST(Ipv4RouteTest, DefaultRouteAloneInAnEmptyTable) {
  // Only 0.0.0.0/0: the LPM table itself is never created, the default must still answer.
  TestWorld w;
  StageHarness<TypeParam> h{{}, &w};
  const uint32_t gdef = w.route("0.0.0.0/0", 2, "02:00:00:00:bb:0d");
  EXPECT_EQ(groups4(h, {"10.0.2.2", "192.0.2.1"}), (std::vector<uint32_t>{gdef, gdef}));
}

TYPED_TEST(Ipv4RouteTest, TtlOneAndZeroExpire) {
  TestWorld w;
  StageHarness<TypeParam> h{{}, &w};
  const uint32_t g = w.route("10.0.2.0/24", 1, "02:00:00:00:bb:01");
  auto out = h.run_mbufs(parsed({to4("10.0.2.2", 1), to4("10.0.2.2", 0), to4("10.0.2.2", 2), to4("10.0.2.2", 255)}));
  ASSERT_EQ(out.dropped(), 2u);
  for (auto* m : out[kNextDrop]) EXPECT_EQ(meta(m).drop_reason, DropReason::TtlExpired);
  ASSERT_EQ(out[hit_edge<TypeParam>()].size(), 2u) << "TTL 2 still has one hop left";
  for (auto* m : out[hit_edge<TypeParam>()]) EXPECT_EQ(meta(m).group, g);
  EXPECT_EQ(h.counter("ttl_expired"), 2u);
  EXPECT_EQ(h.counter("hit"), 2u);
  EXPECT_EQ(h.counter("miss"), 0u);
}

TYPED_TEST(Ipv4RouteTest, TtlIsCheckedBeforeTheLookup) {
  // An expired packet to nowhere counts as expired, not as a miss: the stage spends no lookup.
  StageHarness<TypeParam> h;
  auto out = h.run_mbufs(parsed({to4("172.16.0.1", 1)}));
  ASSERT_EQ(out.dropped(), 1u);
  EXPECT_EQ(meta(out[kNextDrop][0]).drop_reason, DropReason::TtlExpired);
  EXPECT_EQ(h.counter("miss"), 0u);
}

TYPED_TEST(Ipv4RouteTest, ReadsHeaderAtL3OffsetBehindVlan) {
  TestWorld w;
  StageHarness<TypeParam> h{{}, &w};
  const uint32_t g = w.route("10.0.2.0/24", 1, "02:00:00:00:bb:01");
  auto out = h.run_mbufs(parsed({Eth{} / Vlan{.pcp = 3} / Ipv4{.dst = "10.0.2.9"} / Udp{} / Bth{} / Payload::of_size(16),
                                 Eth{} / Vlan{.pcp = 3} / Ipv4{.dst = "10.0.2.9", .ttl = 1} / Udp{} / Bth{} / Payload::of_size(16)}));
  ASSERT_EQ(out[hit_edge<TypeParam>()].size(), 1u);
  EXPECT_EQ(meta(out[hit_edge<TypeParam>()][0]).group, g);
  ASSERT_EQ(out.dropped(), 1u);
  EXPECT_EQ(meta(out[kNextDrop][0]).drop_reason, DropReason::TtlExpired);
}

TYPED_TEST(Ipv4RouteTest, DoesNotTouchThePacket) {
  // TTL is decremented at egress, once the packet is known to leave.
  TestWorld w;
  StageHarness<TypeParam> h{{}, &w};
  w.route("10.0.2.0/24", 1, "02:00:00:00:bb:01");
  const PacketSpec s = to4("10.0.2.2", 9);
  auto out = h.run_mbufs(parsed({s}));
  ASSERT_EQ(out[hit_edge<TypeParam>()].size(), 1u);
  EXPECT_EQ(mbuf_bytes(out[hit_edge<TypeParam>()][0]), s.bytes());
}

TYPED_TEST(Ipv4RouteTest, ManyPacketsAcrossBursts) {
  // 100 packets (more than three bursts), alternating hit and miss.
  TestWorld w;
  StageHarness<TypeParam> h{{}, &w};
  w.route("10.0.0.0/16", 1, "02:00:00:00:bb:01");
  std::vector<PacketSpec> pkts;
  for (int i = 0; i < 100; ++i) pkts.push_back(to4(i % 2 ? "10.0.3.4" : "10.1.3.4"));
  auto out = h.run_mbufs(parsed(pkts));
  EXPECT_EQ(out[hit_edge<TypeParam>()].size(), 50u);
  EXPECT_EQ(out.dropped(), 50u);
  EXPECT_EQ(h.counter("hit"), 50u);
  EXPECT_EQ(h.counter("miss"), 50u);
}

// --- The member, chosen inline or left to nexthop_select ----------------------------------------

TYPED_TEST(Ipv4RouteTest, EcmpMemberIsTheTableSlotOfTheFlowHash) {
  // The specialised form writes table[flow_hash & mask] and its port (grout's reta lookup); the
  // general form leaves nexthop and out_port as the parse left them, for nexthop_select.
  TestWorld w{8};
  StageHarness<TypeParam> h{{}, &w};
  const uint32_t g = w.route_group("10.0.2.0/24", {{1, "02:00:00:00:cc:01"}, {4, "02:00:00:00:cc:04"}, {6, "02:00:00:00:cc:06"}});
  ASSERT_TRUE(w.fib->group(g).inline_member);
  std::vector<PacketSpec> pkts;
  for (int i = 0; i < 200; ++i) pkts.push_back(to4("10.0.2.9", 64, static_cast<uint16_t>(0xC000 + i * 7)));
  auto out = h.run_mbufs(parsed(pkts));
  const auto& routed = out[hit_edge<TypeParam>()];
  ASSERT_EQ(routed.size(), 200u);
  const NextHopGroup& grp = w.fib->group(g);
  std::set<uint16_t> ports;
  for (auto* m : routed) {
    const PacketMeta& pm = meta(m);
    EXPECT_EQ(pm.group, g);
    if (is_general<TypeParam>()) {
      EXPECT_EQ(pm.out_port, kInvalidPort);
      EXPECT_EQ(pm.nexthop, 0u);
    } else {
      EXPECT_EQ(pm.nexthop, grp.table[pm.flow_hash & grp.mask]);
      EXPECT_EQ(pm.out_port, w.fib->nexthop(pm.nexthop).port);
      ports.insert(pm.out_port);
    }
  }
  if (!is_general<TypeParam>()) {
    EXPECT_EQ(ports, (std::set<uint16_t>{1, 4, 6})) << "every member carries flows";
  }
  EXPECT_EQ(h.counter("member_inline"), is_general<TypeParam>() ? 0u : 200u);
  EXPECT_EQ(h.counter("to_select"), is_general<TypeParam>() ? 200u : 0u);
}

TYPED_TEST(Ipv4RouteTest, GroupWhosePolicyIsNotTheTableGoesToSelect) {
  // A group without the inline flag (its policy is more than the table) is left to its policy.
  TestWorld w;
  StageHarness<TypeParam> h{{}, &w};
  NextHopGroup grp;
  grp.name = "adaptive";
  // ecmp hashing the QP too: more than the table at the parser's hash.
  grp.choices = {resolve_policy(PolicySpec{"ecmp", {{"dest_qp", 1}}}, "test")};
  grp.members = {w.fib->add_nexthop({1, mac("02:00:00:00:cc:01")}), w.fib->add_nexthop({2, mac("02:00:00:00:cc:02")})};
  RouteSpec r;
  ASSERT_EQ(inet_pton(AF_INET, "10.0.7.0", r.addr), 1);
  r.depth = 24;
  r.group = w.fib->add_group(grp);
  EXPECT_FALSE(w.fib->group(r.group).inline_member);
  w.fib->add_route(r);
  w.route("10.0.2.0/24", 3, "02:00:00:00:bb:03");
  auto out = h.run_mbufs(parsed({to4("10.0.7.1"), to4("10.0.2.1"), to4("10.0.7.2")}));
  ASSERT_EQ(out[TypeParam::Select].size(), is_general<TypeParam>() ? 3u : 2u);
  for (auto* m : out[TypeParam::Select]) EXPECT_EQ(meta(m).out_port, kInvalidPort) << "nothing chosen yet";
  EXPECT_EQ(meta(out[TypeParam::Select][0]).group, r.group);
  EXPECT_EQ(h.counter("to_select"), is_general<TypeParam>() ? 3u : 2u);
  EXPECT_EQ(h.counter("member_inline"), is_general<TypeParam>() ? 0u : 1u);
}

TEST(Ipv4Route, InlineNextHopOnMissingPortIsBadNextHop) {
  // The world has 4 ports; a next hop on port 9 must never reach the egress arrays.
  TestWorld w{4};
  StageHarness<Ipv4Route> h{{}, &w};
  w.route("10.0.9.0/24", 9, "02:00:00:00:bb:09");
  w.route("10.0.2.0/24", 3, "02:00:00:00:bb:03");
  auto out = h.run_mbufs(parsed({to4("10.0.9.1"), to4("10.0.2.1"), to4("10.0.9.2")}));
  ASSERT_EQ(out.dropped(), 2u);
  for (auto* m : out[kNextDrop]) EXPECT_EQ(meta(m).drop_reason, DropReason::BadNextHop);
  ASSERT_EQ(out[Ipv4Route::Rewrite].size(), 1u);
  EXPECT_EQ(meta(out[Ipv4Route::Rewrite][0]).out_port, 3);
  EXPECT_EQ(h.counter("bad_nexthop"), 2u);
  EXPECT_EQ(h.counter("member_inline"), 1u);
  EXPECT_EQ(h.counter("hit"), 3u);
}

// A blackhole (the P4's drop() as a route's action) drops what its prefix covers as no_route
// and counts it apart from a miss; a longer prefix inside it still forwards.
TEST(Ipv4Route, BlackholeRouteDropsAsNoRouteAndCountsItself) {
  TestWorld w;
  w.blackhole("10.0.0.0/8");
  w.route("10.0.2.0/24", 3, "02:00:00:00:bb:03");
  StageHarness<Ipv4Route> h{{}, &w};
  auto out = h.run_mbufs(parsed({to4("10.0.7.1"), to4("10.0.2.1"), to4("11.0.0.1"), to4("10.9.9.9")}));
  ASSERT_EQ(out.dropped(), 3u);
  for (auto* m : out[kNextDrop]) EXPECT_EQ(meta(m).drop_reason, DropReason::NoRoute);
  ASSERT_EQ(out[Ipv4Route::Rewrite].size(), 1u);
  EXPECT_EQ(meta(out[Ipv4Route::Rewrite][0]).out_port, 3);
  EXPECT_EQ(h.counter("blackhole"), 2u);
  EXPECT_EQ(h.counter("miss"), 1u);
  EXPECT_EQ(h.counter("hit"), 3u);
  EXPECT_EQ(h.counter("member_inline"), 1u);
}

TEST(Ipv4Route, TellsThePipelineWhenTheWholeBurstTookOneEdge) {
  TestWorld w;
  w.route("10.0.2.0/24", 3, "02:00:00:00:bb:03");
  auto run = [&](auto& stage, const std::vector<PacketSpec>& specs) {
    auto v = parsed(specs);
    Burst b;
    for (auto* m : v) b.push(m);
    uint8_t next[kBurst];
    const uint8_t r = stage.process(b, next, w.ctx);
    free_all(v);
    return r;
  };
  Ipv4Route fast{StageEnv{}};
  Ipv4RouteGeneral general{StageEnv{}};
  EXPECT_EQ(run(fast, {to4("10.0.2.1"), to4("10.0.2.2")}), Ipv4Route::Rewrite);
  EXPECT_EQ(run(fast, {to4("10.0.2.1"), to4("10.0.2.2", 1)}), kNextMixed);
  EXPECT_EQ(run(general, {to4("10.0.2.1"), to4("10.0.2.2")}), Ipv4RouteGeneral::Select);
  EXPECT_EQ(run(general, {to4("10.0.2.1"), to4("192.0.2.2")}), kNextMixed);
}

// --- IPv6 LPM ----------------------------------------------------------------------------------

TYPED_TEST(Ipv6RouteTest, LongestPrefixWins) {
  TestWorld w;
  StageHarness<TypeParam> h{{}, &w};
  const uint32_t g32 = w.route("2001:db8::/32", 1, "02:00:00:00:bb:01");
  const uint32_t g48 = w.route("2001:db8:2::/48", 2, "02:00:00:00:bb:02");
  const uint32_t g64 = w.route("2001:db8:2:7::/64", 3, "02:00:00:00:bb:03");
  const uint32_t g128 = w.route("2001:db8:2:7::2/128", 0, "02:00:00:00:bb:04");
  auto g = groups6(h, {"2001:db8:2:7::2", "2001:db8:2:7::3", "2001:db8:2:7:ffff:ffff:ffff:ffff", "2001:db8:2:8::1",
                       "2001:db8:ffff::1", "2001:db9::1", "fe80::1"});
  EXPECT_EQ(g, (std::vector<uint32_t>{g128, g64, g64, g48, g32, kNoGroup, kNoGroup}));
  EXPECT_EQ(h.counter("hit"), 5u);
  EXPECT_EQ(h.counter("miss"), 2u);
}

TYPED_TEST(Ipv6RouteTest, InsertionOrderAndOddDepths) {
  // Most specific first, and depths that are not multiples of 8 (rte_lpm6 works per byte).
  TestWorld w;
  StageHarness<TypeParam> h{{}, &w};
  const uint32_t g127 = w.route("2001:db8:1::4/127", 3, "02:00:00:00:bb:03");
  const uint32_t g61 = w.route("2001:db8:1::/61", 2, "02:00:00:00:bb:02");
  const uint32_t g22 = w.route("2001:c00::/22", 1, "02:00:00:00:bb:01");  // 2001:0c00:: - 2001:0fff:ffff...
  auto g = groups6(h, {"2001:db8:1::4", "2001:db8:1::5", "2001:db8:1::6", "2001:db8:1:7::1", "2001:db8:1:8::1",
                       "2001:fff::1", "2001:1000::1", "2001:bff::1"});
  EXPECT_EQ(g, (std::vector<uint32_t>{g127, g127, g61, g61, g22, g22, kNoGroup, kNoGroup}));
}

TYPED_TEST(Ipv6RouteTest, HostRoutes) {
  TestWorld w;
  StageHarness<TypeParam> h{{}, &w};
  const uint32_t a = w.route("2001:db8:2::2/128", 1, "02:00:00:00:bb:01");
  const uint32_t b = w.route("2001:db8:2::3", 2, "02:00:00:00:bb:02");  // no length: a host route
  EXPECT_EQ(groups6(h, {"2001:db8:2::2", "2001:db8:2::3", "2001:db8:2::1", "2001:db8:2::4"}),
            (std::vector<uint32_t>{a, b, kNoGroup, kNoGroup}));
}

TYPED_TEST(Ipv6RouteTest, EmptyFibIsNoRoute) {
  StageHarness<TypeParam> h;
  auto out = h.run_mbufs(parsed({to6("2001:db8:2::2"), to6("::1")}));
  ASSERT_EQ(out.dropped(), 2u);
  for (auto* m : out[kNextDrop]) EXPECT_EQ(meta(m).drop_reason, DropReason::NoRoute);
  EXPECT_EQ(h.counter("miss"), 2u);
}

// rte_lpm6 rejects depth 0, so the FIB keeps ::/0 beside the table and answers every lookup the
// table misses with it (regression: the first FIB threw "route add failed" on a /0).
TYPED_TEST(Ipv6RouteTest, DefaultRouteCatchesEverythingElse) {
  TestWorld w;
  StageHarness<TypeParam> h{{}, &w};
  const uint32_t g48 = w.route("2001:db8:2::/48", 1, "02:00:00:00:bb:01");
  uint32_t gdef = kNoGroup;
  ASSERT_NO_THROW(gdef = w.route("::/0", 3, "02:00:00:00:bb:0d"));
  auto g = groups6(h, {"2001:db8:2::9", "2001:db8:3::1", "::1", "ffff::1", "::"});
  EXPECT_EQ(g, (std::vector<uint32_t>{g48, gdef, gdef, gdef, gdef}));
  EXPECT_EQ(h.counter("miss"), 0u);
}

TYPED_TEST(Ipv6RouteTest, DefaultRouteAloneInAnEmptyTable) {
  // Only ::/0: the LPM table itself is never created, the default must still answer.
  TestWorld w;
  StageHarness<TypeParam> h{{}, &w};
  const uint32_t gdef = w.route("::/0", 2, "02:00:00:00:bb:0d");
  EXPECT_EQ(groups6(h, {"2001:db8:2::9", "fe80::1"}), (std::vector<uint32_t>{gdef, gdef}));
}

TYPED_TEST(Ipv6RouteTest, HopLimitOneAndZeroExpire) {
  TestWorld w;
  StageHarness<TypeParam> h{{}, &w};
  const uint32_t g = w.route("2001:db8:2::/48", 1, "02:00:00:00:bb:01");
  auto out = h.run_mbufs(parsed({to6("2001:db8:2::2", 1), to6("2001:db8:2::2", 0), to6("2001:db8:2::2", 2), to6("2001:db8:2::2", 255)}));
  ASSERT_EQ(out.dropped(), 2u);
  for (auto* m : out[kNextDrop]) EXPECT_EQ(meta(m).drop_reason, DropReason::TtlExpired);
  ASSERT_EQ(out[hit_edge<TypeParam>()].size(), 2u);
  for (auto* m : out[hit_edge<TypeParam>()]) EXPECT_EQ(meta(m).group, g);
  EXPECT_EQ(h.counter("hop_limit_expired"), 2u);
  EXPECT_EQ(h.counter("hit"), 2u);
  EXPECT_EQ(h.counter("miss"), 0u);
}

TYPED_TEST(Ipv6RouteTest, HopLimitIsCheckedBeforeTheLookup) {
  StageHarness<TypeParam> h;
  auto out = h.run_mbufs(parsed({to6("2001:db8:9::1", 1)}));
  ASSERT_EQ(out.dropped(), 1u);
  EXPECT_EQ(meta(out[kNextDrop][0]).drop_reason, DropReason::TtlExpired);
  EXPECT_EQ(h.counter("miss"), 0u);
}

TYPED_TEST(Ipv6RouteTest, ReadsHeaderAtL3OffsetBehindVlan) {
  TestWorld w;
  StageHarness<TypeParam> h{{}, &w};
  const uint32_t g = w.route("2001:db8:2::/48", 1, "02:00:00:00:bb:01");
  auto out = h.run_mbufs(parsed({Eth{} / Vlan{.pcp = 3} / Ipv6{.dst = "2001:db8:2::9"} / Udp{} / Bth{} / Payload::of_size(16)}));
  ASSERT_EQ(out[hit_edge<TypeParam>()].size(), 1u);
  EXPECT_EQ(meta(out[hit_edge<TypeParam>()][0]).group, g);
}

TYPED_TEST(Ipv6RouteTest, DoesNotTouchThePacket) {
  TestWorld w;
  StageHarness<TypeParam> h{{}, &w};
  w.route("2001:db8:2::/48", 1, "02:00:00:00:bb:01");
  const PacketSpec s = to6("2001:db8:2::2", 9);
  auto out = h.run_mbufs(parsed({s}));
  ASSERT_EQ(out[hit_edge<TypeParam>()].size(), 1u);
  EXPECT_EQ(mbuf_bytes(out[hit_edge<TypeParam>()][0]), s.bytes());
}

TYPED_TEST(Ipv6RouteTest, Ipv4AndIpv6TablesAreSeparate) {
  // An IPv4 route must not answer an IPv6 lookup (and an IPv4-mapped address is still IPv6).
  TestWorld w;
  StageHarness<TypeParam> h{{}, &w};
  w.route("10.0.0.0/8", 1, "02:00:00:00:bb:01");
  EXPECT_EQ(groups6(h, {"::ffff:10.0.0.1", "::a00:1"}), (std::vector<uint32_t>{kNoGroup, kNoGroup}));
}

TEST(Ipv6Route, EcmpMemberChosenInline) {
  TestWorld w{8};
  StageHarness<Ipv6Route> h{{}, &w};
  const uint32_t g = w.route_group("2001:db8:2::/48", {{2, "02:00:00:00:cc:02"}, {5, "02:00:00:00:cc:05"}});
  std::vector<PacketSpec> pkts;
  for (int i = 0; i < 64; ++i) pkts.push_back(to6("2001:db8:2::9", 64, static_cast<uint16_t>(0xC000 + i)));
  auto out = h.run_mbufs(parsed(pkts));
  ASSERT_EQ(out[Ipv6Route::Rewrite].size(), 64u);
  const NextHopGroup& grp = w.fib->group(g);
  std::set<uint16_t> ports;
  for (auto* m : out[Ipv6Route::Rewrite]) {
    EXPECT_EQ(meta(m).nexthop, grp.table[meta(m).flow_hash & grp.mask]);
    EXPECT_EQ(meta(m).out_port, w.fib->nexthop(meta(m).nexthop).port);
    ports.insert(meta(m).out_port);
  }
  EXPECT_EQ(ports, (std::set<uint16_t>{2, 5}));
  EXPECT_EQ(h.counter("member_inline"), 64u);
}

}  // namespace
}  // namespace rs::test
