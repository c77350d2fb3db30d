// Next-hop group stage (P4 ecmp_group / ecmp_member) and the routing policy contract.
// ECMP: route -> group -> table[hash & (size - 1)], weights by replication, one flow one path.
// The contract suite runs over every registered routing policy, so a new policy is tested the
// moment it registers.
#include "dataplane/stages/route/nexthop_group.h"

#include <gtest/gtest.h>

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "dataplane/policies/routing/routing_policy.h"
#include "tests/support/stage_harness.h"
#include "tests/unit/stages/stage_test_util.h"

namespace rs::test {
namespace {

// noinline: GCC 12 at -O2 reports a false -Wmaybe-uninitialized in std::variant's move when this
// is inlined into a loop (a known GCC 12 false positive with variant<..., vector>).
[[gnu::noinline]] PacketSpec flow(uint16_t sport, uint32_t psn = 0) {
  return Eth{} / Ipv4{} / Udp{.sport = sport} / Bth{.psn = psn} / Payload::of_size(16);
}

// Parsed packets (real flow hashes) that the LPM stage would have sent to group `g`.
std::vector<rte_mbuf*> for_group(const std::vector<PacketSpec>& specs, uint32_t g) {
  auto v = parsed(specs);
  for (auto* m : v) meta(m).group = static_cast<uint16_t>(g);
  return v;
}

std::string member_mac(int i) { return fmt::format("02:00:00:00:cc:{:02x}", i); }

// Sends `flows` flows (one packet each, UDP source ports from 0xC000) through the stage in
// batches that fit the test pool; returns packets per out_port.
std::map<uint16_t, int> spread(StageHarness<NexthopGroup>& h, uint32_t g, int flows) {
  std::map<uint16_t, int> per_port;
  for (int at = 0; at < flows; at += 2048) {
    std::vector<PacketSpec> specs;
    for (int i = at; i < std::min(flows, at + 2048); ++i) specs.push_back(flow(static_cast<uint16_t>(0xC000 + i)));
    auto out = h.run_mbufs(for_group(specs, g));
    EXPECT_EQ(out.dropped(), 0u);
    for (auto* m : out[NexthopGroup::Rewrite]) ++per_port[meta(m).out_port];
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

TEST(NexthopGroup, SingleMemberWritesNexthopAndOutPort) {
  TestWorld w;
  StageHarness<NexthopGroup> h{{}, &w};
  w.route("10.0.0.0/8", 0, "02:00:00:00:bb:00");  // another group first, so ids are not all 0
  const uint32_t g = w.route("10.0.2.0/24", 2, "02:00:00:00:bb:02");
  const uint32_t nh = w.fib->group(g).members.at(0);
  auto out = h.run_mbufs(for_group({flow(1), flow(2), flow(3)}, g));
  ASSERT_EQ(out[NexthopGroup::Rewrite].size(), 3u);
  for (auto* m : out[NexthopGroup::Rewrite]) {
    EXPECT_EQ(meta(m).nexthop, nh);
    EXPECT_EQ(meta(m).out_port, 2);
  }
  EXPECT_EQ(h.counter("selected"), 3u);
  EXPECT_EQ(h.counter("bad_nexthop"), 0u);
}

TEST(NexthopGroup, OneFlowTakesOneMember) {
  // All packets of one RoCE QP (same 5-tuple, different PSN and payload) take one path: no
  // reordering inside a flow.
  TestWorld w{8};
  StageHarness<NexthopGroup> h{{}, &w};
  std::vector<std::pair<uint16_t, std::string>> members;
  for (uint16_t p = 0; p < 8; ++p) members.push_back({p, member_mac(p)});
  const uint32_t g = w.route_group("10.0.2.0/24", members);
  for (uint16_t sport : {0xC001, 0xC002, 0xD00D, 0xFFFF}) {
    std::vector<PacketSpec> specs;
    for (uint32_t psn = 0; psn < 100; ++psn) specs.push_back(flow(sport, psn));
    auto out = h.run_mbufs(for_group(specs, g));
    ASSERT_EQ(out[NexthopGroup::Rewrite].size(), 100u);
    std::set<uint32_t> nhs;
    for (auto* m : out[NexthopGroup::Rewrite]) nhs.insert(meta(m).nexthop);
    EXPECT_EQ(nhs.size(), 1u) << "sport " << sport;
  }
}

TEST(NexthopGroup, EightWayEcmpUsesEveryMemberEvenly) {
  TestWorld w{8};
  StageHarness<NexthopGroup> h{{}, &w};
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

TEST(NexthopGroup, NonPowerOfTwoMemberCountStillUsesAll) {
  // 3 members over a 64-slot table: 22/21/21 slots, so shares are within 1/64 of a third.
  TestWorld w{8};
  StageHarness<NexthopGroup> h{{}, &w};
  const uint32_t g = w.route_group("10.0.2.0/24", {{1, member_mac(1)}, {4, member_mac(4)}, {6, member_mac(6)}});
  constexpr int kFlows = 6000;
  auto per_port = spread(h, g, kFlows);
  ASSERT_EQ(per_port.size(), 3u);
  expect_binomial(per_port[1], kFlows, 22.0 / 64, "port 1 (22 slots)");
  expect_binomial(per_port[4], kFlows, 21.0 / 64, "port 4 (21 slots)");
  expect_binomial(per_port[6], kFlows, 21.0 / 64, "port 6 (21 slots)");
}

TEST(NexthopGroup, WeightsByReplication) {
  // Member A listed three times, B once: A owns 3/4 of the redirection table.
  TestWorld w{4};
  StageHarness<NexthopGroup> h{{}, &w};
  const uint32_t a = w.fib->add_nexthop({1, mac("02:00:00:00:cc:0a")});
  const uint32_t b = w.fib->add_nexthop({2, mac("02:00:00:00:cc:0b")});
  NextHopGroup grp;
  grp.name = "weighted";
  grp.policy = static_cast<uint16_t>(RoutingPolicyRegistry::find("ecmp_hash"));
  grp.members = {a, a, a, b};
  const uint32_t g = w.fib->add_group(grp);
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

TEST(NexthopGroup, SelectsBySlotOfTheFlowHash) {
  // The ECMP policy is exactly table[flow_hash & mask]: a hand-made table makes that visible.
  TestWorld w{4};
  StageHarness<NexthopGroup> h{{}, &w};
  const uint32_t a = w.fib->add_nexthop({1, mac("02:00:00:00:cc:0a")});
  const uint32_t b = w.fib->add_nexthop({3, mac("02:00:00:00:cc:0b")});
  NextHopGroup grp;
  grp.name = "hand";
  grp.policy = static_cast<uint16_t>(RoutingPolicyRegistry::find("ecmp_hash"));
  grp.members = {a, b};
  grp.table = {a, b, b, a};
  const uint32_t g = w.fib->add_group(grp);
  auto v = for_group({flow(1), flow(2), flow(3), flow(4), flow(5), flow(6), flow(7), flow(8)}, g);
  std::vector<uint32_t> want;
  for (auto* m : v) want.push_back(grp.table[meta(m).flow_hash & 3]);
  auto out = h.run_mbufs(v);
  ASSERT_EQ(out[NexthopGroup::Rewrite].size(), 8u);
  for (std::size_t i = 0; i < 8; ++i) {
    EXPECT_EQ(meta(out[NexthopGroup::Rewrite][i]).nexthop, want[i]);
    EXPECT_EQ(meta(out[NexthopGroup::Rewrite][i]).out_port, want[i] == a ? 1 : 3);
  }
}

TEST(NexthopGroup, NextHopOnMissingPortIsBadNextHop) {
  // The world has 4 ports; a next hop on port 9 must never reach the egress arrays.
  TestWorld w{4};
  StageHarness<NexthopGroup> h{{}, &w};
  const uint32_t bad = w.route("10.0.9.0/24", 9, "02:00:00:00:bb:09");
  const uint32_t good = w.route("10.0.2.0/24", 3, "02:00:00:00:bb:03");
  std::vector<rte_mbuf*> v = for_group({flow(1), flow(2)}, bad);
  auto more = for_group({flow(3)}, good);
  v.insert(v.end(), more.begin(), more.end());
  auto out = h.run_mbufs(v);
  ASSERT_EQ(out.dropped(), 2u);
  for (auto* m : out[kNextDrop]) EXPECT_EQ(meta(m).drop_reason, DropReason::BadNextHop);
  ASSERT_EQ(out[NexthopGroup::Rewrite].size(), 1u);
  EXPECT_EQ(meta(out[NexthopGroup::Rewrite][0]).out_port, 3);
  EXPECT_EQ(h.counter("bad_nexthop"), 2u);
  EXPECT_EQ(h.counter("selected"), 1u);
}

// A policy that answers with a next-hop index the FIB does not have (student code gone wrong).
class OutOfRangePolicy final : public RoutingPolicy {
 public:
  uint32_t select(const PacketMeta&, const NextHopGroup&, const PortLoad&, uint64_t) override { return 1'000'000; }
};

// A one-member group (port 1) whose policy is the last one in w.policy_ptrs (the test pushes
// its OutOfRangePolicy there); returns the group id.
uint32_t add_rogue_group(TestWorld& w) {
  const uint32_t nh = w.fib->add_nexthop({1, mac("02:00:00:00:cc:01")});
  NextHopGroup grp;
  grp.name = "rogue";
  grp.policy = static_cast<uint16_t>(w.policy_ptrs.size() - 1);
  grp.members = {nh};
  return w.fib->add_group(grp);
}

TEST(NexthopGroup, PolicyAnsweringOutOfRangeIsBadNextHop) {
  TestWorld w{4};
  OutOfRangePolicy rogue;
  w.policy_ptrs.push_back(&rogue);
  w.ctx.policies = w.policy_ptrs.data();  // the vector may have moved
  StageHarness<NexthopGroup> h{{}, &w};
  const uint32_t g = add_rogue_group(w);
  auto out = h.run_mbufs(for_group({flow(1)}, g));
  ASSERT_EQ(out.dropped(), 1u);
  EXPECT_EQ(meta(out[kNextDrop][0]).drop_reason, DropReason::BadNextHop);
  EXPECT_EQ(h.counter("bad_nexthop"), 1u);
}

TEST(NexthopGroup, GroupsWithDifferentPoliciesInOneBurst) {
  // Two policies in one FIB: the stage cannot hand the burst to one policy, so each packet
  // goes to its own group's policy, in order.
  TestWorld w{4};
  OutOfRangePolicy rogue;
  w.policy_ptrs.push_back(&rogue);
  w.ctx.policies = w.policy_ptrs.data();
  StageHarness<NexthopGroup> h{{}, &w};
  const uint32_t good = w.route("10.0.2.0/24", 3, "02:00:00:00:bb:03");
  EXPECT_GE(w.fib->uniform_policy(), 0) << "one group so far";
  const uint32_t bad = add_rogue_group(w);
  EXPECT_EQ(w.fib->uniform_policy(), -1) << "groups now differ in policy";
  std::vector<rte_mbuf*> v;
  for (int i = 0; i < 6; ++i) {
    auto one = for_group({flow(static_cast<uint16_t>(0xC000 + i))}, i % 2 ? bad : good);
    v.insert(v.end(), one.begin(), one.end());
  }
  auto out = h.run_mbufs(v);
  ASSERT_EQ(out.dropped(), 3u);
  for (auto* m : out[kNextDrop]) EXPECT_EQ(meta(m).drop_reason, DropReason::BadNextHop);
  ASSERT_EQ(out[NexthopGroup::Rewrite].size(), 3u);
  for (auto* m : out[NexthopGroup::Rewrite]) EXPECT_EQ(meta(m).out_port, 3);
  EXPECT_EQ(h.counter("bad_nexthop"), 3u);
  EXPECT_EQ(h.counter("selected"), 3u);
}

// --- Routing policy contract ------------------------------------------------------------------

TEST(RoutingPolicyRegistry, EcmpHashIsRegistered) {
  EXPECT_GE(RoutingPolicyRegistry::find("ecmp_hash"), 0);
  EXPECT_EQ(RoutingPolicyRegistry::find("no_such_policy"), -1);
  // Names are unique: the config chooses a policy by name.
  std::set<std::string_view> names;
  for (auto& e : RoutingPolicyRegistry::all()) EXPECT_TRUE(names.insert(e.name).second) << e.name;
}

std::vector<std::string> policy_names() {
  std::vector<std::string> v;
  for (auto& e : RoutingPolicyRegistry::all()) v.emplace_back(e.name);
  return v;
}

class RoutingPolicyContract : public ::testing::TestWithParam<std::string> {
 protected:
  // A 5-member group (not a power of two) over ports 1..5 of a 8-port world, table of 64.
  void SetUp() override {
    const int id = RoutingPolicyRegistry::find(GetParam());
    ASSERT_GE(id, 0);
    entry_ = RoutingPolicyRegistry::all()[static_cast<std::size_t>(id)];
    for (uint16_t p = 1; p <= 5; ++p) group_.members.push_back(fib_.add_nexthop({p, mac(member_mac(p))}));
    group_.name = "contract";
    group_.policy = static_cast<uint16_t>(id);
    gid_ = fib_.add_group(group_);
  }

  // Deterministic pseudo-random packets, loads and times, as a worker would see them.
  struct Input {
    PacketMeta m;
    uint64_t now_ns;
    uint16_t loaded_port;
    uint64_t loaded_bytes;
  };
  static std::vector<Input> inputs(int n) {
    std::mt19937_64 rng(12345);
    std::vector<Input> v;
    uint64_t now = 1'000'000;
    for (int i = 0; i < n; ++i) {
      Input in{};
      in.m.flow_hash = static_cast<uint32_t>(rng());
      // Repeat some flows so flow-state policies (flowlets) see both new and known flows.
      if (i % 3 == 0 && i > 0) in.m.flow_hash = v[static_cast<std::size_t>(rng() % i)].m.flow_hash;
      in.m.in_port = static_cast<uint16_t>(rng() % 8);
      in.m.l3 = L3Type::Ipv4;
      in.m.ip_proto = 17;
      in.m.dscp = static_cast<uint8_t>(rng() % 64);
      in.m.tc = static_cast<uint8_t>(rng() % 8);
      in.m.queue = in.m.tc;
      in.m.flags = meta_flag::kUdp | meta_flag::kRoce;
      in.m.dest_qp = static_cast<uint32_t>(rng() & 0xFFFFFF);
      in.m.psn = static_cast<uint32_t>(i);
      in.m.out_port = kInvalidPort;
      now += rng() % 20'000;  // gaps up to 20 us, so flowlet timeouts are crossed sometimes
      in.now_ns = now;
      in.loaded_port = static_cast<uint16_t>(1 + rng() % 5);
      in.loaded_bytes = rng() % (1u << 20);
      v.push_back(in);
    }
    return v;
  }

  std::vector<uint32_t> run(uint32_t seed, const std::vector<Input>& in) {
    auto policy = entry_.make(seed);
    EXPECT_NE(policy, nullptr);
    if (!policy) return {};
    PortLoad load;
    std::vector<uint32_t> out;
    const NextHopGroup& g = fib_.group(gid_);
    for (const auto& x : in) {
      load.queued_bytes[x.loaded_port].set(x.loaded_bytes);
      out.push_back(policy->select(x.m, g, load, x.now_ns));
    }
    return out;
  }

  RoutingPolicyEntry entry_{};
  Fib fib_;
  NextHopGroup group_;
  uint32_t gid_ = 0;
};

TEST_P(RoutingPolicyContract, ReturnsAMemberOfTheGroup) {
  const auto in = inputs(20'000);
  const auto out = run(7, in);
  ASSERT_EQ(out.size(), in.size());
  const auto& members = fib_.group(gid_).members;
  int bad = 0;
  for (uint32_t nh : out) bad += std::find(members.begin(), members.end(), nh) == members.end();
  EXPECT_EQ(bad, 0) << GetParam() << " returned next hops outside the group";
}

TEST_P(RoutingPolicyContract, DeterministicForSameInputsAndSeed) {
  // Reproducible runs are what make a scenario test (and a student's bug report) possible.
  const auto in = inputs(5'000);
  EXPECT_EQ(run(7, in), run(7, in)) << GetParam();
  EXPECT_EQ(run(0, in), run(0, in)) << GetParam();
}

TEST_P(RoutingPolicyContract, UsesMoreThanOneMember) {
  // A policy that pins everything to one member is not load balancing.
  const auto out = run(7, inputs(5'000));
  std::set<uint32_t> used(out.begin(), out.end());
  EXPECT_GE(used.size(), 2u) << GetParam();
}

TEST_P(RoutingPolicyContract, SelectBurstAnswersAsSelect) {
  // nexthop_group hands a policy whole bursts when every group uses it: the answers must be
  // select()'s, packet by packet and in order (flow state included), for any burst size.
  const auto in = inputs(3'000);
  auto by_one = entry_.make(7);
  auto by_burst = entry_.make(7);
  ASSERT_TRUE(by_one && by_burst);
  PortLoad load;
  std::vector<PacketMeta> metas;
  for (const auto& x : in) {
    metas.push_back(x.m);
    metas.back().group = static_cast<uint16_t>(gid_);
  }
  const NextHopGroup& g = fib_.group(gid_);
  std::size_t i = 0;
  int mismatches = 0;
  for (uint16_t burst = 1; i < in.size(); burst = static_cast<uint16_t>(burst % kBurst + 1)) {
    const uint16_t n = static_cast<uint16_t>(std::min<std::size_t>(burst, in.size() - i));
    // One time and one load per burst, as a worker passes them.
    load.queued_bytes[in[i].loaded_port].set(in[i].loaded_bytes);
    const uint64_t now = in[i].now_ns;
    PacketMeta* ptrs[kBurst];
    uint32_t got[kBurst];
    for (uint16_t k = 0; k < n; ++k) ptrs[k] = &metas[i + k];
    by_burst->select_burst(ptrs, n, fib_, load, now, got);
    for (uint16_t k = 0; k < n; ++k) mismatches += got[k] != by_one->select(metas[i + k], g, load, now);
    i += n;
  }
  EXPECT_EQ(mismatches, 0) << GetParam();
}

TEST_P(RoutingPolicyContract, HashTableOnlyMeansTheTableSlotOfTheFlowHash) {
  // ipv4_fastpath skips select() for a policy that says it is plain ECMP: the claim must hold
  // for every packet, or the fast path and nexthop_group would choose differently.
  auto policy = entry_.make(7);
  ASSERT_NE(policy, nullptr);
  if (!policy->hash_table_only()) GTEST_SKIP() << GetParam() << " does not claim it";
  const NextHopGroup& g = fib_.group(gid_);
  PortLoad load;
  int differ = 0;
  for (const auto& x : inputs(20'000)) {
    load.queued_bytes[x.loaded_port].set(x.loaded_bytes);
    differ += policy->select(x.m, g, load, x.now_ns) != g.table[x.m.flow_hash & g.mask];
  }
  EXPECT_EQ(differ, 0) << GetParam();
}

TEST(NexthopGroupTable, FibRejectsATableNamingANextHopItDoesNotHave) {
  // The fast path reads a table slot as a next-hop index without a bounds check.
  Fib fib;
  const uint32_t a = fib.add_nexthop({1, mac(member_mac(1))});
  NextHopGroup good;
  good.name = "good";
  good.members = {a};
  good.table = {a, a};
  EXPECT_NO_THROW(fib.add_group(good));
  NextHopGroup bad = good;
  bad.name = "bad";
  bad.table = {a, a + 1};
  try {
    fib.add_group(bad);
    ADD_FAILURE() << "a table slot past the next hops was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("group 'bad': bad next hop 1 in its table"), std::string::npos) << e.what();
  }
  EXPECT_EQ(fib.num_groups(), 1u) << "nothing half-added";
}

TEST(NexthopGroupTable, GroupWordsAreEachSlotsNextHopAsTheFastPathLoadsIt) {
  // ipv4_fastpath's inline ECMP reads group_words()[g].words[slot] as the next hop's port and
  // MAC: every slot of every group, after more groups were added (the group vector moved).
  Fib fib;
  std::vector<uint32_t> nhs;
  for (uint16_t p = 0; p < 12; ++p) nhs.push_back(fib.add_nexthop({p, mac(member_mac(p))}));
  for (uint32_t g = 0; g < 9; ++g) {
    NextHopGroup grp;
    grp.name = "g" + std::to_string(g);
    for (uint32_t k = 0; k <= g; ++k) grp.members.push_back(nhs[(g + k) % nhs.size()]);
    fib.add_group(grp);
  }
  const Fib::GroupWords* words = fib.group_words();
  for (uint32_t g = 0; g < fib.num_groups(); ++g) {
    const NextHopGroup& grp = fib.group(g);
    ASSERT_EQ(words[g].mask, grp.mask) << "group " << g;
    for (uint32_t s = 0; s <= grp.mask; ++s) {
      const NextHop& nh = fib.nexthop(grp.table[s]);
      const uint64_t w = words[g].words[s];
      EXPECT_EQ(static_cast<uint16_t>(w), nh.port) << "group " << g << " slot " << s;
      EXPECT_EQ(std::memcmp(reinterpret_cast<const uint8_t*>(&w) + 2, nh.mac.addr_bytes, 6), 0) << "group " << g << " slot " << s;
    }
  }
}

TEST(RoutingPolicyRegistry, EcmpHashIsHashTableOnly) {
  // The line-rate configuration's policy: without the claim the fast path takes two passes.
  const int id = RoutingPolicyRegistry::find("ecmp_hash");
  ASSERT_GE(id, 0);
  EXPECT_TRUE(RoutingPolicyRegistry::all()[static_cast<std::size_t>(id)].make(1)->hash_table_only());
}

TEST_P(RoutingPolicyContract, WorksThroughTheStage) {
  // The same policy behind the NexthopGroup stage: every packet forwarded to a group port.
  TestWorld w{8};
  StageHarness<NexthopGroup> h{{}, &w};
  std::vector<std::pair<uint16_t, std::string>> members;
  for (uint16_t p = 1; p <= 5; ++p) members.push_back({p, member_mac(p)});
  const uint32_t g = w.route_group("10.0.2.0/24", members, GetParam());
  std::vector<PacketSpec> specs;
  for (int i = 0; i < 500; ++i) specs.push_back(flow(static_cast<uint16_t>(0xC000 + i)));
  auto out = h.run_mbufs(for_group(specs, g));
  EXPECT_EQ(out.dropped(), 0u);
  ASSERT_EQ(out[NexthopGroup::Rewrite].size(), 500u);
  for (auto* m : out[NexthopGroup::Rewrite]) {
    EXPECT_GE(meta(m).out_port, 1);
    EXPECT_LE(meta(m).out_port, 5);
    EXPECT_EQ(w.fib->nexthop(meta(m).nexthop).port, meta(m).out_port);
  }
}

INSTANTIATE_TEST_SUITE_P(AllRegistered, RoutingPolicyContract, ::testing::ValuesIn(policy_names()),
                         [](const ::testing::TestParamInfo<std::string>& p) {
                           std::string s = p.param;
                           for (char& c : s)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return s;
                         });

}  // namespace
}  // namespace rs::test
