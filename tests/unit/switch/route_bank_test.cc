// RouteBank (dataplane/tables/route_bank.h), one copy of the route tables: with
// limits.prefault the IPv4 table's pages are resident from its creation, so a route's first
// write to a page does not wait for a page fault; without it they stay untouched until used.
// Residency is read from the kernel (mincore), not from the bank.
#include "dataplane/tables/route_bank.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace rs::test {
namespace {

// The share of the pages of [p, p + len) that are resident.
double resident_share(const void* p, std::size_t len) {
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = reinterpret_cast<uintptr_t>(p) & ~(page - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + len + page - 1) & ~(page - 1);
  std::vector<unsigned char> v((end - begin) / page);
  if (mincore(reinterpret_cast<void*>(begin), end - begin, v.data()) != 0) return -1;
  std::size_t in = 0;
  for (unsigned char c : v) in += c & 1;
  return static_cast<double>(in) / static_cast<double>(v.size());
}

RouteSpec v4_route(uint8_t a, uint8_t b, uint8_t c, uint8_t d, uint8_t depth, uint32_t group) {
  RouteSpec r;
  r.addr[0] = a, r.addr[1] = b, r.addr[2] = c, r.addr[3] = d;
  r.depth = depth;
  r.group = group;
  return r;
}

std::size_t tbl8_bytes(const RouteLimits& l) {
  return std::size_t{l.v4_tbl8} * RTE_LPM_TBL8_GROUP_NUM_ENTRIES * sizeof(rte_lpm_tbl_entry);
}

// Both banks at once, on memory the DPDK heap has not handed out before: rte_zmalloc clears
// (and so touches) memory that was freed, which would make any bank resident.
TEST(RouteBank, PrefaultMakesTheIpv4TableResidentAndKeepsItsContent) {
  RouteLimits lazy_limits;
  lazy_limits.prefault = false;
  RouteLimits l;
  l.v4_tbl8 = 512;
  ASSERT_TRUE(l.prefault) << "prefault is the default";
  RouteBank lazy(lazy_limits), bank(l);
  ASSERT_EQ(lazy.add(v4_route(10, 1, 0, 0, 16, 3)), 0);
  ASSERT_EQ(bank.add(v4_route(10, 1, 0, 0, 16, 3)), 0);
  const double untouched = resident_share(lazy.v4()->tbl24, sizeof(lazy.v4()->tbl24));
  ASSERT_GE(untouched, 0.0) << "mincore failed";
  EXPECT_LT(untouched, 0.5) << "without prefault the tbl24 is resident only where routes wrote";
  EXPECT_EQ(resident_share(bank.v4()->tbl24, sizeof(bank.v4()->tbl24)), 1.0);
  EXPECT_EQ(resident_share(bank.v4()->tbl8, tbl8_bytes(l)), 1.0);
  // Made resident, not changed: the route added after it and a miss beside it.
  ASSERT_EQ(bank.add(v4_route(10, 2, 3, 128, 25, 7)), 0);
  uint32_t g = 0;
  ASSERT_EQ(rte_lpm_lookup(bank.v4(), 0x0A01FFFFu, &g), 0);
  EXPECT_EQ(g, 3u);
  ASSERT_EQ(rte_lpm_lookup(bank.v4(), 0x0A020381u, &g), 0);
  EXPECT_EQ(g, 7u);
  EXPECT_NE(rte_lpm_lookup(bank.v4(), 0x0A02037Fu, &g), 0);
  EXPECT_NE(rte_lpm_lookup(bank.v4(), 0x0B000000u, &g), 0);
}

}  // namespace
}  // namespace rs::test
