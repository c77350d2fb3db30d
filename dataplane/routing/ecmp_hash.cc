// Classic ECMP: the 5-tuple hash picks a slot of the group's redirection table. Stateless, so
// a flow (one RoCE QP) always takes one path and never reorders. Its choice is the table
// itself, so the route stages take it inline (kTableByFlowHash); select_burst is the same
// choice for any caller that asks the policy (the policy contract tests do).
#include "dataplane/routing/routing_policy.h"

namespace rs {
namespace {

class EcmpHash final : public RoutingPolicy {
 public:
  static constexpr bool kTableByFlowHash = true;
  explicit EcmpHash(uint32_t) {}
  void select_burst(PacketMeta* const* m, uint16_t n, const Fib& fib, const PortLoad&, uint64_t, uint32_t* nh) override {
    for (uint16_t i = 0; i < n; ++i) {
      const NextHopGroup& g = fib.group(m[i]->group);
      nh[i] = g.table[m[i]->flow_hash & g.mask];
    }
  }
};

REGISTER_ROUTING_POLICY(EcmpHash, "ecmp_hash");

}  // namespace
}  // namespace rs
