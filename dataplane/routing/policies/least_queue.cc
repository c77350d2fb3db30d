// least_queue: every packet to the live member with the fewest bytes queued in the packet's
// own egress queue: the greedy "join the shortest queue" that DRILL samples and CONGA/HULA
// approximate with path-wide measures. It reads every member per packet, which a switch ASIC
// cannot afford and a software switch with a handful of uplinks can. Among equal queues the
// flow's ECMP member wins, so idle links still spread flows as ECMP would and the answer
// depends on nothing but the packet and the load view.
#include "dataplane/routing/routing_policy.h"

namespace rs {
namespace {

class LeastQueue final : public RoutingPolicy {
 public:
  static constexpr std::string_view kSummary =
      "every packet to the live member with the fewest bytes queued (join the shortest queue)";
  static constexpr std::array<ParamSpec, 0> kParams = {};
  enum Ctr { Rerouted };
  // Packets sent away from their ECMP member because another queue was shorter (or it was down).
  static constexpr std::array<std::string_view, 1> kCounters = {"rerouted"};

  explicit LeastQueue(const PolicyInit& in) : RoutingPolicy(in) {}

  void select(PacketMeta* const* pkts, uint16_t n, const SelectEnv& env, uint16_t* member) override {
    uint32_t rerouted = 0;
    for (uint16_t i = 0; i < n; ++i) {
      const PacketMeta& pm = *pkts[i];
      // Start the scan at the flow's ECMP member: it keeps ties, because only a shorter queue
      // replaces the best so far.
      const uint16_t first = group().slot[pm.flow_hash & group().mask];
      uint16_t best = first;
      uint64_t best_bytes = UINT64_MAX;
      const uint16_t k = members();
      for (uint16_t j = 0; j < k; ++j) {
        const uint16_t m = static_cast<uint16_t>(first + j < k ? first + j : first + j - k);  // wraps past the last
        if (!((env.up >> m) & 1)) continue;  // a member whose link is down is never chosen
        const uint64_t bytes = queue_bytes(env, m, pm);
        if (bytes < best_bytes) best = m, best_bytes = bytes;
      }
      member[i] = best;
      rerouted += best != first;
    }
    if (rerouted) counters[Rerouted].add(rerouted);
  }
};

REGISTER_ROUTING_POLICY(LeastQueue, "least_queue");

}  // namespace
}  // namespace rs
