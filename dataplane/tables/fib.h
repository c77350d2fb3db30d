// The forwarding information base as the workers see it: route tables (P4 ipv4_lpm /
// ipv6_lpm, a RouteBank), next hops and next-hop groups (the nexthop_selector's members and
// groups) with each worker's routing policy instances. Immutable once published: the control
// plane publishes a new Fib with one pointer store (switch/fib_writer.h) and workers read it
// between quiescent states. A snapshot shares its parts with the next one where they did not
// change: a route change keeps the groups, a group change keeps the route tables.
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

#include "dataplane/core/packet_meta.h"
#include "dataplane/routing/policy_params.h"
#include "dataplane/tables/route_bank.h"

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
  // A group of the control plane's (Local: the switch's own addresses; Glean: a connected
  // subnet, or next hops none of which is resolved yet): no members and no policy, its packets
  // take the route stages' `local` edge.
  PuntReason punt = PuntReason::None;
  // A blackhole (GroupSpec::drop): no members and no policy; the route stages drop its packets.
  bool drop = false;
  uint32_t mask = 0;               // table.size() - 1; the table size is a power of two
  std::vector<uint32_t> members;   // next-hop indices
  std::vector<uint32_t> table;     // redirection table: hash slot -> next-hop index
};

// Next hops and groups, with each worker's policy instances for them. A group id is its
// index, which routes name; a deleted group leaves an empty slot (no members, no policy) that
// no route names, so the ids of the others never move.
struct FibGroups {
  std::vector<NextHop> nexthops;
  // Beside each next hop, the VLAN of the interface it is on (a VLAN interface's neighbour,
  // tagged as its port carries the VLAN), 0 for a port's; read only for a bridged port.
  std::vector<uint16_t> nexthop_vlan;
  std::vector<NextHopGroup> groups;
  std::vector<std::unique_ptr<PolicySet>> policy_sets;  // one per worker
  FibGroups();
  ~FibGroups();
};

class Fib {
 public:
  Fib();  // an empty FIB to build with the add_* calls below, before it is published
  // A snapshot made of shared parts (FibWriter).
  Fib(std::shared_ptr<const RouteBank> bank, std::shared_ptr<const FibGroups> groups);
  ~Fib();
  Fib(const Fib&) = delete;
  Fib& operator=(const Fib&) = delete;

  // Start-up / control-plane side. Throws std::runtime_error with a reason on failure.
  uint32_t add_nexthop(const NextHop& nh);
  uint32_t add_group(NextHopGroup g);  // fills table by replication of members when empty
  void add_route(const RouteSpec& r, uint32_t max_routes_hint = 4096);
  // Checks a group and completes it (table, mask, default policy, inline_member) as add_group
  // does, against `nexthops` next hops; throws with the reason.
  static void complete_group(NextHopGroup& g, std::size_t nexthops);

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
  const NextHopGroup& group(uint32_t id) const { return g_->groups[id]; }
  const NextHopGroup* group_table() const { return g_->groups.data(); }
  const NextHop& nexthop(uint32_t id) const { return g_->nexthops[id]; }
  const NextHop* nexthop_table() const { return g_->nexthops.data(); }
  const uint16_t* nexthop_vlans() const { return g_->nexthop_vlan.data(); }
  std::size_t num_groups() const { return g_->groups.size(); }
  std::size_t num_nexthops() const { return g_->nexthops.size(); }
  const FibGroups& groups() const { return *g_; }
  const std::shared_ptr<const FibGroups>& shared_groups() const { return g_; }
  const std::shared_ptr<const RouteBank>& shared_bank() const { return bank_; }

  // Builds the redirection table: each member gets table_size / members slots (weights by
  // replication), interleaved so a power-of-two mask spreads flows evenly.
  static std::vector<uint32_t> build_table(const std::vector<uint32_t>& members, uint32_t size);
  // The same shares, starting from an earlier table (`old`, in the new next-hop ids; kNoMember
  // where the member left): a bucket keeps its member while that member holds no more than its
  // share, and only the others are given to members below theirs. So removing a member moves
  // only its flows, and adding one moves just enough flows to it (resilient hashing, as
  // Linux's resilient next-hop groups and SAI's fine-grained ECMP do). An old table of another
  // size is not reused.
  static constexpr uint32_t kNoMember = UINT32_MAX;
  static std::vector<uint32_t> rebalance_table(const std::vector<uint32_t>& old, const std::vector<uint32_t>& members,
                                               uint32_t size);

  // Each worker's routing policy instances for this FIB's groups, made once the groups are
  // all added: they live and die with this snapshot, so no worker reads one after it is freed.
  void attach_policies(uint16_t workers, uint64_t seed);
  // The same for new group tables; `previous` (may be null) lends its instances to the groups
  // whose policy and members are unchanged (`same[g]`), so their state (flowlet tables,
  // counters) carries over.
  static void attach_policies(FibGroups& groups, uint16_t workers, uint64_t seed, const FibGroups* previous,
                              const std::vector<bool>& same);
  PolicySet& policies(uint16_t worker) const { return *g_->policy_sets[worker]; }

 private:
  FibGroups& own_groups();  // the builder's, before publication
  void refresh_bank();

  std::shared_ptr<const FibGroups> g_;
  std::shared_ptr<const RouteBank> bank_;
  RouteBank* own_bank_ = nullptr;  // the builder's bank (add_route), null in a shared snapshot
  FibGroups* own_g_ = nullptr;
  // Copied from the bank: the lookups read them without a second indirection.
  rte_lpm* v4_ = nullptr;
  rte_lpm6* v6_ = nullptr;
  int64_t default_v4_ = -1;  // the /0 routes (rte_lpm and rte_lpm6 take depths from 1); -1 = none
  int64_t default_v6_ = -1;
};

}  // namespace rs
