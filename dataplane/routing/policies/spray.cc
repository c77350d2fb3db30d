// spray: packet spraying, every packet of every flow to the next member: round robin over the
// live members, or a uniformly random one (SAI ARS's SAI_ARS_MODE_PER_PACKET_RANDOM; random
// packet spraying, Dixit et al., INFOCOM'13). It reads no load, so it is the baseline the
// adaptive per-packet policies must beat. A flow's packets arrive out of order (see
// per_packet_quality).
#include "dataplane/routing/routing_policy.h"

namespace rs {
namespace {

class Spray final : public RoutingPolicy {
 public:
  static constexpr std::string_view kSummary =
      "every packet to the next live member, in turn or at random (packet spraying)";
  enum Param { Mode };
  enum ModeChoice { RoundRobin, Random };
  static constexpr std::array<ParamSpec, 1> kParams = {{
      {"mode", ParamType::Choice, RoundRobin, 0, 0, "the live members in turn, or a random one per packet",
       "round_robin|random"},
  }};
  static constexpr std::array<std::string_view, 0> kCounters = {};

  // Each instance starts its turn at a member of its own, so workers' turns do not line up.
  explicit Spray(const PolicyInit& in)
      : RoutingPolicy(in),
        random_(static_cast<int>(in.params[Mode]) == Random),
        next_(static_cast<unsigned>(rng_.next() % members())) {}

  void select(const PacketMeta* const*, uint16_t n, const SelectEnv& env, uint16_t* member) override {
    for (uint16_t i = 0; i < n; ++i) {
      if (random_) {
        member[i] = random_member(env.up);
        continue;
      }
      // The first live member at or after the turn, else the first live one (wrap around).
      const uint64_t ahead = next_ < 64 ? env.up & (~uint64_t{0} << next_) : 0;
      const uint16_t m = static_cast<uint16_t>(__builtin_ctzll(ahead ? ahead : env.up));
      member[i] = m;
      next_ = m + 1u;
    }
  }

 private:
  bool random_;
  unsigned next_;  // the member whose turn is next
};

REGISTER_ROUTING_POLICY(Spray, "spray");

}  // namespace
}  // namespace rs
