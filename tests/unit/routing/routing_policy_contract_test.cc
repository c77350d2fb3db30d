// The routing policy contract, run over every registered policy (a new policy is tested the
// moment it registers): each answer is a member of the packet's group; the answers are
// deterministic for a seed and the same however a burst is split (state included); a policy that
// declares table_by_flow_hash answers exactly table[flow_hash & mask], so the route stages'
// inline choice is the policy's; the route stages and nexthop_select together choose what the
// policy chooses, in either form of the pipeline. And what nexthop_select does with answers no
// policy should give: out of range is a BadNextHop drop.
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "dataplane/routing/routing_policy.h"
#include "dataplane/stages/ip_route.h"
#include "dataplane/stages/l3_input.h"
#include "dataplane/stages/nexthop_select.h"
#include "tests/support/seeded_rng.h"
#include "tests/support/stage_harness.h"

namespace rs::test {
namespace {

// A stateful policy registered in this test binary only, so that the suite is seen to hold a
// policy that is more than the table (the adaptive policies of the next issues): a flowlet
// keeps its member until the flow pauses for 50 us; a new flowlet takes the least loaded member
// (ties by the flow hash).
class ContractFlowlet final : public RoutingPolicy {
 public:
  explicit ContractFlowlet(uint32_t seed) : seed_(seed) {}
  void select_burst(PacketMeta* const* m, uint16_t n, const Fib& fib, const PortLoad& load, uint64_t now_ns,
                    uint32_t* nh) override {
    for (uint16_t i = 0; i < n; ++i) {
      const NextHopGroup& g = fib.group(m[i]->group);
      Slot& s = slots_[(m[i]->flow_hash ^ seed_) & 255];
      const bool same = s.used && s.group == m[i]->group && now_ns - s.last_ns < 50'000;
      if (!same) {
        uint64_t best = UINT64_MAX;
        const std::size_t k = g.members.size();
        for (std::size_t j = 0; j < k; ++j) {
          const uint32_t cand = g.members[(m[i]->flow_hash + j) % k];
          const uint64_t q = load.queued_bytes[fib.nexthop(cand).port].get();
          if (q < best) best = q, s.nh = cand;
        }
        s.group = m[i]->group;
        s.used = true;
      }
      s.last_ns = now_ns;
      nh[i] = s.nh;
    }
  }

 private:
  struct Slot {
    bool used = false;
    uint16_t group = 0;
    uint32_t nh = 0;
    uint64_t last_ns = 0;
  };
  uint32_t seed_;
  std::array<Slot, 256> slots_{};
};
REGISTER_ROUTING_POLICY(ContractFlowlet, "contract_flowlet");

std::string member_mac(int i) { return fmt::format("02:00:00:00:cc:{:02x}", i); }

// Pseudo-random packets, loads and times as a worker would see them, in "epochs" of one time
// and one load (a burst's worth: a worker passes one now and one load view per call).
struct Input {
  PacketMeta m;
};
struct Epoch {
  uint64_t now_ns;
  uint16_t loaded_port;
  uint64_t loaded_bytes;
  std::vector<Input> pkts;  // at most kBurst
};

std::vector<Epoch> epochs(uint64_t seed, int packets, const std::vector<uint32_t>& groups) {
  Rng rng(seed);
  std::vector<Epoch> v;
  std::vector<uint32_t> flows;
  uint64_t now = 1'000'000;
  uint32_t psn = 0;
  for (int left = packets; left > 0;) {
    Epoch e;
    now += rng.between(0, 40'000);  // gaps up to 40 us, so flowlet timeouts are crossed sometimes
    e.now_ns = now;
    e.loaded_port = static_cast<uint16_t>(rng.between(1, 7));
    e.loaded_bytes = rng.between(0, 1u << 20);
    const int n = static_cast<int>(std::min<uint64_t>(rng.between(1, kBurst), static_cast<uint64_t>(left)));
    for (int i = 0; i < n; ++i) {
      Input in{};
      // Repeat some flows so flow-state policies see both new and known flows.
      const bool known = !flows.empty() && rng.between(0, 2) == 0;
      in.m.flow_hash = known ? flows[rng.between(0, flows.size() - 1)] : static_cast<uint32_t>(rng.next());
      if (!known) flows.push_back(in.m.flow_hash);
      in.m.group = static_cast<uint16_t>(groups[(in.m.flow_hash >> 7) % groups.size()]);  // a flow keeps its group
      in.m.in_port = static_cast<uint16_t>(rng.between(0, 7));
      in.m.l3 = L3Type::Ipv4;
      in.m.ip_proto = 17;
      in.m.dscp = static_cast<uint8_t>(rng.between(0, 63));
      in.m.tc = in.m.queue = static_cast<uint8_t>(rng.between(0, 7));
      in.m.flags = meta_flag::kUdp | meta_flag::kRoce;
      in.m.dest_qp = static_cast<uint32_t>(rng.next() & 0xFFFFFF);
      in.m.psn = psn++;
      in.m.out_port = kInvalidPort;
      e.pkts.push_back(in);
    }
    left -= n;
    v.push_back(std::move(e));
  }
  return v;
}

std::vector<std::string> policy_names() {
  std::vector<std::string> v;
  for (auto& e : RoutingPolicyRegistry::all()) v.emplace_back(e.name);
  return v;
}

class RoutingPolicyContract : public ::testing::TestWithParam<std::string> {
 protected:
  // Two groups: 5 members (not a power of two) over ports 1..5 and 3 over ports 5..7, of an
  // 8-port world, tables of 64.
  void SetUp() override {
    id_ = RoutingPolicyRegistry::find(GetParam());
    ASSERT_GE(id_, 0);
    entry_ = RoutingPolicyRegistry::all()[static_cast<std::size_t>(id_)];
    for (auto [first, last] : {std::pair{1, 5}, std::pair{5, 7}}) {
      NextHopGroup g;
      for (int p = first; p <= last; ++p) g.members.push_back(fib_.add_nexthop({static_cast<uint16_t>(p), mac(member_mac(p))}));
      g.name = fmt::format("contract{}", first);
      g.policy = static_cast<uint16_t>(id_);
      g.inline_member = entry_.table_by_flow_hash;
      groups_.push_back(fib_.add_group(g));
    }
  }

  // Answers of one policy instance over the epochs; each epoch's packets split into calls of the
  // sizes `split` gives (0: one call per epoch).
  std::vector<uint32_t> run(uint32_t seed, const std::vector<Epoch>& in, Rng* split = nullptr, bool one_by_one = false) {
    auto policy = entry_.make(seed);
    EXPECT_NE(policy, nullptr);
    if (!policy) return {};
    PortLoad load;
    std::vector<uint32_t> out;
    for (const auto& e : in) {
      load.queued_bytes[e.loaded_port].set(e.loaded_bytes);
      std::vector<PacketMeta> metas;
      for (const auto& x : e.pkts) metas.push_back(x.m);
      for (std::size_t at = 0; at < metas.size();) {
        const std::size_t left = metas.size() - at;
        const std::size_t n = one_by_one ? 1 : split ? std::min<std::size_t>(left, split->between(1, left)) : left;
        PacketMeta* ptrs[kBurst];
        uint32_t got[kBurst];
        for (std::size_t k = 0; k < n; ++k) ptrs[k] = &metas[at + k];
        policy->select_burst(ptrs, static_cast<uint16_t>(n), fib_, load, e.now_ns, got);
        out.insert(out.end(), got, got + n);
        at += n;
      }
    }
    return out;
  }

  static constexpr uint64_t kSeed = 0x5EED0123;
  int id_ = -1;
  RoutingPolicyEntry entry_{};
  Fib fib_;
  std::vector<uint32_t> groups_;
};

TEST_P(RoutingPolicyContract, AnswersAMemberOfThePacketsGroup) {
  SCOPED_TRACE(fmt::format("inputs seed {:#x}", kSeed));
  const auto in = epochs(kSeed, 20'000, groups_);
  const auto out = run(7, in);
  std::size_t i = 0;
  int bad = 0;
  for (const auto& e : in)
    for (const auto& x : e.pkts) {
      const auto& members = fib_.group(x.m.group).members;
      bad += std::find(members.begin(), members.end(), out.at(i++)) == members.end();
    }
  EXPECT_EQ(i, out.size());
  EXPECT_EQ(bad, 0) << GetParam() << " returned next hops outside the packet's group";
}

TEST_P(RoutingPolicyContract, DeterministicForSameInputsAndSeed) {
  // Reproducible runs are what make a scenario test (and a student's bug report) possible.
  const auto in = epochs(kSeed, 5'000, groups_);
  EXPECT_EQ(run(7, in), run(7, in)) << GetParam();
  EXPECT_EQ(run(0, in), run(0, in)) << GetParam();
}

TEST_P(RoutingPolicyContract, UsesMoreThanOneMember) {
  // A policy that pins everything to one member is not load balancing.
  const auto out = run(7, epochs(kSeed, 5'000, groups_));
  std::set<uint32_t> used(out.begin(), out.end());
  EXPECT_GE(used.size(), 4u) << GetParam();
}

TEST_P(RoutingPolicyContract, SameAnswersForAnyBurstSplit) {
  // nexthop_select hands a policy the packets of its groups in a burst, in arrival order: how
  // many share a call (one policy or several in the burst) must not change any answer, flow
  // state included.
  const auto in = epochs(kSeed, 8'000, groups_);
  const auto whole = run(7, in);
  EXPECT_EQ(run(7, in, nullptr, true), whole) << GetParam() << ": one packet per call";
  for (uint64_t s : {1u, 2u, 3u}) {
    Rng split(s);
    EXPECT_EQ(run(7, in, &split), whole) << GetParam() << ": random split, seed " << s;
  }
}

TEST_P(RoutingPolicyContract, TableByFlowHashMeansTheTableSlotOfTheFlowHash) {
  // The route stages skip select_burst for a policy that declares it: the claim must hold for
  // every packet, or the two forms of the route step would choose differently.
  if (!entry_.table_by_flow_hash) GTEST_SKIP() << GetParam() << " does not declare it";
  const auto in = epochs(kSeed, 20'000, groups_);
  const auto out = run(7, in);
  std::size_t i = 0;
  int differ = 0;
  for (const auto& e : in)
    for (const auto& x : e.pkts) {
      const NextHopGroup& g = fib_.group(x.m.group);
      differ += out.at(i++) != g.table[x.m.flow_hash & g.mask];
    }
  EXPECT_EQ(differ, 0) << GetParam();
}

// The (nexthop, out_port) each packet gets from route stage R (then nexthop_select for the
// packets R sends on `select`), in input order.
template <typename R>
std::vector<std::pair<uint32_t, uint16_t>> route_and_select(TestWorld& w, const std::vector<PacketSpec>& specs) {
  StageHarness<R> route{{}, &w};
  StageHarness<NexthopSelect> select{{}, &w};
  L3Input parse{StageEnv{}};
  std::vector<std::pair<uint32_t, uint16_t>> r;
  for (std::size_t at = 0; at < specs.size(); at += kBurst) {
    std::vector<rte_mbuf*> v;
    for (std::size_t i = at; i < std::min(specs.size(), at + kBurst); ++i) {
      v.push_back(specs[i].mbuf(test_pool()));
      EXPECT_EQ(parse.process_one(v.back()), L3Input::Ipv4);
    }
    auto routed = route.run_mbufs(v);
    auto chosen = select.run_mbufs(routed.edge[R::Select]);
    routed.edge.erase(R::Select);
    EXPECT_EQ(routed.dropped() + chosen.dropped(), 0u);
    for (auto* m : v) r.emplace_back(meta(m).nexthop, meta(m).out_port);
  }
  return r;
}

TEST_P(RoutingPolicyContract, BothFormsOfTheRouteStepChooseWhatThePolicyChooses) {
  // ipv4_route (member inline when the policy declares the table) against ipv4_route_general
  // + nexthop_select (the policy always asked), one world each, same packets in the same bursts.
  auto world = [&](TestWorld& w) {
    std::vector<std::pair<uint16_t, std::string>> members;
    for (uint16_t p = 1; p <= 5; ++p) members.push_back({p, member_mac(p)});
    w.route_group("10.0.2.0/24", members, GetParam());
  };
  TestWorld a{8}, b{8};
  world(a);
  world(b);
  EXPECT_EQ(a.fib->group(0).inline_member, entry_.table_by_flow_hash);
  std::vector<PacketSpec> specs;
  for (int i = 0; i < 500; ++i)
    specs.push_back(Eth{} / Ipv4{.dst = fmt::format("10.0.2.{}", 1 + i % 200)} / Udp{.sport = static_cast<uint16_t>(0xC000 + i % 97)} /
                    Bth{.psn = static_cast<uint32_t>(i)});
  const auto fast = route_and_select<Ipv4Route>(a, specs);
  const auto general = route_and_select<Ipv4RouteGeneral>(b, specs);
  ASSERT_EQ(fast.size(), specs.size());
  EXPECT_EQ(fast, general) << GetParam();
  std::set<uint16_t> ports;
  for (auto [nh, port] : fast) {
    EXPECT_EQ(a.fib->nexthop(nh).port, port);
    EXPECT_GE(port, 1);
    EXPECT_LE(port, 5);
    ports.insert(port);
  }
  EXPECT_GE(ports.size(), 2u);
}

INSTANTIATE_TEST_SUITE_P(AllRegistered, RoutingPolicyContract, ::testing::ValuesIn(policy_names()),
                         [](const ::testing::TestParamInfo<std::string>& p) {
                           std::string s = p.param;
                           for (char& c : s)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return s;
                         });

// --- The registry -------------------------------------------------------------------------------

TEST(RoutingPolicyRegistry, EcmpHashIsRegisteredAndNamesAreUnique) {
  EXPECT_GE(RoutingPolicyRegistry::find("ecmp_hash"), 0);
  EXPECT_EQ(RoutingPolicyRegistry::find("no_such_policy"), -1);
  // Names are unique: the config chooses a policy by name.
  std::set<std::string_view> names;
  for (auto& e : RoutingPolicyRegistry::all()) EXPECT_TRUE(names.insert(e.name).second) << e.name;
}

TEST(RoutingPolicyRegistry, EcmpHashDeclaresTheTable) {
  // The line-rate configuration's policy: without the claim every packet would take the select
  // edge and a second stage.
  const int id = RoutingPolicyRegistry::find("ecmp_hash");
  ASSERT_GE(id, 0);
  EXPECT_TRUE(RoutingPolicyRegistry::all()[static_cast<std::size_t>(id)].table_by_flow_hash);
  EXPECT_FALSE(RoutingPolicyRegistry::all()[static_cast<std::size_t>(RoutingPolicyRegistry::find("contract_flowlet"))].table_by_flow_hash);
}

// --- What nexthop_select does with answers no policy should give ---------------------------------

// Answers a next-hop index the FIB does not have, or one on a port the switch does not have.
class RoguePolicy final : public RoutingPolicy {
 public:
  explicit RoguePolicy(uint32_t answer) : answer_(answer) {}
  void select_burst(PacketMeta* const*, uint16_t n, const Fib&, const PortLoad&, uint64_t, uint32_t* nh) override {
    for (uint16_t i = 0; i < n; ++i) nh[i] = answer_;
  }

 private:
  uint32_t answer_;
};

TEST(NexthopSelectWithARoguePolicy, OutOfRangeAnswersAreBadNextHop) {
  TestWorld w{4};
  const uint32_t on_port_9 = w.fib->add_nexthop({9, mac(member_mac(9))});  // the world has 4 ports
  const uint32_t fine = w.fib->add_nexthop({1, mac(member_mac(1))});
  for (uint32_t answer : {1'000'000u, on_port_9}) {
    SCOPED_TRACE(answer);
    RoguePolicy rogue(answer);
    std::vector<RoutingPolicy*> ptrs = w.policy_ptrs;
    ptrs.push_back(&rogue);
    w.ctx.policies = ptrs.data();
    NextHopGroup grp;
    grp.name = fmt::format("rogue{}", answer);
    grp.policy = static_cast<uint16_t>(ptrs.size() - 1);
    grp.members = {fine};
    const uint32_t g = w.fib->add_group(grp);
    StageHarness<NexthopSelect> h{{}, &w};
    std::vector<rte_mbuf*> v;
    for (int i = 0; i < 3; ++i) {
      v.push_back((Eth{} / Ipv4{} / Udp{.sport = static_cast<uint16_t>(i)} / Bth{}).mbuf(test_pool()));
      meta(v.back()).group = static_cast<uint16_t>(g);
      meta(v.back()).out_port = kInvalidPort;  // as the parse leaves it
    }
    auto out = h.run_mbufs(v);
    ASSERT_EQ(out.dropped(), 3u);
    for (auto* m : out[kNextDrop]) {
      EXPECT_EQ(meta(m).drop_reason, DropReason::BadNextHop);
      EXPECT_EQ(meta(m).out_port, kInvalidPort) << "never written with a port the switch lacks";
    }
    EXPECT_EQ(h.counter("bad_nexthop"), 3u);
    EXPECT_EQ(h.counter("selected"), 0u);
    w.ctx.policies = w.policy_ptrs.data();
  }
}

TEST(FibGroupTable, RejectsATableNamingANextHopItDoesNotHave) {
  // The route stages read a table slot as a next-hop index when they choose inline.
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

}  // namespace
}  // namespace rs::test
