// The contract a routing policy implements: pick one next hop of a group for one packet.
// A policy is one file plus REGISTER_ROUTING_POLICY; each worker owns its own instance, so
// policy state (flowlet tables, last-best member) needs no locks.
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
  // Returns a next-hop index (Fib::nexthops), normally one of g.members.
  virtual uint32_t select(const PacketMeta& m, const NextHopGroup& g, const PortLoad& load, uint64_t now_ns) = 0;
  // The same choice for a burst of packets whose groups all use this policy, in order, into
  // nh[0..n). Must answer exactly what select() would, packet by packet. The default calls
  // select(); a policy whose choice is a few loads overrides it so the per-packet work stays
  // inline instead of one virtual call per packet.
  virtual void select_burst(PacketMeta* const* m, uint16_t n, const Fib& fib, const PortLoad& load, uint64_t now_ns,
                            uint32_t* nh) {
    for (uint16_t i = 0; i < n; ++i) nh[i] = select(*m[i], fib.group(m[i]->group), load, now_ns);
  }
  // True only for a policy whose select() is exactly g.table[m.flow_hash & g.mask] (plain
  // ECMP): the ipv4_fastpath stage then looks the member up inline, one packet at a time,
  // instead of a select_burst call per chunk and a second pass over the chunk.
  virtual bool hash_table_only() const { return false; }
};

using RoutingPolicyFactory = std::unique_ptr<RoutingPolicy> (*)(uint32_t seed);

struct RoutingPolicyEntry {
  std::string_view name;
  RoutingPolicyFactory make;
};

class RoutingPolicyRegistry {
 public:
  static std::vector<RoutingPolicyEntry>& all();
  static int find(std::string_view name);  // -1 when unknown
  static bool add(std::string_view name, RoutingPolicyFactory f);
};

#define REGISTER_ROUTING_POLICY(Type, name_str)                                                     \
  static const bool rs_routing_policy_registered_##Type = ::rs::RoutingPolicyRegistry::add(        \
      name_str, [](uint32_t seed) -> std::unique_ptr<::rs::RoutingPolicy> { return std::make_unique<Type>(seed); })

}  // namespace rs
