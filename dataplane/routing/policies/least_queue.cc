// least_queue: every packet to the live member with the fewest bytes queued in the packet's
// own egress queue: the greedy "join the shortest queue" that DRILL samples and CONGA/HULA
// approximate with path-wide measures. It compares every member for every packet, which a switch
// ASIC cannot afford and a software switch with a handful of uplinks can. Among equal queues the
// flow's ECMP member wins, so idle links still spread flows as ECMP would and the answer
// depends on nothing but the packet and the load view.
#include <array>

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

  void select(const PacketMeta* const* pkts, uint16_t n, const SelectEnv& env, uint16_t* member) override {
    std::array<uint64_t, 8> shortest;  // per egress queue: its live members with the fewest bytes
    unsigned have = 0;                  // the queues whose `shortest` this call has read
    uint32_t rerouted = 0;
    for (uint16_t i = 0; i < n; ++i) {
      const PacketMeta& pm = *pkts[i];
      const unsigned q = pm.queue & 7u;
      if (!((have >> q) & 1)) {
        shortest[q] = shortest_queue(env, q, env.up);  // live members only
        have |= 1u << q;
      }
      // The first of them from the flow's ECMP member on, wrapping past the last: ties keep
      // the flow's member, so idle links spread flows as ECMP would.
      const uint64_t s = shortest[q];
      const uint16_t first = group().slot[pm.flow_hash & group().mask];
      const uint64_t from = s & (~uint64_t{0} << first);
      const uint16_t best = static_cast<uint16_t>(__builtin_ctzll(from ? from : s));
      member[i] = best;
      rerouted += best != first;
    }
    if (rerouted) counters[Rerouted].add(rerouted);
  }
};

REGISTER_ROUTING_POLICY(LeastQueue, "least_queue");

}  // namespace
}  // namespace rs
