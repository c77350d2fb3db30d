// One copy of the route tables (P4 ipv4_lpm / ipv6_lpm): an rte_lpm, an rte_lpm6 and the two
// default routes, which rte_lpm and rte_lpm6 cannot hold (their depths start at 1). Each table
// is created on its first route, with the capacity given then, so a switch without IPv6 routes
// spends no memory on rte_lpm6.
#pragma once
#include <rte_lpm.h>
#include <rte_lpm6.h>

#include <cstdint>

namespace rs {

struct RouteSpec {
  bool ipv6 = false;
  uint8_t addr[16]{};  // IPv4 in the first 4 bytes, network order
  uint8_t depth = 0;
  uint32_t group = 0;
};

// What one bank holds at most. rte_lpm needs a tbl8 group per /24 that has a longer route;
// rte_lpm6 one per 8 bits of a prefix beyond its first 24, shared between prefixes that agree.
struct RouteLimits {
  uint32_t v4 = 1u << 16;
  uint32_t v6 = 1u << 14;
  uint32_t v4_tbl8 = 1u << 12;
  uint32_t v6_tbl8 = 1u << 12;
  // The IPv4 table's pages are made resident when it is created (its 64 MiB tbl24 and its
  // tbl8 groups), so that adding a route never waits for a page fault. Without hugepages a
  // route's first write to a page otherwise faults it in, and in a virtual machine that is the
  // larger part of a route's install time (perf/README.md, route installation). The IPv6 table
  // is left as it is: its prefixes share their first bytes, so their routes touch few pages,
  // and making its 68 MiB resident cost more than the faults it saved.
  bool prefault = true;
};

class RouteBank {
 public:
  explicit RouteBank(const RouteLimits& limits) : limits_(limits) {}
  ~RouteBank();
  RouteBank(const RouteBank&) = delete;
  RouteBank& operator=(const RouteBank&) = delete;

  // 0, or a negative errno (-ENOSPC: the table or its tbl8 groups are full). Adding a prefix
  // that exists replaces its group. Throws std::runtime_error when a table cannot be created.
  int add(const RouteSpec& r);
  // 0, or -ENOENT when the prefix is not there.
  int del(bool ipv6, const uint8_t addr[16], uint8_t depth);

  rte_lpm* v4() const { return v4_; }
  rte_lpm6* v6() const { return v6_; }
  int64_t default_v4() const { return default_v4_; }  // the /0 route's group, or -1
  int64_t default_v6() const { return default_v6_; }
  const RouteLimits& limits() const { return limits_; }

 private:
  RouteLimits limits_;
  rte_lpm* v4_ = nullptr;
  rte_lpm6* v6_ = nullptr;
  int64_t default_v4_ = -1;
  int64_t default_v6_ = -1;
};

}  // namespace rs
