// Classic ECMP: the 5-tuple hash picks a slot of the group's redirection table. Stateless, so
// a flow (one RoCE QP) always takes one path and never reorders.
#include "dataplane/policies/routing/routing_policy.h"

namespace rs {
namespace {

class EcmpHash final : public RoutingPolicy {
 public:
  explicit EcmpHash(uint32_t) {}
  uint32_t select(const PacketMeta& m, const NextHopGroup& g, const PortLoad&, uint64_t) override {
    return g.table[m.flow_hash & g.mask];
  }
  void select_burst(PacketMeta* const* m, uint16_t n, const Fib& fib, const PortLoad&, uint64_t, uint32_t* nh) override {
    for (uint16_t i = 0; i < n; ++i) {
      const NextHopGroup& g = fib.group(m[i]->group);
      nh[i] = g.table[m[i]->flow_hash & g.mask];
    }
  }
  bool hash_table_only() const override { return true; }
};

REGISTER_ROUTING_POLICY(EcmpHash, "ecmp_hash");

}  // namespace
}  // namespace rs
