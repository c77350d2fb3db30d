// IPv4 LPM stage (P4 ipv4_lpm): longest prefix wins whatever the insertion order, host routes,
// the default route, NoRoute and TtlExpired as named, counted drops.
#include "dataplane/stages/route/ipv4_lpm.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/stage_harness.h"
#include "tests/unit/stages/stage_test_util.h"

namespace rs::test {
namespace {

PacketSpec to(const std::string& dst, uint8_t ttl = 64) {
  return Eth{} / Ipv4{.dst = dst, .ttl = ttl} / Udp{} / Bth{} / Payload::of_size(16);
}

// Groups looked up for each destination, in order; kNoGroup for a drop.
constexpr uint32_t kNoGroup = 0xFFFFFFFF;

// Looks each destination up in its own burst; a drop must be NoRoute.
std::vector<uint32_t> groups_for(StageHarness<Ipv4Lpm>& h, const std::vector<std::string>& dsts) {
  std::vector<uint32_t> r;
  for (const auto& d : dsts) {
    auto out = h.run_mbufs(parsed({to(d)}));
    if (out[Ipv4Lpm::Group].size() == 1) {
      r.push_back(meta(out[Ipv4Lpm::Group][0]).group);
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

TEST(Ipv4Lpm, LongestPrefixWins) {
  TestWorld w;
  StageHarness<Ipv4Lpm> h{{}, &w};
  const uint32_t g8 = w.route("10.0.0.0/8", 1, "02:00:00:00:bb:01");
  const uint32_t g16 = w.route("10.1.0.0/16", 2, "02:00:00:00:bb:02");
  const uint32_t g24 = w.route("10.1.2.0/24", 3, "02:00:00:00:bb:03");
  const uint32_t g32 = w.route("10.1.2.3/32", 0, "02:00:00:00:bb:04");
  auto g = groups_for(h, {"10.1.2.3", "10.1.2.4", "10.1.2.255", "10.1.3.1", "10.9.9.9", "10.255.255.255", "11.0.0.1", "9.255.255.255"});
  EXPECT_EQ(g[0], g32);
  EXPECT_EQ(g[1], g24);
  EXPECT_EQ(g[2], g24);
  EXPECT_EQ(g[3], g16);
  EXPECT_EQ(g[4], g8);
  EXPECT_EQ(g[5], g8);
  EXPECT_EQ(g[6], kNoGroup);
  EXPECT_EQ(g[7], kNoGroup);
  EXPECT_EQ(h.counter("hit"), 6u);
  EXPECT_EQ(h.counter("miss"), 2u);
  EXPECT_EQ(h.counter("ttl_expired"), 0u);
}

TEST(Ipv4Lpm, InsertionOrderDoesNotMatter) {
  // Most specific first: a naive "first match" table would get these wrong.
  TestWorld w;
  StageHarness<Ipv4Lpm> h{{}, &w};
  const uint32_t g32 = w.route("10.1.2.3/32", 0, "02:00:00:00:bb:04");
  const uint32_t g24 = w.route("10.1.2.0/24", 3, "02:00:00:00:bb:03");
  const uint32_t g8 = w.route("10.0.0.0/8", 1, "02:00:00:00:bb:01");
  auto g = groups_for(h, {"10.1.2.3", "10.1.2.9", "10.200.0.1"});
  EXPECT_EQ(g[0], g32);
  EXPECT_EQ(g[1], g24);
  EXPECT_EQ(g[2], g8);
}

TEST(Ipv4Lpm, PrefixBoundariesBeyondTbl24) {
  // Depths above 24 live in rte_lpm's tbl8s: check both ends of a /25 and a /31.
  TestWorld w;
  StageHarness<Ipv4Lpm> h{{}, &w};
  const uint32_t g24 = w.route("192.168.1.0/24", 1, "02:00:00:00:bb:01");
  const uint32_t g25 = w.route("192.168.1.128/25", 2, "02:00:00:00:bb:02");
  const uint32_t g31 = w.route("192.168.1.6/31", 3, "02:00:00:00:bb:03");
  auto g = groups_for(h, {"192.168.1.127", "192.168.1.128", "192.168.1.255", "192.168.1.5", "192.168.1.6", "192.168.1.7", "192.168.1.8"});
  EXPECT_EQ(g[0], g24);
  EXPECT_EQ(g[1], g25);
  EXPECT_EQ(g[2], g25);
  EXPECT_EQ(g[3], g24);
  EXPECT_EQ(g[4], g31);
  EXPECT_EQ(g[5], g31);
  EXPECT_EQ(g[6], g24);
}

TEST(Ipv4Lpm, HostRoutes) {
  TestWorld w;
  StageHarness<Ipv4Lpm> h{{}, &w};
  const uint32_t a = w.route("10.0.2.2/32", 1, "02:00:00:00:bb:01");
  const uint32_t b = w.route("10.0.2.3", 2, "02:00:00:00:bb:02");  // no length: a host route
  auto g = groups_for(h, {"10.0.2.2", "10.0.2.3", "10.0.2.1", "10.0.2.4"});
  EXPECT_EQ(g[0], a);
  EXPECT_EQ(g[1], b);
  EXPECT_EQ(g[2], kNoGroup);
  EXPECT_EQ(g[3], kNoGroup);
}

TEST(Ipv4Lpm, EmptyFibIsNoRoute) {
  StageHarness<Ipv4Lpm> h;
  auto out = h.run_mbufs(parsed({to("10.0.2.2"), to("1.1.1.1")}));
  ASSERT_EQ(out.dropped(), 2u);
  for (auto* m : out[kNextDrop]) EXPECT_EQ(meta(m).drop_reason, DropReason::NoRoute);
  EXPECT_EQ(h.counter("miss"), 2u);
}

// A fabric leaf needs a default route towards its spines. rte_lpm rejects depth 0, so the FIB
// keeps the /0 beside the table (regression: the first FIB threw "route add failed" although
// the config loader accepted "0.0.0.0/0").
TEST(Ipv4Lpm, DefaultRouteCatchesEverythingElse) {
  TestWorld w;
  StageHarness<Ipv4Lpm> h{{}, &w};
  uint32_t gdef = kNoGroup;
  ASSERT_NO_THROW(gdef = w.route("0.0.0.0/0", 3, "02:00:00:00:bb:0d"));
  const uint32_t g16 = w.route("10.1.0.0/16", 1, "02:00:00:00:bb:01");
  auto g = groups_for(h, {"10.1.2.3", "1.2.3.4", "255.255.255.255", "0.0.0.1", "10.2.0.0"});
  EXPECT_EQ(g[0], g16);
  EXPECT_EQ(g[1], gdef);
  EXPECT_EQ(g[2], gdef);
  EXPECT_EQ(g[3], gdef);
  EXPECT_EQ(g[4], gdef);
  EXPECT_EQ(h.counter("miss"), 0u);
}

TEST(Ipv4Lpm, DefaultRouteAloneInAnEmptyTable) {
  // Only 0.0.0.0/0: the LPM table itself is never created, the default must still answer.
  TestWorld w;
  StageHarness<Ipv4Lpm> h{{}, &w};
  const uint32_t gdef = w.route("0.0.0.0/0", 2, "02:00:00:00:bb:0d");
  auto g = groups_for(h, {"10.0.2.2", "192.0.2.1"});
  EXPECT_EQ(g[0], gdef);
  EXPECT_EQ(g[1], gdef);
}

TEST(Ipv4Lpm, TtlOneAndZeroExpire) {
  TestWorld w;
  StageHarness<Ipv4Lpm> h{{}, &w};
  const uint32_t g = w.route("10.0.2.0/24", 1, "02:00:00:00:bb:01");
  auto out = h.run_mbufs(parsed({to("10.0.2.2", 1), to("10.0.2.2", 0), to("10.0.2.2", 2), to("10.0.2.2", 255)}));
  ASSERT_EQ(out.dropped(), 2u);
  for (auto* m : out[kNextDrop]) EXPECT_EQ(meta(m).drop_reason, DropReason::TtlExpired);
  ASSERT_EQ(out[Ipv4Lpm::Group].size(), 2u) << "TTL 2 still has one hop left";
  for (auto* m : out[Ipv4Lpm::Group]) EXPECT_EQ(meta(m).group, g);
  EXPECT_EQ(h.counter("ttl_expired"), 2u);
  EXPECT_EQ(h.counter("hit"), 2u);
  EXPECT_EQ(h.counter("miss"), 0u);
}

TEST(Ipv4Lpm, TtlIsCheckedBeforeTheLookup) {
  // An expired packet to nowhere counts as expired, not as a miss: the stage spends no lookup.
  StageHarness<Ipv4Lpm> h;
  auto out = h.run_mbufs(parsed({to("172.16.0.1", 1)}));
  ASSERT_EQ(out.dropped(), 1u);
  EXPECT_EQ(meta(out[kNextDrop][0]).drop_reason, DropReason::TtlExpired);
  EXPECT_EQ(h.counter("miss"), 0u);
}

TEST(Ipv4Lpm, ReadsHeaderAtL3OffsetBehindVlan) {
  TestWorld w;
  StageHarness<Ipv4Lpm> h{{}, &w};
  const uint32_t g = w.route("10.0.2.0/24", 1, "02:00:00:00:bb:01");
  auto out = h.run_mbufs(parsed({Eth{} / Vlan{.pcp = 3} / Ipv4{.dst = "10.0.2.9"} / Udp{} / Bth{} / Payload::of_size(16),
                                 Eth{} / Vlan{.pcp = 3} / Ipv4{.dst = "10.0.2.9", .ttl = 1} / Udp{} / Bth{} / Payload::of_size(16)}));
  ASSERT_EQ(out[Ipv4Lpm::Group].size(), 1u);
  EXPECT_EQ(meta(out[Ipv4Lpm::Group][0]).group, g);
  ASSERT_EQ(out.dropped(), 1u);
  EXPECT_EQ(meta(out[kNextDrop][0]).drop_reason, DropReason::TtlExpired);
}

TEST(Ipv4Lpm, DoesNotTouchThePacket) {
  // TTL is decremented at egress, once the packet is known to leave.
  TestWorld w;
  StageHarness<Ipv4Lpm> h{{}, &w};
  w.route("10.0.2.0/24", 1, "02:00:00:00:bb:01");
  const PacketSpec s = to("10.0.2.2", 9);
  auto out = h.run_mbufs(parsed({s}));
  ASSERT_EQ(out[Ipv4Lpm::Group].size(), 1u);
  EXPECT_EQ(mbuf_bytes(out[Ipv4Lpm::Group][0]), s.bytes());
}

TEST(Ipv4Lpm, ManyPacketsAcrossBursts) {
  // 100 packets (more than three bursts), alternating hit and miss.
  TestWorld w;
  StageHarness<Ipv4Lpm> h{{}, &w};
  w.route("10.0.0.0/16", 1, "02:00:00:00:bb:01");
  std::vector<PacketSpec> pkts;
  for (int i = 0; i < 100; ++i) pkts.push_back(to(i % 2 ? "10.0.3.4" : "10.1.3.4"));
  auto out = h.run_mbufs(parsed(pkts));
  EXPECT_EQ(out[Ipv4Lpm::Group].size(), 50u);
  EXPECT_EQ(out.dropped(), 50u);
  EXPECT_EQ(h.counter("hit"), 50u);
  EXPECT_EQ(h.counter("miss"), 50u);
}

}  // namespace
}  // namespace rs::test
