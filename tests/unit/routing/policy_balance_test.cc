// Balance: how evenly each policy spreads traffic over an eight-member group when nothing else
// differs between the members. Per-flow policies (ecmp, and the flowlet policies while every
// band is equal) spread RoCE flows, hashed as the parser hashes them, within ±25% of the fair
// share per member with 2000 flows per member. Per-packet policies spread packets within ±5%:
// with a load view that stays equal, and with a queue per member that each choice fills and a
// fixed rate drains, as a switch's egress would. Groups are made as a config makes them
// (TestWorld::route_group with a PolicySpec) and the worker's instance is called directly.
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "dataplane/routing/policy_set.h"
#include "dataplane/routing/routing_policy.h"
#include "dataplane/stages/parse.h"
#include "tests/support/seeded_rng.h"
#include "tests/support/stage_harness.h"

namespace rs::test {
namespace {

constexpr uint16_t kMembers = 8;  // on ports 1..8
constexpr uint16_t kCallSize = 32;
constexpr uint8_t kQueue = 3;

struct Group {
  TestWorld world{kMembers + 1};
  RoutingPolicy* policy = nullptr;
  explicit Group(const PolicySpec& spec) {
    std::vector<std::pair<uint16_t, std::string>> members;
    for (uint16_t p = 1; p <= kMembers; ++p) members.emplace_back(p, fmt::format("02:00:00:00:bb:{:02x}", p));
    const uint32_t gid = world.route_group("10.8.0.0/16", members, spec, 256);
    policy = world.fib->policies(0).at(gid, kQueue);
  }
  uint64_t up() const { return (uint64_t{1} << kMembers) - 1; }  // every link stays up here
};

// Each member's count within `tolerance` (a fraction) of the fair share; the worst deviation is
// recorded in the XML output.
void expect_fair(const std::array<int, kMembers>& count, double tolerance, const std::string& what) {
  int total = 0;
  for (int c : count) total += c;
  const double fair = static_cast<double>(total) / kMembers;
  double worst = 0;
  for (int c : count) worst = std::max(worst, std::abs(c - fair) / fair);
  ::testing::Test::RecordProperty(what + "_worst_deviation_pct", static_cast<int>(std::lround(worst * 100)));
  for (uint16_t m = 0; m < kMembers; ++m)
    EXPECT_NEAR(count[m], fair, tolerance * fair) << what << ": member " << m << " of " << total;
}

// A RoCE flow's hash as l3_input computes it: addresses, UDP ports (the source port carries
// the QP's entropy, the destination is 4791), protocol.
uint32_t roce_flow_hash(uint32_t src, uint32_t dst, uint16_t sport) {
  uint32_t h = parse::crc32c_u32(src, 0);
  h = parse::crc32c_u32(dst, h);
  h = parse::crc32c_u32(uint32_t{sport} | uint32_t{__builtin_bswap16(4791)} << 16, h);
  return parse::crc32c_u8(17, h);
}

PacketMeta packet(uint32_t flow_hash) {
  PacketMeta p{};
  p.flow_hash = flow_hash;
  p.tc = p.queue = kQueue;
  p.flags = meta_flag::kUdp | meta_flag::kRoce;
  return p;
}

// --- Per flow: one packet of each of 16000 flows (16 host pairs x 1000 QPs) ------------------

class PerFlowBalance : public ::testing::TestWithParam<std::string> {};
INSTANTIATE_TEST_SUITE_P(Policies, PerFlowBalance, ::testing::Values("ecmp", "flowlet_random", "flowlet_quality"));

TEST_P(PerFlowBalance, FlowsWithin25PercentOfFairShare) {
  Group g(PolicySpec{GetParam(), {}});
  ASSERT_NE(g.policy, nullptr);
  std::vector<PacketMeta> pkts;
  for (uint32_t pair = 0; pair < 16; ++pair)
    for (uint16_t qp = 0; qp < 1000; ++qp)
      pkts.push_back(
          packet(roce_flow_hash(0x0A000001 + pair, 0x0A080001 + pair * 7, static_cast<uint16_t>(0xC000 + qp * 13))));
  std::array<int, kMembers> count{};
  for (std::size_t at = 0; at < pkts.size(); at += kCallSize) {
    PacketMeta* p[kCallSize];
    uint16_t got[kCallSize];
    for (uint16_t i = 0; i < kCallSize; ++i) p[i] = &pkts[at + i];
    g.policy->select(p, kCallSize, SelectEnv{g.world.load, 1'000'000, g.up()}, got);
    for (uint16_t m : got) ++count[m];
  }
  expect_fair(count, 0.25, GetParam());
}

// --- Per packet: 160000 packets of distinct flows, calls of 32 -------------------------------

enum class Load { Equal, Draining };
struct PerPacketCase {
  std::string label;
  PolicySpec spec;
  Load load;
};

class PerPacketBalance : public ::testing::TestWithParam<PerPacketCase> {};

std::vector<PerPacketCase> per_packet_cases() {
  std::vector<PerPacketCase> v;
  const std::vector<std::pair<std::string, PolicySpec>> policies = {
      {"spray_round_robin", {"spray", {{"mode", 0}}}},
      {"spray_random", {"spray", {{"mode", 1}}}},
      {"drill", {"drill", {}}},
      {"least_queue", {"least_queue", {}}},
      {"per_packet_quality", {"per_packet_quality", {}}},
  };
  for (auto& [label, spec] : policies) {
    v.push_back({label + "_equal", spec, Load::Equal});
    v.push_back({label + "_draining", spec, Load::Draining});
  }
  return v;
}
INSTANTIATE_TEST_SUITE_P(Policies, PerPacketBalance, ::testing::ValuesIn(per_packet_cases()),
                         [](const auto& info) { return info.param.label; });

// Equal: every queue holds the same bytes, every band is the same, all along. Draining: each
// packet adds 1 KB to its member's queue, and after each call every queue drains its fair
// share of the call's bytes; the load view (bytes and band) is rewritten after each call, as
// the egress owners publish it, so a policy sees the effect of its choices one call late.
TEST_P(PerPacketBalance, PacketsWithin5PercentOfFairShare) {
  const PerPacketCase& c = GetParam();
  Group g(c.spec);
  ASSERT_NE(g.policy, nullptr);
  LoadView& view = g.world.load;
  constexpr uint64_t kPkt = 1024;
  std::array<uint64_t, kMembers> queued{};
  queued.fill(c.load == Load::Equal ? 6000 : 0);
  Rng rng(0xBA1A);
  std::array<int, kMembers> count{};
  uint64_t now = 1'000'000;
  for (int call = 0; call < 5000; ++call) {
    for (uint16_t m = 0; m < kMembers; ++m) {
      view.row(static_cast<uint16_t>(m + 1)).queue_bytes[kQueue].store(queued[m]);
      view.row(static_cast<uint16_t>(m + 1)).quality.store(view.band(queued[m], 0));
    }
    PacketMeta pkts[kCallSize];
    PacketMeta* p[kCallSize];
    uint16_t got[kCallSize];
    for (uint16_t i = 0; i < kCallSize; ++i) {
      pkts[i] = packet(static_cast<uint32_t>(rng.next()));
      p[i] = &pkts[i];
    }
    g.policy->select(p, kCallSize, SelectEnv{view, now, g.up()}, got);
    now += 1000;
    for (uint16_t m : got) {
      ASSERT_LT(m, kMembers);
      ++count[m];
      if (c.load == Load::Draining) queued[m] += kPkt;
    }
    if (c.load == Load::Draining)
      for (auto& q : queued) q -= std::min(q, kCallSize * kPkt / kMembers);
  }
  expect_fair(count, 0.05, c.label);
}

}  // namespace
}  // namespace rs::test
