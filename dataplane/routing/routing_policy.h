// The contract a routing policy implements: pick one next hop of a group for each packet of a
// burst. A policy is one file plus REGISTER_ROUTING_POLICY; each worker owns its own instance,
// so policy state (flowlet tables, last-best member) needs no locks. The nexthop_select stage
// is the one caller: once per policy per burst, with that policy's packets in arrival order.
#pragma once
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "dataplane/core/counter.h"
#include "dataplane/core/packet_meta.h"
#include "dataplane/core/types.h"
#include "dataplane/tables/fib.h"

namespace rs {

// Read-only view of egress occupancy for adaptive policies; written by the egress owners.
struct PortLoad {
  Counter queued_bytes[kMaxPorts];
};

class RoutingPolicy {
 public:
  virtual ~RoutingPolicy() = default;
  // For each of the n packets (each of a group using this policy), a next-hop index
  // (Fib::nexthops, normally one of its group's members) into nh[i]. No allocation, lock or
  // syscall: it runs on a worker for every burst.
  virtual void select_burst(PacketMeta* const* m, uint16_t n, const Fib& fib, const PortLoad& load, uint64_t now_ns,
                            uint32_t* nh) = 0;
};

using RoutingPolicyFactory = std::unique_ptr<RoutingPolicy> (*)(uint32_t seed);

struct RoutingPolicyEntry {
  std::string_view name;
  RoutingPolicyFactory make;
  // The policy's choice is always the group's redirection table at the packet's flow hash (a
  // policy says so with `static constexpr bool kTableByFlowHash = true`): the route stages
  // choose its groups' members inline, and call select_burst for them only in their general
  // form (pipelines/l3_roce_general.yaml), which must answer the same.
  bool table_by_flow_hash = false;
};

class RoutingPolicyRegistry {
 public:
  static std::vector<RoutingPolicyEntry>& all();
  static int find(std::string_view name);  // -1 when unknown
  static bool add(RoutingPolicyEntry e);
};

// A group's policy is a registry id; whether its member is chosen inline follows from it.
inline void use_policy(NextHopGroup& g, int id) {
  g.policy = static_cast<uint16_t>(id);
  g.inline_member = RoutingPolicyRegistry::all()[static_cast<std::size_t>(id)].table_by_flow_hash;
}

template <typename T>
constexpr bool table_by_flow_hash() {
  if constexpr (requires { T::kTableByFlowHash; }) return T::kTableByFlowHash;
  return false;
}

#define REGISTER_ROUTING_POLICY(Type, name_str)                                                          \
  static const bool rs_routing_policy_registered_##Type = ::rs::RoutingPolicyRegistry::add(             \
      {name_str, [](uint32_t seed) -> std::unique_ptr<::rs::RoutingPolicy> { return std::make_unique<Type>(seed); }, \
       ::rs::table_by_flow_hash<Type>()})

}  // namespace rs
