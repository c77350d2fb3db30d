// P4 tables ecmp_group / ecmp_member: the group's routing policy picks a next hop.
// Reads meta group, flow_hash (and whatever the policy reads); writes meta nexthop, out_port.
#pragma once
#include "dataplane/core/stage.h"
#include "dataplane/policies/routing/routing_policy.h"
#include "dataplane/tables/fib.h"

namespace rs {

// The policies' answers for n packets: with one policy for every group (the usual
// configuration) one call for the whole burst, else one per packet by its group's policy.
// Shared by nexthop_group and the ipv4_fastpath stage.
inline void select_nexthops(PacketMeta* const* pm, uint16_t n, WorkerContext& ctx, uint32_t* nh) {
  const Fib& fib = *ctx.fib;
  if (const int p = fib.uniform_policy(); p >= 0) {
    ctx.policies[p]->select_burst(pm, n, fib, *ctx.load, ctx.now_ns, nh);
    return;
  }
  for (uint16_t i = 0; i < n; ++i) {
    const NextHopGroup& g = fib.group(pm[i]->group);
    nh[i] = ctx.policies[g.policy]->select(*pm[i], g, *ctx.load, ctx.now_ns);
  }
}

// The egress port of a policy's answer, or kInvalidPort. A policy is student code: never
// trust its answer with an out-of-range port.
inline uint16_t nexthop_port(const NextHop* table, std::size_t count, uint32_t nh, uint16_t num_ports) {
  const uint16_t port = nh < count ? table[nh].port : kInvalidPort;
  return port < num_ports ? port : kInvalidPort;
}
inline uint16_t nexthop_port(const Fib& fib, uint32_t nh, uint16_t num_ports) {
  return nexthop_port(fib.nexthop_table(), fib.num_nexthops(), nh, num_ports);
}

class NexthopGroup final : public StageBase<NexthopGroup> {
 public:
  static constexpr std::string_view kName = "nexthop_group";
  enum Next : uint8_t { Rewrite };
  static constexpr std::array<std::string_view, 1> kNext = {"rewrite"};
  enum Ctr : uint8_t { Selected, BadNexthop };
  static constexpr std::array<std::string_view, 2> kCounters = {"selected", "bad_nexthop"};

  explicit NexthopGroup(const StageEnv&) {}
  void process(Burst& in, uint8_t* next, WorkerContext& ctx) override;
};

}  // namespace rs
