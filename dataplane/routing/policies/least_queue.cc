// least_queue: every packet to the live member with the fewest bytes queued in the packet's
// own egress queue: the greedy "join the shortest queue" that DRILL samples and CONGA/HULA
// approximate with path-wide measures. It compares every member for every packet, which a switch
// ASIC cannot afford and a software switch with a handful of uplinks can. Among equal queues the
// flow's ECMP member wins, so idle links still spread flows as ECMP would and the answer
// depends on nothing but the packet and the load view.
#include <algorithm>
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

  void select(PacketMeta* const* pkts, uint16_t n, const SelectEnv& env, uint16_t* member) override {
    // The shortest queues' members, once per call for each egress queue its packets use.
    std::array<uint64_t, 8> shortest;
    unsigned have = 0;
    uint32_t rerouted = 0;
    for (uint16_t i = 0; i < n; ++i) {
      const PacketMeta& pm = *pkts[i];
      const unsigned q = pm.queue & 7u;
      if (!((have >> q) & 1)) {
        shortest[q] = shortest_members(env, q);
        have |= 1u << q;
      }
      // The first of them from the flow's ECMP member on, wrapping past the last: the one a scan
      // from the flow's member that takes only a shorter queue meets first. So the flow's member
      // keeps ties, and idle links spread flows as ECMP would.
      const uint64_t s = shortest[q];
      const uint16_t first = group().slot[pm.flow_hash & group().mask];
      const uint64_t from = s & (~uint64_t{0} << first);
      const uint16_t best = static_cast<uint16_t>(__builtin_ctzll(from ? from : s));
      member[i] = best;
      rerouted += best != first;
    }
    if (rerouted) counters[Rerouted].add(rerouted);
  }

 private:
  // The live members (a member whose link is down is never chosen) with the fewest bytes in
  // queue q; never empty, as env.up is not.
  uint64_t shortest_members(const SelectEnv& env, unsigned q) const {
    std::array<uint64_t, kMaxGroupMembers> bytes;
    queue_loads(env, q, bytes.data());
    // Loops over every member, not over the live ones: a fixed trip count, no branch.
    const uint16_t k = members();
    uint64_t least = UINT64_MAX;
    for (uint16_t m = 0; m < k; ++m) least = std::min(least, ((env.up >> m) & 1) ? bytes[m] : UINT64_MAX);
    uint64_t best = 0;
    for (uint16_t m = 0; m < k; ++m) best |= uint64_t{bytes[m] == least} << m;
    return best & env.up;
  }
};

REGISTER_ROUTING_POLICY(LeastQueue, "least_queue");

}  // namespace
}  // namespace rs
