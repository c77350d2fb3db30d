// ecmp: a hash of the packet's flow fields picks a slot of the group's power-of-two
// redirection table (weights by replication), so a flow (one RoCE QP) always takes one path
// and never reorders. Resilient: when a member's port is down only that member's flows move,
// each to a live member picked by its hash; the others keep theirs. `dest_qp` adds the BTH
// destination QP to the hash, as Meta's E-ECMP does, so QPs between one pair of hosts spread
// even when their UDP source ports collide.
//
// With the default fields the choice is the table at the 5-tuple hash the parser computed:
// the route stages take it inline and only packets whose member is down come here.
#include <rte_ip.h>

#include "dataplane/routing/routing_policy.h"
#include "dataplane/stages/parse.h"

namespace rs {
namespace {

class Ecmp final : public RoutingPolicy {
 public:
  static constexpr std::string_view kSummary =
      "hash of the flow's fields into a redirection table; resilient to member loss (RFC 2992, E-ECMP's dest_qp)";
  enum Param { Fields, DestQp };
  static constexpr std::array<ParamSpec, 2> kParams = {{
      {"fields", ParamType::Choice, 0, 0, 0, "what is hashed: the 5-tuple, or the IP addresses alone", "five_tuple|ip_pair"},
      {"dest_qp", ParamType::Bool, 0, 0, 0, "also hash the BTH destination QP of RoCE packets (E-ECMP)"},
  }};
  enum Ctr { SteeredAway };
  static constexpr std::array<std::string_view, 1> kCounters = {"steered_away"};

  static bool table_by_flow_hash(const ParamValues& p) { return p[Fields] == 0 && p[DestQp] == 0; }

  explicit Ecmp(const PolicyInit& in)
      : RoutingPolicy(in),
        ip_pair_(in.params[Fields] == 1),
        qp_(in.params[DestQp] != 0),
        seed_(static_cast<uint32_t>(in.switch_seed * 0x9e3779b97f4a7c15ull >> 32)) {}

  void select(const PacketMeta* const* pkts, uint16_t n, const SelectEnv& env, uint16_t* member) override {
    uint32_t steered = 0;
    for (uint16_t i = 0; i < n; ++i) {
      const PacketMeta& pm = *pkts[i];
      uint32_t h = ip_pair_ ? ip_pair_hash(pm, seed_) : pm.flow_hash;
      // Finalised after the CRC as the parse's hash is (parse::flow_hash_final says why).
      if (qp_ && (pm.flags & meta_flag::kRoce)) h = parse::flow_hash_final(parse::crc32c_u32(pm.dest_qp, h));
      member[i] = hashed_member(h, env.up);
      steered += member[i] != group().slot[h & group().mask];
    }
    if (steered) counters[SteeredAway].add(steered);
  }

 private:
  // The source and destination addresses, read from the frame, hashed with the switch's seed.
  static uint32_t ip_pair_hash(const PacketMeta& pm, uint32_t seed) {
    const uint8_t* ip = rte_pktmbuf_mtod(mbuf_of(&pm), const uint8_t*) + pm.l3_offset;
    uint32_t h = seed;
    if (pm.l3 == L3Type::Ipv4) {
      h = parse::crc32c_u32(parse::load_le32(ip + 12), h);
      return parse::flow_hash_final(parse::crc32c_u32(parse::load_le32(ip + 16), h));
    }
    for (int k = 0; k < 8; ++k) h = parse::crc32c_u32(parse::load_le32(ip + 8 + 4 * k), h);
    return parse::flow_hash_final(h);
  }
  bool ip_pair_, qp_;
  uint32_t seed_;
};

REGISTER_ROUTING_POLICY(Ecmp, "ecmp");

}  // namespace
}  // namespace rs
