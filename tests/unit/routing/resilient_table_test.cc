// Fib::rebalance_table, the resilient redirection table: a group's new table starts from its
// old one, so removing a member moves only that member's buckets (flows), adding one moves just
// its share to it, weights are kept as the from-scratch table keeps them, and a table already
// balanced does not change. build_groups uses it for every group the control plane changes,
// and a fabric's route convergence for the group a route moves to.
#include <gtest/gtest.h>

#include <map>

#include "dataplane/tables/fib.h"

namespace rs::test {
namespace {

std::map<uint32_t, uint32_t> shares(const std::vector<uint32_t>& t) {
  std::map<uint32_t, uint32_t> n;
  for (uint32_t m : t) ++n[m];
  return n;
}

uint32_t moved(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b) {
  uint32_t n = 0;
  for (std::size_t i = 0; i < a.size(); ++i) n += a[i] != b[i];
  return n;
}

TEST(ResilientTable, RemovingAMemberMovesOnlyItsBuckets) {
  const std::vector<uint32_t> old = Fib::build_table({10, 11, 12, 13}, 64);
  std::vector<uint32_t> seen = old;
  for (uint32_t& m : seen)
    if (m == 12) m = Fib::kNoMember;  // 12 left
  const std::vector<uint32_t> t = Fib::rebalance_table(seen, {10, 11, 13}, 64);
  for (std::size_t b = 0; b < t.size(); ++b)
    if (old[b] != 12) {
      EXPECT_EQ(t[b], old[b]) << "bucket " << b << " of a member that stayed";
    }
  EXPECT_EQ(moved(old, t), 16u);
  const auto n = shares(t);
  EXPECT_EQ(n.size(), 3u);
  for (auto [m, k] : n) EXPECT_TRUE(k == 21 || k == 22) << m << " has " << k;
  // What build_table alone would do: rehash most flows.
  EXPECT_GT(moved(old, Fib::build_table({10, 11, 13}, 64)), 32u);
}

TEST(ResilientTable, AddingAMemberMovesOnlyItsShare) {
  const std::vector<uint32_t> old = Fib::build_table({10, 11, 13}, 64);
  const std::vector<uint32_t> t = Fib::rebalance_table(old, {10, 11, 12, 13}, 64);
  EXPECT_EQ(moved(old, t), 16u);
  for (std::size_t b = 0; b < t.size(); ++b)
    if (t[b] != old[b]) {
      EXPECT_EQ(t[b], 12u);
    }
  for (auto [m, k] : shares(t)) EXPECT_EQ(k, 16u) << m;
}

TEST(ResilientTable, ABalancedTableStaysAsItIsAndWeightsHold) {
  const std::vector<uint32_t> three = Fib::rebalance_table(
      [] {
        auto t = Fib::build_table({10, 11, 12, 13}, 64);
        for (uint32_t& m : t)
          if (m == 11) m = Fib::kNoMember;
        return t;
      }(),
      {10, 12, 13}, 64);
  EXPECT_EQ(Fib::rebalance_table(three, {10, 12, 13}, 64), three) << "nothing changed: nothing moves";
  // Member 20 with weight 3 beside 21 with weight 1 (weights by replication).
  const std::vector<uint32_t> w = Fib::rebalance_table(Fib::build_table({20, 21}, 64), {20, 20, 20, 21}, 64);
  EXPECT_EQ(shares(w)[20], 48u);
  EXPECT_EQ(shares(w)[21], 16u);
  EXPECT_EQ(moved(Fib::build_table({20, 21}, 64), w), 16u) << "only what 20 gains moves";
}

TEST(ResilientTable, AnOldTableOfAnotherSizeOrNoneIsBuiltAfresh) {
  EXPECT_EQ(Fib::rebalance_table({}, {1, 2}, 64), Fib::build_table({1, 2}, 64));
  EXPECT_EQ(Fib::rebalance_table(Fib::build_table({1, 2}, 128), {1, 2}, 64), Fib::build_table({1, 2}, 64));
  std::vector<uint32_t> none(64, Fib::kNoMember);
  for (auto [m, k] : shares(Fib::rebalance_table(none, {1, 2, 3}, 64))) EXPECT_GE(k, 21u) << m;
}

}  // namespace
}  // namespace rs::test
