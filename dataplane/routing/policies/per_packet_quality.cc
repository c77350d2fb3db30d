// per_packet_quality: SAI ARS's SAI_ARS_MODE_PER_PACKET_QUALITY (OCP SAI saiars.h), the
// per-packet adaptive routing of NVIDIA Spectrum-X: every packet goes to a member of the best
// quality band the load view reports (7 = least loaded), a random one among equals. Packets of
// one flow take different paths, so they arrive out of order: RoCE wants receivers that place
// out-of-order packets directly (NVIDIA's NICs do, for Spectrum-X); otherwise its go-back-N
// takes every reordering for a loss.
#include "dataplane/routing/routing_policy.h"

namespace rs {
namespace {

class PerPacketQuality final : public RoutingPolicy {
 public:
  static constexpr std::string_view kSummary =
      "every packet to a member of the best quality band, random among equals (SAI ARS PER_PACKET_QUALITY)";
  static constexpr std::array<ParamSpec, 0> kParams = {};
  enum Ctr { Ties };
  static constexpr std::array<std::string_view, 1> kCounters = {"ties"};  // packets that drew among several

  explicit PerPacketQuality(const PolicyInit& in) : RoutingPolicy(in) {}

  void select(const PacketMeta* const*, uint16_t n, const SelectEnv& env, uint16_t* member) override {
    // Bands are per port, not per packet, and the view is the same for the whole call: read
    // once, they give each packet the answer it would get alone. The draw stays per packet.
    const uint64_t best = best_band(env, env.up);
    for (uint16_t i = 0; i < n; ++i) member[i] = random_member(best);
    if (best & (best - 1)) counters[Ties].add(n);
  }
};

REGISTER_ROUTING_POLICY(PerPacketQuality, "per_packet_quality");

}  // namespace
}  // namespace rs
