// What each adaptive routing policy is for, one instance at a time over a hand-filled load view:
// a flowlet keeps its member through changes of load until the flow pauses, then a new flowlet
// follows the load (flowlet_quality) or chance (flowlet_random); a lost member moves its
// flowlets at once; the per-packet adaptive policies avoid the congested member; and no policy,
// ECMP included, ever answers a member whose link is down. The contract every policy keeps
// (burst splits, determinism) is routing_policy_contract_test's.
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <array>
#include <map>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "dataplane/routing/routing_policy.h"
#include "tests/support/seeded_rng.h"

namespace rs::test {
namespace {

constexpr uint16_t kMembers = 8;  // on ports 1..8
constexpr uint64_t kUs = 1000;

// One group of eight members, a load view, and a policy instance made as a worker makes it.
class PolicyRig {
 public:
  explicit PolicyRig(const std::string& name, const std::vector<std::pair<std::string, double>>& params = {},
                     uint64_t seed = 42) {
    for (uint16_t m = 0; m < kMembers; ++m) {
      group_.nexthop.push_back(m);
      group_.port.push_back(static_cast<uint16_t>(m + 1));
    }
    for (uint16_t s = 0; s < 64; ++s) group_.slot.push_back(s % kMembers);
    group_.mask = 63;
    const int id = RoutingPolicyRegistry::find(name);
    if (id < 0) throw std::invalid_argument("no policy " + name);
    const RoutingPolicyEntry& e = RoutingPolicyRegistry::at(static_cast<std::size_t>(id));
    ParamValues v = default_params(e.params);
    for (auto& [k, x] : params) {
      const int i = param_index(e.params, k);
      if (i < 0) throw std::invalid_argument("no parameter " + k);
      v.v[static_cast<std::size_t>(i)] = x;
    }
    policy = e.make(PolicyInit{group_, v, seed, 0});
    counter_names_ = e.counters;
  }

  // The members whose port is up, as nexthop_select computes them.
  uint64_t up() const {
    uint64_t u = 0;
    for (uint16_t m = 0; m < kMembers; ++m) u |= uint64_t{load->link_up(group_.port[m])} << m;
    return u;
  }
  // One select() call (at most kBurst packets) at time `now`.
  std::vector<uint16_t> select(std::vector<PacketMeta>& pkts, uint64_t now) {
    std::vector<uint16_t> out(pkts.size());
    for (std::size_t at = 0; at < pkts.size(); at += kBurst) {
      const uint16_t n = static_cast<uint16_t>(std::min<std::size_t>(kBurst, pkts.size() - at));
      PacketMeta* p[kBurst];
      for (uint16_t i = 0; i < n; ++i) p[i] = &pkts[at + i];
      policy->select(p, n, SelectEnv{*load, now, up()}, &out[at]);
    }
    return out;
  }
  void queue(uint16_t member, unsigned q, uint64_t bytes) { load->row(port(member)).queue_bytes[q].store(bytes); }
  void quality(uint16_t member, uint8_t band) { load->row(port(member)).quality.store(band); }
  void link(uint16_t member, bool up) { load->set_link(port(member), up); }
  uint16_t port(uint16_t member) const { return group_.port[member]; }
  uint64_t counter(std::string_view name) const {
    for (std::size_t i = 0; i < counter_names_.size(); ++i)
      if (counter_names_[i] == name) return policy->counters[i].get();
    ADD_FAILURE() << "no counter " << name;
    return 0;
  }

  std::unique_ptr<LoadView> load = std::make_unique<LoadView>();
  std::unique_ptr<RoutingPolicy> policy;

 private:
  PolicyGroup group_;
  std::span<const std::string_view> counter_names_;
};

// `n` packets of distinct flows in egress queue `q`: seeded hashes whose low 16 bits differ
// for flows `first` .. `first + n - 1` (an odd multiple of the index), so they take distinct
// slots of any flowlet table up to 65536 and no test depends on a chance collision.
std::vector<PacketMeta> flows(int n, uint64_t seed, uint8_t q = 3, uint32_t first = 0) {
  Rng rng(seed);
  std::vector<PacketMeta> v(static_cast<std::size_t>(n));
  for (uint32_t i = 0; i < v.size(); ++i) {
    PacketMeta& p = v[i];
    p = PacketMeta{};
    p.flow_hash = (static_cast<uint32_t>(rng.next()) & 0xFFFF0000u) | (((first + i) * 0x9E37u) & 0xFFFFu);
    p.tc = p.queue = q;
    p.flags = meta_flag::kUdp | meta_flag::kRoce;
  }
  return v;
}

std::map<uint16_t, int> histogram(const std::vector<uint16_t>& v) {
  std::map<uint16_t, int> h;
  for (uint16_t m : v) ++h[m];
  return h;
}

// --- Flowlets -------------------------------------------------------------------------------

class Flowlet : public ::testing::TestWithParam<std::string> {};
INSTANTIATE_TEST_SUITE_P(Both, Flowlet, ::testing::Values("flowlet_random", "flowlet_quality"));

// Within the idle gap a flow's packets stay on one path even when the best member changes:
// moving them is what reorders a RoCE flow. After a longer gap, flowlet_quality follows the
// bands and flowlet_random draws again (so some flows move).
TEST_P(Flowlet, KeepsItsMemberWithinTheGapAndMayMoveAfterIt) {
  PolicyRig r(GetParam(), {{"idle_time_us", 100}, {"flow_table_size", 65536}});
  auto pkts = flows(400, 7);
  const uint64_t t0 = 1'000'000;
  const auto first = r.select(pkts, t0);
  EXPECT_EQ(r.counter("flowlets"), 400u);
  EXPECT_GT(histogram(first).size(), 4u) << "equal bands: new flowlets spread";

  // Member 6 becomes the only one of the best band, every other member the worst.
  for (uint16_t m = 0; m < kMembers; ++m) r.quality(m, m == 6 ? 7 : 0);
  EXPECT_EQ(r.select(pkts, t0 + 60 * kUs), first);
  EXPECT_EQ(r.select(pkts, t0 + 160 * kUs), first) << "a gap of exactly idle_time keeps the flowlet";
  EXPECT_EQ(r.counter("flowlets"), 400u);

  const auto after = r.select(pkts, t0 + 261 * kUs);
  EXPECT_EQ(r.counter("flowlets"), 800u);
  int moved = 0;
  for (std::size_t i = 0; i < pkts.size(); ++i) moved += after[i] != first[i];
  if (GetParam() == "flowlet_quality") {
    EXPECT_EQ(histogram(after), (std::map<uint16_t, int>{{6, 400}})) << "new flowlets take the best band";
  } else {
    // A fresh draw among 8 keeps a flow's member 1 time in 8: expect ~350 of 400 to move.
    EXPECT_GT(moved, 300);
    EXPECT_LT(moved, 400);
  }
}

// A flowlet whose member goes down moves at once, inside its gap, and is counted; the others
// stay where they are.
TEST_P(Flowlet, MovesAtOnceWhenItsMemberGoesDown) {
  PolicyRig r(GetParam(), {{"idle_time_us", 100}});
  auto pkts = flows(200, 11);
  const auto first = r.select(pkts, 1'000'000);
  r.link(first[0], false);
  const auto next = r.select(pkts, 1'000'000 + 10 * kUs);
  int on_dead = 0;
  for (auto m : first) on_dead += m == first[0];
  for (std::size_t i = 0; i < pkts.size(); ++i) {
    if (first[i] == first[0]) {
      EXPECT_NE(next[i], first[0]);
    } else {
      EXPECT_EQ(next[i], first[i]) << "flow " << i << " lost its flowlet for another member's loss";
    }
  }
  EXPECT_EQ(r.counter("steered_away"), static_cast<uint64_t>(on_dead));
}

// Two flows that share a slot (same low bits, different hashes) are counted as a collision and
// share the slot's member instead of evicting each other.
TEST_P(Flowlet, CountsFlowsThatShareASlot) {
  PolicyRig r(GetParam(), {{"flow_table_size", 64}});
  std::vector<PacketMeta> pkts = flows(2, 3);
  pkts[1].flow_hash = pkts[0].flow_hash + 64;
  const auto got = r.select(pkts, 1'000'000);
  EXPECT_EQ(got[0], got[1]);
  EXPECT_EQ(r.counter("collisions"), 1u);
  EXPECT_EQ(r.counter("flowlets"), 1u);
}

// --- Adaptive choices avoid congestion ------------------------------------------------------

// Member 2's queue 3 is deep, member 5's the shortest, the rest between: packets of queue 3
// never go to member 2 and least_queue sends all of them to member 5 (drill most of them: it
// samples two members and remembers the best). Packets of queue 1, where every member is
// equally empty, still use member 2: the load read is the packet's own queue's.
class ShortestQueue : public ::testing::TestWithParam<std::string> {};
INSTANTIATE_TEST_SUITE_P(PerPacket, ShortestQueue, ::testing::Values("drill", "least_queue"));

TEST_P(ShortestQueue, AvoidsTheCongestedMember) {
  PolicyRig r(GetParam());
  for (uint16_t m = 0; m < kMembers; ++m) r.queue(m, 3, m == 2 ? 1'000'000 : m == 5 ? 200 : 20'000 + 1000 * m);
  auto q3 = flows(2000, 5, 3);
  const auto h = histogram(r.select(q3, 1'000'000));
  EXPECT_EQ(h.count(2), 0u);
  if (GetParam() == "least_queue") {
    EXPECT_EQ(h.at(5), 2000);
  } else {
    EXPECT_GT(h.at(5), 1500);
  }
  auto q1 = flows(2000, 6, 1);
  EXPECT_GT(histogram(r.select(q1, 1'000'000)).count(2), 0u);
}

// least_queue against the scan it is defined by: from the flow's ECMP member (the group's
// slot at its hash) through the members in order, wrapping, the first live member whose queue
// is strictly shorter than every one met before. Few distinct depths, so ties are common;
// random link states; packets of two queues in one call.
TEST(ShortestQueueLeastQueue, AnswersAsTheScanFromTheFlowsMember) {
  PolicyRig r("least_queue");
  Rng rng(0x5CA7);
  int moved = 0;
  for (int round = 0; round < 200; ++round) {
    for (uint16_t k = 0; k < kMembers; ++k) {
      r.link(k, rng.between(0, 5) != 0);
      for (unsigned q : {1u, 3u}) r.queue(k, q, 1500 * rng.between(0, 2));
    }
    if (r.up() == 0) r.link(0, true);
    auto pkts = flows(32, 100 + static_cast<uint64_t>(round), 3);
    for (std::size_t i = 0; i < pkts.size(); i += 3) pkts[i].queue = 1;
    const auto got = r.select(pkts, 1'000'000);
    for (std::size_t i = 0; i < pkts.size(); ++i) {
      const uint16_t first = static_cast<uint16_t>((pkts[i].flow_hash & 63) % kMembers);  // the rig's slots
      uint16_t want = first;
      uint64_t least = UINT64_MAX;
      for (uint16_t j = 0; j < kMembers; ++j) {
        const uint16_t m = static_cast<uint16_t>((first + j) % kMembers);
        if (!r.load->link_up(r.port(m))) continue;
        const uint64_t b = r.load->queue_bytes(r.port(m), pkts[i].queue);
        if (b < least) want = m, least = b;
      }
      ASSERT_EQ(got[i], want) << "round " << round << " packet " << i;
      moved += want != first;
    }
  }
  EXPECT_GT(moved, 1000) << "the loads moved flows off their ECMP member";
}

// DRILL's other settings take other code (sorted candidates when more than one member is
// remembered; a third sample drawn alone): with d >= 2 the deepest queue is never the least
// loaded of the distinct samples, and with a memory the shortest queue, once found, is kept.
TEST(ShortestQueueDrill, EverySettingAvoidsTheCongestedMember) {
  for (int d : {2, 3})
    for (int m : {0, 1, 2, 4}) {
      SCOPED_TRACE(fmt::format("d={} m={}", d, m));
      PolicyRig r("drill", {{"d", d}, {"m", m}});
      for (uint16_t k = 0; k < kMembers; ++k) r.queue(k, 3, k == 2 ? 1'000'000 : k == 5 ? 200 : 20'000 + 1000 * k);
      auto q3 = flows(2000, 5, 3);
      const auto h = histogram(r.select(q3, 1'000'000));
      EXPECT_EQ(h.count(2), 0u);
      if (m > 0) {
        EXPECT_GT(h.at(5), 1900);
      } else {
        EXPECT_LT(h.at(5), 1500) << "without a memory, member 5 only when sampled";
      }
      EXPECT_EQ(r.counter("from_memory") > 0, m > 0);
    }
}

// The quality policies read bands: everything new goes to the one member of the best band, and
// to both when two share it.
class BestBand : public ::testing::TestWithParam<std::string> {};
INSTANTIATE_TEST_SUITE_P(Quality, BestBand, ::testing::Values("per_packet_quality", "flowlet_quality"));

TEST_P(BestBand, SendsToTheBetterBand) {
  PolicyRig r(GetParam());
  for (uint16_t m = 0; m < kMembers; ++m) r.quality(m, m == 2 ? 0 : m == 5 ? 7 : 4);
  auto a = flows(1000, 8);
  EXPECT_EQ(histogram(r.select(a, 1'000'000)), (std::map<uint16_t, int>{{5, 1000}}));
  r.quality(0, 7);
  auto b = flows(1000, 9, 3, 1000);  // other flows (other slots): new flowlets
  const auto h = histogram(r.select(b, 1'000'000));
  ASSERT_EQ(h.size(), 2u);
  EXPECT_GT(h.at(0), 400);
  EXPECT_GT(h.at(5), 400);
}

// --- Down members ---------------------------------------------------------------------------

// Every registered policy, with its defaults, over random link states (some flows pinned
// before a link falls), random queues and bands, and times that cross flowlet gaps: no answer
// is ever a member whose link is down.
class EveryPolicy : public ::testing::TestWithParam<std::string> {};
std::vector<std::string> registered() {
  std::vector<std::string> v;
  for (auto& e : RoutingPolicyRegistry::all()) v.emplace_back(e.name);
  return v;
}
INSTANTIATE_TEST_SUITE_P(Registered, EveryPolicy, ::testing::ValuesIn(registered()),
                         [](const auto& info) { return std::string(info.param); });

TEST_P(EveryPolicy, NeverAnswersADownMember) {
  PolicyRig r(GetParam());
  Rng rng(0xD0D0);
  auto pkts = flows(64, 13);
  uint64_t now = 1'000'000;
  int bad = 0, calls = 0;
  for (int round = 0; round < 400; ++round) {
    for (uint16_t m = 0; m < kMembers; ++m) {
      r.link(m, rng.between(0, 3) != 0);
      r.queue(m, 3, rng.between(0, 200'000));
      r.quality(m, static_cast<uint8_t>(rng.between(0, 7)));
    }
    if (r.up() == 0) r.link(static_cast<uint16_t>(rng.between(0, kMembers - 1)), true);  // the caller never passes 0
    now += rng.between(0, 400) * kUs;
    const uint64_t up = r.up();
    const auto got = r.select(pkts, now);
    for (auto m : got) bad += m >= kMembers || !((up >> m) & 1);
    ++calls;
  }
  EXPECT_EQ(bad, 0) << GetParam() << " answered members that were down";
  EXPECT_EQ(calls, 400);
}

}  // namespace
}  // namespace rs::test
