// The forwarding information base: LPM tables (P4 ipv4_lpm / ipv6_lpm), next hops and
// next-hop groups (ecmp_group / ecmp_member). Immutable once published: the control plane
// builds a new Fib and swaps one pointer; workers read it between quiescent states.
#pragma once
#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_lpm.h>
#include <rte_lpm6.h>

#include <cstddef>
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dataplane/routing/policy_params.h"

namespace rs {

class PolicySet;

struct NextHop {
  uint16_t port;
  rte_ether_addr mac;
};

// A group's routing policy and its parameters (routing/routing_policy.h).
struct PolicyChoice {
  uint16_t policy = 0;  // index into the routing policy registry
  ParamValues params;
};

inline constexpr std::size_t kMaxNexthops = 1u << 14;  // per-worker member counters are this long

struct NextHopGroup {
  std::string name;
  // choices[0] serves every traffic class without one of its own (per-class policies:
  // spray the RoCE class, hash the rest); choice_of_tc maps a class to its choice. None
  // given: plain `ecmp` with its defaults (Fib::add_group).
  std::vector<PolicyChoice> choices;
  std::array<uint8_t, 8> choice_of_tc{};
  // Every class's choice is the redirection table at the flow hash (plain ECMP): the route
  // stages take the member inline, as grout's route node reads reta[flow_id & (size - 1)],
  // while its port is up; other packets go to the nexthop_select stage, which calls the
  // policy. Set by Fib::add_group.
  bool inline_member = false;
  uint32_t mask = 0;               // table.size() - 1; the table size is a power of two
  std::vector<uint32_t> members;   // next-hop indices
  std::vector<uint32_t> table;     // redirection table: hash slot -> next-hop index
};

struct RouteSpec {
  bool ipv6 = false;
  uint8_t addr[16]{};  // IPv4 in the first 4 bytes, network order
  uint8_t depth = 0;
  uint32_t group = 0;
};

class Fib {
 public:
  Fib();
  ~Fib();
  Fib(const Fib&) = delete;
  Fib& operator=(const Fib&) = delete;

  // Start-up / control-plane side. Throws std::runtime_error with a reason on failure.
  uint32_t add_nexthop(const NextHop& nh);
  uint32_t add_group(NextHopGroup g);  // fills table by replication of members when empty
  void add_route(const RouteSpec& r, uint32_t max_routes_hint = 4096);

  // Fast-path side, once per packet: rte_lpm's own inline lookup, the default route beside it
  // (rte_lpm and rte_lpm6 take depths from 1).
  bool lookup4(uint32_t dst_be, uint32_t& group) const {
    if (v4_ && rte_lpm_lookup(v4_, rte_be_to_cpu_32(dst_be), &group) == 0) [[likely]]
      return true;
    if (default_v4_ < 0) return false;
    group = static_cast<uint32_t>(default_v4_);
    return true;
  }
  bool lookup6(const uint8_t dst[16], uint32_t& group) const {
    if (v6_ && rte_lpm6_lookup(v6_, dst, &group) == 0) return true;
    if (default_v6_ < 0) return false;
    group = static_cast<uint32_t>(default_v6_);
    return true;
  }
  const NextHopGroup& group(uint32_t id) const { return groups_[id]; }
  const NextHopGroup* group_table() const { return groups_.data(); }
  const NextHop& nexthop(uint32_t id) const { return nexthops_[id]; }
  const NextHop* nexthop_table() const { return nexthops_.data(); }
  std::size_t num_groups() const { return groups_.size(); }
  std::size_t num_nexthops() const { return nexthops_.size(); }

  // Builds the redirection table: each member gets table_size / members slots (weights by
  // replication), interleaved so a power-of-two mask spreads flows evenly.
  static std::vector<uint32_t> build_table(const std::vector<uint32_t>& members, uint32_t size);

  // Each worker's routing policy instances for this FIB's groups, made once the groups are
  // all added: they live and die with this snapshot, so no worker reads one after it is freed.
  void attach_policies(uint16_t workers, uint64_t seed);
  PolicySet& policies(uint16_t worker) const { return *policy_sets_[worker]; }

 private:
  void ensure_v4(uint32_t max_routes);
  void ensure_v6(uint32_t max_routes);

  rte_lpm* v4_ = nullptr;
  // rte_lpm and rte_lpm6 take depths from 1: the default routes (/0) live here; -1 = none.
  int64_t default_v4_ = -1;
  int64_t default_v6_ = -1;
  rte_lpm6* v6_ = nullptr;
  std::vector<NextHop> nexthops_;
  std::vector<NextHopGroup> groups_;
  std::vector<std::unique_ptr<PolicySet>> policy_sets_;
};

}  // namespace rs
