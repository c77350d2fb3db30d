// The fabric's routes after a cable event (control/fabric/fabric_routing.h): a spine that loses
// its only cable to a leaf black-holes what the other leaves still send it for that leaf, until
// the routes converge; then nothing is lost, and after the repair the spine carries traffic
// again. A leaf cut off from every spine has its hosts' routes withdrawn everywhere.
#include "control/fabric/fabric_routing.h"

#include <gtest/gtest.h>

#include "tests/unit/fabric/fabric_rig.h"

namespace rs::test {
namespace {

// Leaf ports: h1 0, up1 1 (spine1), up2 2; a spine's down1 0 (leaf1), down2 1.
constexpr uint16_t kUp1 = 1;

// 8 flows of 2 Gb/s from leaf2.h1 to leaf1.h1: ECMP sends some over each spine.
FabricSpec two_by_two(unsigned spines) {
  FabricSpec f = leaf_spine(spec(spines, 2, 1));
  for (uint32_t q = 0; q < 8; ++q) flow(f, 2, 1, 1, 1, 2, 0x40 + q);
  EXPECT_EQ(f.cables[0].name.rfind("leaf1.up1-", 0), 0u);
  return f;
}

uint64_t dropped(const Fabric& fab, const std::string& sw, DropReason r) {
  return fab.at(sw_index(fab, sw)).drops(r);
}

TEST(FabricRouting, TheSpinesBlackHoleEndsWhenRoutesConverge) {
  FabricSpec f = two_by_two(2);
  f.cables[0].events.push_back({kMs, false});  // leaf1.up1 - spine1
  Fabric fab(std::move(f), kT0);
  FabricRouting routing(fab, 500 * kUs);
  fab.run_until(kT0 + kMs + 400 * kUs);
  const uint64_t hole = dropped(fab, "spine1", DropReason::NoLiveMember);
  EXPECT_GT(hole, 100u) << "leaf2 still sends spine1 its share for leaf1, which spine1 cannot deliver";
  EXPECT_TRUE(routing.updates().empty());
  fab.run_until(kT0 + kMs + 600 * kUs);
  ASSERT_EQ(routing.updates().size(), 1u);
  EXPECT_EQ(routing.updates()[0].at_ns, kMs + 500 * kUs);
  // leaf2 (leaf1's hosts over spine2 alone), leaf1 (leaf2's likewise), spine1 (leaf1 through
  // leaf2 and spine2: the shortest path left).
  EXPECT_EQ(routing.updates()[0].switches, 3u);
  EXPECT_EQ(routing.updates()[0].withdrawn, 0u);
  EXPECT_TRUE(routing.updates()[0].errors.empty());
  const uint64_t after = dropped(fab, "spine1", DropReason::NoLiveMember);
  const std::size_t leaf1 = sw_index(fab, "leaf1"), leaf2 = sw_index(fab, "leaf2");
  const uint64_t got = fab.at(leaf1).tx_packets(0), up1 = fab.at(leaf2).tx_packets(kUp1);
  fab.run_until(kT0 + 3 * kMs);
  EXPECT_EQ(dropped(fab, "spine1", DropReason::NoLiveMember), after) << "nothing is sent into the hole once routes converged";
  EXPECT_EQ(fab.at(leaf2).tx_packets(kUp1), up1) << "leaf2 no longer uses spine1 for leaf1";
  const double gbps = static_cast<double>(fab.at(leaf1).tx_packets(0) - got) * kFrame * 8 / (1.4 * kMs);
  EXPECT_NEAR(gbps, 16.0 * kFrame / (kFrame + 24), 0.5) << "every flow arrives, over spine2";
  expect_balanced(fab);
}

// The ports a switch's route to a host sends each redirection bucket to.
std::vector<uint16_t> bucket_ports(const Switch& sw, uint32_t host_ip) {
  const Fib& f = sw.fib();
  uint32_t g = 0;
  if (!f.lookup4(host_ip, g)) return {};
  std::vector<uint16_t> p;
  for (uint32_t nh : f.group(g).table) p.push_back(f.nexthop(nh).port);
  return p;
}

// Convergence moves leaf2's route to leaf1's host to a new group without spine1, starting from
// the old group's table: ECMP flows over spines 2 and 3 keep their spine (resilient), only
// spine1's move. (Three spines: each switch's two LPM banks take most of a test's memory.)
TEST(FabricRouting, AConvergedRouteKeepsTheFlowsOfTheSpinesItKeeps) {
  FabricSpec f = two_by_two(3);
  f.cables[0].events.push_back({kMs, false});  // leaf1.up1 - spine1
  Fabric fab(std::move(f), kT0);
  FabricRouting routing(fab, 500 * kUs);
  const Switch& leaf2 = fab.at(sw_index(fab, "leaf2"));
  const std::vector<uint16_t> before = bucket_ports(leaf2, fabric_host_ip(1, 1));
  ASSERT_EQ(before.size(), 64u);
  fab.run_until(kT0 + 2 * kMs);
  ASSERT_EQ(routing.updates().size(), 1u);
  const std::vector<uint16_t> after = bucket_ports(leaf2, fabric_host_ip(1, 1));
  ASSERT_EQ(after.size(), 64u);
  int moved = 0, spine1 = 0;
  for (std::size_t b = 0; b < 64; ++b) {
    EXPECT_NE(after[b], kUp1) << "bucket " << b;
    if (before[b] != kUp1) {
      EXPECT_EQ(after[b], before[b]) << "bucket " << b << " of a spine the route keeps";
    }
    moved += after[b] != before[b];
    spine1 += before[b] == kUp1;
  }
  EXPECT_GE(spine1, 21);
  EXPECT_EQ(moved, spine1) << "spine1's share, no more";
  expect_balanced(fab);
}

TEST(FabricRouting, WithoutConvergenceTheHoleStays) {
  FabricSpec f = two_by_two(2);
  f.cables[0].events.push_back({kMs, false});
  Fabric fab(std::move(f), kT0);
  fab.run_until(kT0 + 2 * kMs);
  const uint64_t at2 = dropped(fab, "spine1", DropReason::NoLiveMember);
  fab.run_until(kT0 + 3 * kMs);
  EXPECT_GT(dropped(fab, "spine1", DropReason::NoLiveMember), at2 + 100);
}

TEST(FabricRouting, ARepairedCableCarriesTrafficAgain) {
  FabricSpec f = two_by_two(2);
  f.cables[0].events.push_back({kMs, false});
  f.cables[0].events.push_back({2 * kMs, true});
  Fabric fab(std::move(f), kT0);
  FabricRouting routing(fab, 200 * kUs);
  fab.run_until(kT0 + 2 * kMs);
  const std::size_t leaf2 = sw_index(fab, "leaf2");
  const uint64_t up1 = fab.at(leaf2).tx_packets(kUp1);
  fab.run_until(kT0 + 2 * kMs + 150 * kUs);
  EXPECT_EQ(fab.at(leaf2).tx_packets(kUp1), up1) << "not before the routes converge";
  fab.run_until(kT0 + 3 * kMs);
  ASSERT_EQ(routing.updates().size(), 2u);
  EXPECT_EQ(routing.updates()[1].switches, 3u);
  EXPECT_GT(fab.at(leaf2).tx_packets(kUp1), up1 + 100) << "spine1 is back in leaf2's group for leaf1";
  expect_balanced(fab);
}

TEST(FabricRouting, AnIsolatedLeafsHostsAreWithdrawnAndComeBack) {
  FabricSpec f = two_by_two(1);  // one spine: leaf1's only cable
  f.cables[0].events.push_back({kMs, false});
  f.cables[0].events.push_back({2 * kMs, true});
  Fabric fab(std::move(f), kT0);
  FabricRouting routing(fab, 100 * kUs);
  fab.run_until(kT0 + 1900 * kUs);
  ASSERT_EQ(routing.updates().size(), 1u);
  // leaf2 and spine1 lose leaf1.h1; leaf1 loses leaf2.h1.
  EXPECT_EQ(routing.updates()[0].withdrawn, 3u);
  const uint64_t no_route = dropped(fab, "leaf2", DropReason::NoRoute);
  EXPECT_GT(no_route, 100u) << "leaf2 has no route to leaf1.h1: it drops at once, counted";
  fab.run_until(kT0 + 3 * kMs);
  ASSERT_EQ(routing.updates().size(), 2u);
  EXPECT_EQ(routing.updates()[1].routes, 3u);
  EXPECT_EQ(routing.updates()[1].withdrawn, 0u);
  const uint64_t got = fab.at(sw_index(fab, "leaf1")).tx_packets(0);
  const uint64_t no_route_back = dropped(fab, "leaf2", DropReason::NoRoute);
  fab.run_until(kT0 + 4 * kMs);
  EXPECT_EQ(dropped(fab, "leaf2", DropReason::NoRoute), no_route_back);
  EXPECT_GT(fab.at(sw_index(fab, "leaf1")).tx_packets(0), got + 1000) << "leaf1.h1 is reached again";
  expect_balanced(fab);
}

}  // namespace
}  // namespace rs::test
