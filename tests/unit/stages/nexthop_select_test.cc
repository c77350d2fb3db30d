// nexthop_select (P4 nexthop_selector, the group's routing policy as its selection
// algorithm): the one place a policy is called, once per policy present in a burst with that
// policy's packets in arrival order. ECMP through it: route -> group -> table[hash & (size - 1)],
// weights by replication, one flow one path. An answer on a port the switch does not have is a
// BadNextHop drop. The policy contract itself: tests/unit/routing/.
#include "dataplane/routing/policy_set.h"
#include "dataplane/stages/nexthop_select.h"

#include <fmt/core.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "dataplane/routing/routing_policy.h"
#include "tests/support/stage_harness.h"
#include "tests/unit/stages/stage_test_util.h"

namespace rs::test {
namespace {

// noinline: GCC 12 at -O2 reports a false -Wmaybe-uninitialized in std::variant's move when this
// is inlined into a loop (a known GCC 12 false positive with variant<..., vector>).
[[gnu::noinline]] PacketSpec flow(uint16_t sport, uint32_t psn = 0) {
  return Eth{} / Ipv4{} / Udp{.sport = sport} / Bth{.psn = psn} / Payload::of_size(16);
}

// Parsed packets (real flow hashes) that a route stage would have sent to group `g`.
std::vector<rte_mbuf*> for_group(const std::vector<PacketSpec>& specs, uint32_t g) {
  auto v = parsed(specs);
  for (auto* m : v) meta(m).group = static_cast<uint16_t>(g);
  return v;
}

std::string member_mac(int i) { return fmt::format("02:00:00:00:cc:{:02x}", i); }

// Sends `flows` flows (one packet each, UDP source ports from 0xC000) through the stage in
// batches that fit the test pool; returns packets per out_port.
std::map<uint16_t, int> spread(StageHarness<NexthopSelect>& h, uint32_t g, int flows) {
  std::map<uint16_t, int> per_port;
  for (int at = 0; at < flows; at += 2048) {
    std::vector<PacketSpec> specs;
    for (int i = at; i < std::min(flows, at + 2048); ++i) specs.push_back(flow(static_cast<uint16_t>(0xC000 + i)));
    auto out = h.run_mbufs(for_group(specs, g));
    EXPECT_EQ(out.dropped(), 0u);
    for (auto* m : out[NexthopSelect::Rewrite]) ++per_port[meta(m).out_port];
  }
  return per_port;
}

// |observed - n p| within 5 standard deviations of a binomial(n, p): fails by chance with
// probability ~6e-7, while a broken hash or table is off by far more.
void expect_binomial(int observed, int n, double p, const std::string& what) {
  const double mean = n * p;
  const double sd = std::sqrt(n * p * (1 - p));
  ::testing::Test::RecordProperty(what, observed);  // the measured shares, in --gtest_output=xml
  EXPECT_LE(std::abs(observed - mean), 5 * sd) << what << ": " << observed << " of " << n << ", expected ~" << mean;
}

TEST(NexthopSelect, SingleMemberWritesNexthopAndOutPort) {
  TestWorld w;
  StageHarness<NexthopSelect> h{{}, &w};
  w.route("10.0.0.0/8", 0, "02:00:00:00:bb:00");  // another group first, so ids are not all 0
  const uint32_t g = w.route("10.0.2.0/24", 2, "02:00:00:00:bb:02");
  const uint32_t nh = w.fib->group(g).members.at(0);
  auto out = h.run_mbufs(for_group({flow(1), flow(2), flow(3)}, g));
  ASSERT_EQ(out[NexthopSelect::Rewrite].size(), 3u);
  for (auto* m : out[NexthopSelect::Rewrite]) {
    EXPECT_EQ(meta(m).nexthop, nh);
    EXPECT_EQ(meta(m).out_port, 2);
  }
  EXPECT_EQ(h.counter("selected"), 3u);
  EXPECT_EQ(h.counter("bad_nexthop"), 0u);
  EXPECT_EQ(h.counter("policy_calls"), 1u);
}

TEST(NexthopSelect, OneFlowTakesOneMember) {
  // All packets of one RoCE QP (same 5-tuple, different PSN and payload) take one path: no
  // reordering inside a flow.
  TestWorld w{8};
  StageHarness<NexthopSelect> h{{}, &w};
  std::vector<std::pair<uint16_t, std::string>> members;
  for (uint16_t p = 0; p < 8; ++p) members.push_back({p, member_mac(p)});
  const uint32_t g = w.route_group("10.0.2.0/24", members);
  for (uint16_t sport : {0xC001, 0xC002, 0xD00D, 0xFFFF}) {
    std::vector<PacketSpec> specs;
    for (uint32_t psn = 0; psn < 100; ++psn) specs.push_back(flow(sport, psn));
    auto out = h.run_mbufs(for_group(specs, g));
    ASSERT_EQ(out[NexthopSelect::Rewrite].size(), 100u);
    std::set<uint32_t> nhs;
    for (auto* m : out[NexthopSelect::Rewrite]) nhs.insert(meta(m).nexthop);
    EXPECT_EQ(nhs.size(), 1u) << "sport " << sport;
  }
}

TEST(NexthopSelect, EightWayEcmpUsesEveryMemberEvenly) {
  TestWorld w{8};
  StageHarness<NexthopSelect> h{{}, &w};
  std::vector<std::pair<uint16_t, std::string>> members;
  for (uint16_t p = 0; p < 8; ++p) members.push_back({p, member_mac(p)});
  const uint32_t g = w.route_group("10.0.2.0/24", members);
  ASSERT_EQ(w.fib->group(g).table.size(), 64u);
  constexpr int kFlows = 8192;
  auto per_port = spread(h, g, kFlows);
  ASSERT_EQ(per_port.size(), 8u) << "every member must carry flows";
  int total = 0;
  for (auto& [port, n] : per_port) {
    expect_binomial(n, kFlows, 1.0 / 8, fmt::format("port {}", port));
    total += n;
  }
  EXPECT_EQ(total, kFlows);
}

TEST(NexthopSelect, NonPowerOfTwoMemberCountStillUsesAll) {
  // 3 members over a 64-slot table: 22/21/21 slots, so shares are within 1/64 of a third.
  TestWorld w{8};
  StageHarness<NexthopSelect> h{{}, &w};
  const uint32_t g = w.route_group("10.0.2.0/24", {{1, member_mac(1)}, {4, member_mac(4)}, {6, member_mac(6)}});
  constexpr int kFlows = 6000;
  auto per_port = spread(h, g, kFlows);
  ASSERT_EQ(per_port.size(), 3u);
  expect_binomial(per_port[1], kFlows, 22.0 / 64, "port 1 (22 slots)");
  expect_binomial(per_port[4], kFlows, 21.0 / 64, "port 4 (21 slots)");
  expect_binomial(per_port[6], kFlows, 21.0 / 64, "port 6 (21 slots)");
}

TEST(NexthopSelect, WeightsByReplication) {
  // Member A listed three times, B once: A owns 3/4 of the redirection table.
  TestWorld w{4};
  StageHarness<NexthopSelect> h{{}, &w};
  const uint32_t a = w.fib->add_nexthop({1, mac("02:00:00:00:cc:0a")});
  const uint32_t b = w.fib->add_nexthop({2, mac("02:00:00:00:cc:0b")});
  NextHopGroup grp;
  grp.name = "weighted";
  grp.members = {a, a, a, b};
  const uint32_t g = w.fib->add_group(grp);
  w.fib->attach_policies(1, 1);
  const auto& table = w.fib->group(g).table;
  ASSERT_EQ(table.size(), 64u);
  EXPECT_EQ(std::count(table.begin(), table.end(), a), 48);
  EXPECT_EQ(std::count(table.begin(), table.end(), b), 16);
  constexpr int kFlows = 8000;
  auto per_port = spread(h, g, kFlows);
  expect_binomial(per_port[1], kFlows, 0.75, "weight 3");
  expect_binomial(per_port[2], kFlows, 0.25, "weight 1");
  EXPECT_EQ(per_port[1] + per_port[2], kFlows);
}

TEST(NexthopSelect, SelectsBySlotOfTheFlowHash) {
  // The ECMP policy is exactly table[flow_hash & mask]: a hand-made table makes that visible.
  TestWorld w{4};
  StageHarness<NexthopSelect> h{{}, &w};
  const uint32_t a = w.fib->add_nexthop({1, mac("02:00:00:00:cc:0a")});
  const uint32_t b = w.fib->add_nexthop({3, mac("02:00:00:00:cc:0b")});
  NextHopGroup grp;
  grp.name = "hand";
  grp.members = {a, b};
  grp.table = {a, b, b, a};
  const uint32_t g = w.fib->add_group(grp);
  w.fib->attach_policies(1, 1);
  auto v = for_group({flow(1), flow(2), flow(3), flow(4), flow(5), flow(6), flow(7), flow(8)}, g);
  std::vector<uint32_t> want;
  for (auto* m : v) want.push_back(grp.table[meta(m).flow_hash & 3]);
  auto out = h.run_mbufs(v);
  ASSERT_EQ(out[NexthopSelect::Rewrite].size(), 8u);
  for (std::size_t i = 0; i < 8; ++i) {
    EXPECT_EQ(meta(out[NexthopSelect::Rewrite][i]).nexthop, want[i]);
    EXPECT_EQ(meta(out[NexthopSelect::Rewrite][i]).out_port, want[i] == a ? 1 : 3);
  }
}

TEST(NexthopSelect, NextHopOnMissingPortIsBadNextHop) {
  // The world has 4 ports; a next hop on port 9 must never reach the egress arrays.
  TestWorld w{4};
  StageHarness<NexthopSelect> h{{}, &w};
  const uint32_t bad = w.route("10.0.9.0/24", 9, "02:00:00:00:bb:09");
  const uint32_t good = w.route("10.0.2.0/24", 3, "02:00:00:00:bb:03");
  std::vector<rte_mbuf*> v = for_group({flow(1), flow(2)}, bad);
  auto more = for_group({flow(3)}, good);
  v.insert(v.end(), more.begin(), more.end());
  auto out = h.run_mbufs(v);
  ASSERT_EQ(out.dropped(), 2u);
  for (auto* m : out[kNextDrop]) EXPECT_EQ(meta(m).drop_reason, DropReason::BadNextHop);
  ASSERT_EQ(out[NexthopSelect::Rewrite].size(), 1u);
  EXPECT_EQ(meta(out[NexthopSelect::Rewrite][0]).out_port, 3);
  EXPECT_EQ(h.counter("bad_nexthop"), 2u);
  EXPECT_EQ(h.counter("selected"), 1u);
}

// A policy registered in this test binary that records what it is given: each call's packets
// (by PSN, which the tests number in arrival order). It answers the group's first member, or
// (rogue) a member the group does not have.
class RecordingPolicy final : public RoutingPolicy {
 public:
  static constexpr std::string_view kSummary = "test: records its calls";
  static constexpr std::array<ParamSpec, 1> kParams = {{{"rogue", ParamType::Bool, 0}}};
  static constexpr std::array<std::string_view, 0> kCounters = {};
  explicit RecordingPolicy(const PolicyInit& in) : RoutingPolicy(in), rogue_(in.params[0] != 0) {}
  void select(const PacketMeta* const* m, uint16_t n, const SelectEnv&, uint16_t* member) override {
    calls.emplace_back();
    for (uint16_t i = 0; i < n; ++i) {
      calls.back().push_back(m[i]->psn);
      member[i] = rogue_ ? 1000 : 0;
    }
  }
  std::vector<std::vector<uint32_t>> calls;

 private:
  bool rogue_;
};
REGISTER_ROUTING_POLICY(RecordingPolicy, "test_recording");

// A one-member group (port `port`) with a recording policy; the world's policy instances are
// made anew, so add every group before looking an instance up (recorder()).
uint32_t add_group_with(TestWorld& w, bool rogue, uint16_t port) {
  NextHopGroup grp;
  grp.name = fmt::format("custom{}", w.fib->num_groups());
  grp.choices = {resolve_policy(PolicySpec{"test_recording", {{"rogue", rogue ? 1.0 : 0.0}}}, "test")};
  grp.members = {w.fib->add_nexthop({port, mac(member_mac(port))})};
  const uint32_t g = w.fib->add_group(grp);
  w.fib->attach_policies(1, 1);
  return g;
}
RecordingPolicy& recorder(TestWorld& w, uint32_t group) {
  return dynamic_cast<RecordingPolicy&>(*w.fib->policies(0).at(group, 0));
}

TEST(NexthopSelect, PolicyIsCalledOncePerBurstWithItsPacketsInArrivalOrder) {
  // Two policies' groups interleaved in one burst: each policy is called once, with exactly its
  // own packets, in the order they arrived (what a flowlet or last-best policy needs).
  TestWorld w{4};
  const uint32_t g1 = add_group_with(w, false, 1);
  const uint32_t g2 = add_group_with(w, false, 2);
  RecordingPolicy& p1 = recorder(w, g1);
  RecordingPolicy& p2 = recorder(w, g2);
  StageHarness<NexthopSelect> h{{}, &w};
  std::vector<rte_mbuf*> v;
  const uint32_t order[] = {1, 2, 2, 1, 1, 2, 1, 2, 2, 2};
  for (uint32_t i = 0; i < 10; ++i) {
    auto one = for_group({flow(static_cast<uint16_t>(0xC000 + i), i)}, order[i] == 1 ? g1 : g2);
    v.insert(v.end(), one.begin(), one.end());
  }
  auto out = h.run_mbufs(v);
  ASSERT_EQ(out[NexthopSelect::Rewrite].size(), 10u);
  EXPECT_EQ(out[NexthopSelect::Rewrite], v) << "the stage keeps the burst's order";
  for (auto* m : out[NexthopSelect::Rewrite]) EXPECT_EQ(meta(m).out_port, meta(m).group == g1 ? 1 : 2);
  ASSERT_EQ(p1.calls.size(), 1u);
  ASSERT_EQ(p2.calls.size(), 1u);
  EXPECT_EQ(p1.calls[0], (std::vector<uint32_t>{0, 3, 4, 6}));
  EXPECT_EQ(p2.calls[0], (std::vector<uint32_t>{1, 2, 5, 7, 8, 9}));
  EXPECT_EQ(h.counter("policy_calls"), 2u);
  // Across bursts: one call per burst, never a packet twice.
  std::vector<PacketSpec> specs;
  for (uint32_t i = 0; i < kBurst + 5; ++i) specs.push_back(flow(static_cast<uint16_t>(0xC100 + i), 100 + i));
  auto out2 = h.run_mbufs(for_group(specs, g1));
  ASSERT_EQ(p1.calls.size(), 3u);
  EXPECT_EQ(p1.calls[1].size(), kBurst);
  EXPECT_EQ(p1.calls[2].size(), 5u);
  EXPECT_EQ(p1.calls[2].front(), 100u + kBurst);
  EXPECT_EQ(h.counter("policy_calls"), 4u);
}

TEST(NexthopSelect, GroupsWithDifferentPoliciesInOneBurst) {
  // A sound policy and one answering next hops the FIB does not have, interleaved: each packet
  // gets its own group's policy's answer, and only the rogue's are dropped.
  TestWorld w{4};
  StageHarness<NexthopSelect> h{{}, &w};
  const uint32_t good = w.route("10.0.2.0/24", 3, "02:00:00:00:bb:03");
  const uint32_t bad = add_group_with(w, true, 1);
  std::vector<rte_mbuf*> v;
  for (int i = 0; i < 6; ++i) {
    auto one = for_group({flow(static_cast<uint16_t>(0xC000 + i))}, i % 2 ? bad : good);
    v.insert(v.end(), one.begin(), one.end());
  }
  auto out = h.run_mbufs(v);
  ASSERT_EQ(out.dropped(), 3u);
  for (auto* m : out[kNextDrop]) {
    EXPECT_EQ(meta(m).drop_reason, DropReason::BadNextHop);
    EXPECT_EQ(meta(m).group, bad);
  }
  ASSERT_EQ(out[NexthopSelect::Rewrite].size(), 3u);
  for (auto* m : out[NexthopSelect::Rewrite]) EXPECT_EQ(meta(m).out_port, 3);
  EXPECT_EQ(h.counter("bad_nexthop"), 3u);
  EXPECT_EQ(h.counter("selected"), 3u);
  EXPECT_EQ(h.counter("policy_calls"), 2u);
}

TEST(NexthopSelect, TellsThePipelineWhenTheWholeBurstTookRewrite) {
  TestWorld w{4};
  const uint32_t good = w.route("10.0.2.0/24", 3, "02:00:00:00:bb:03");
  const uint32_t bad = w.route("10.0.9.0/24", 9, "02:00:00:00:bb:09");
  NexthopSelect stage{StageEnv{}};
  auto run = [&](std::vector<rte_mbuf*> v) {
    Burst b;
    for (auto* m : v) b.push(m);
    uint8_t next[kBurst];
    const uint8_t r = stage.process(b, next, w.ctx);
    free_all(v);
    return r;
  };
  EXPECT_EQ(run(for_group({flow(1), flow(2)}, good)), NexthopSelect::Rewrite);
  auto mixed = for_group({flow(1)}, good);
  auto rest = for_group({flow(2)}, bad);
  mixed.insert(mixed.end(), rest.begin(), rest.end());
  EXPECT_EQ(run(mixed), kNextMixed);
}

}  // namespace
}  // namespace rs::test
