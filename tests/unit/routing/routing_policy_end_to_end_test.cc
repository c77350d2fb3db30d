// The routing policy contract end to end, over every registered policy at every case of the
// contract suite: through l3_input -> ipv4_route (member inline where the policy is the table)
// or ipv4_route_general (the policy always asked) -> nexthop_select, with the policy for every
// class or for class 3 alone, all links up, then one down (fast failover), then up again, each
// packet gets what the policy instance itself answers for it.
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "dataplane/routing/policy_set.h"
#include "dataplane/routing/routing_policy.h"
#include "dataplane/stages/ip_route.h"
#include "dataplane/stages/l3_input.h"
#include "dataplane/stages/nexthop_select.h"
#include "tests/support/stage_harness.h"
#include "tests/unit/routing/registry_view.h"

namespace rs::test {
namespace {

class RoutingPolicyEndToEnd : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override { params_ = resolve_policy(GetParam().spec, "contract").params; }
  ParamValues params_;
};

std::string member_mac(int i) { return fmt::format("02:00:00:00:cc:{:02x}", i); }

// A group of ports 1..5 for 10.0.3.0/24 with `p` for traffic class 3 and ecmp for the others
// when `per_class`, else `p` for every class.
uint32_t group_of(TestWorld& w, const PolicySpec& p, bool per_class) {
  NextHopGroup g;
  g.name = "contract";
  g.choices = {resolve_policy(per_class ? PolicySpec{} : p, "contract")};
  if (per_class) {
    g.choices.push_back(resolve_policy(p, "contract class 3"));
    g.choice_of_tc[3] = 1;
  }
  for (uint16_t port = 1; port <= 5; ++port) g.members.push_back(w.fib->add_nexthop({port, mac(member_mac(port))}));
  g.table = Fib::build_table(g.members, 64);
  const uint32_t gid = w.fib->add_group(std::move(g));
  RouteSpec r;
  r.addr[0] = 10, r.addr[2] = 3, r.depth = 24, r.group = gid;
  w.fib->add_route(r);
  w.fib->attach_policies(1, 1);
  return gid;
}

std::vector<rte_mbuf*> parsed_burst(const std::vector<PacketSpec>& specs, std::size_t at) {
  L3Input parse{StageEnv{}};
  std::vector<rte_mbuf*> v;
  for (std::size_t i = at; i < std::min(specs.size(), at + kBurst); ++i) {
    v.push_back(specs[i].mbuf(test_pool()));
    EXPECT_EQ(parse.process_one(v.back()), L3Input::Ipv4);
    meta(v.back()).tc = meta(v.back()).queue = static_cast<uint8_t>(i % 3 == 0 ? 3 : i % 8);
  }
  return v;
}

using Choice = std::pair<uint32_t, uint16_t>;  // (nexthop, out_port)

// What route stage R then nexthop_select (for the packets R sends on `select`) give each packet.
// Bursts 32 us apart from t0, so flowlets both continue and expire.
template <typename R>
std::vector<Choice> route_and_select(TestWorld& w, const std::vector<PacketSpec>& specs, uint64_t t0) {
  StageHarness<R> route{{}, &w};
  StageHarness<NexthopSelect> select{{}, &w};
  std::vector<Choice> r;
  for (std::size_t at = 0; at < specs.size(); at += kBurst) {
    w.ctx.now_ns = t0 + at * 500;
    auto v = parsed_burst(specs, at);
    auto routed = route.run_mbufs(v);
    auto chosen = select.run_mbufs(routed.edge[R::Select]);
    routed.edge.erase(R::Select);
    EXPECT_EQ(routed.dropped() + chosen.dropped(), 0u);
    for (auto* m : v) r.emplace_back(meta(m).nexthop, meta(m).out_port);
  }
  return r;
}

// The policy instances' own answers, each given its packets of a burst in arrival order.
std::vector<Choice> policy_answers(TestWorld& w, uint32_t gid, const std::vector<PacketSpec>& specs, uint64_t t0) {
  std::vector<Choice> r;
  for (std::size_t at = 0; at < specs.size(); at += kBurst) {
    w.ctx.now_ns = t0 + at * 500;
    auto v = parsed_burst(specs, at);
    std::vector<Choice> burst(v.size());
    std::set<RoutingPolicy*> done;
    for (auto* first : v) {
      RoutingPolicy* p = w.fib->policies(0).at(gid, meta(first).tc);
      if (!done.insert(p).second) continue;
      std::vector<PacketMeta*> mine;
      std::vector<std::size_t> idx;
      for (std::size_t i = 0; i < v.size(); ++i)
        if (w.fib->policies(0).at(gid, meta(v[i]).tc) == p) mine.push_back(&meta(v[i])), idx.push_back(i);
      std::vector<uint16_t> got(mine.size());
      const uint64_t up = live_members(p->group(), w.load.up_mask());
      p->select(mine.data(), static_cast<uint16_t>(mine.size()), SelectEnv{w.load, w.ctx.now_ns, up}, got.data());
      for (std::size_t k = 0; k < idx.size(); ++k)
        burst[idx[k]] = got[k] < p->group().size() ? Choice{p->group().nexthop[got[k]], p->group().port[got[k]]} : Choice{~0u, kInvalidPort};
    }
    r.insert(r.end(), burst.begin(), burst.end());
    for (auto* m : v) rte_pktmbuf_free(m);
  }
  return r;
}

TEST_P(RoutingPolicyEndToEnd, RouteStagesAndNexthopSelectChooseWhatThePolicyChooses) {
  // ipv4_route (member inline when every class's policy declares the table) and
  // ipv4_route_general (the policy always asked), each then nexthop_select, against the
  // policy instances themselves; all links up, then port 3 down (fast failover), then up.
  for (bool per_class : {false, true}) {
    SCOPED_TRACE(per_class ? "policy for class 3, ecmp for the rest" : "policy for every class");
    TestWorld fast{8}, general{8}, ref{8};
    const uint32_t gid = group_of(fast, GetParam().spec, per_class);
    group_of(general, GetParam().spec, per_class);
    group_of(ref, GetParam().spec, per_class);
    const RoutingPolicyEntry& e = entry(GetParam().policy);
    EXPECT_EQ(fast.fib->group(gid).inline_member, e.table_by_flow_hash && e.table_by_flow_hash(params_));
    for (int phase = 0; phase < 3; ++phase) {
      SCOPED_TRACE(fmt::format("phase {} (port 3 {})", phase, phase == 1 ? "down" : "up"));
      for (TestWorld* w : {&fast, &general, &ref}) w->load.set_link(3, phase != 1);
      std::vector<PacketSpec> specs;
      for (int i = 0; i < 400; ++i)
        specs.push_back(Eth{} / Ipv4{.dst = fmt::format("10.0.3.{}", 1 + (i * 7 + phase) % 200)} /
                        Udp{.sport = static_cast<uint16_t>(0xC000 + i % 97)} / Bth{.psn = static_cast<uint32_t>(i)});
      const uint64_t t0 = 1'000'000 * (phase + 1);
      const auto want = policy_answers(ref, gid, specs, t0);
      const auto a = route_and_select<Ipv4Route>(fast, specs, t0);
      const auto b = route_and_select<Ipv4RouteGeneral>(general, specs, t0);
      ASSERT_EQ(a.size(), specs.size());
      EXPECT_EQ(a, want) << "ipv4_route + nexthop_select";
      EXPECT_EQ(b, want) << "ipv4_route_general + nexthop_select";
      for (auto [nh, port] : a) {
        EXPECT_EQ(fast.fib->nexthop(nh).port, port);
        if (phase == 1) {
          EXPECT_NE(port, 3);
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllRegistered, RoutingPolicyEndToEnd, ::testing::ValuesIn(policy_cases()), case_name);

}  // namespace
}  // namespace rs::test
