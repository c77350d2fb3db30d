// P4 parser: Ethernet, one 802.1Q tag, IPv4/IPv6, UDP, BTH on UDP 4791, MAC control (0x8808).
// Reads the frame; writes meta l3/l4 offsets, pcp, dscp, ecn, ip_proto, flow_hash, BTH fields.
// Every length is checked against the bytes actually present; a lie is a named drop.
#pragma once
#include "dataplane/core/stage.h"

namespace rs {
namespace parse {
struct FastTally;
}

class Parser final : public StageBase<Parser> {
 public:
  static constexpr std::string_view kName = "parser";
  enum Next : uint8_t { Ip, MacControl };
  static constexpr std::array<std::string_view, 2> kNext = {"ip", "mac_control"};
  enum Ctr : uint8_t { Ipv4, Ipv6, Vlan, Udp, Roce, Cnp };
  static constexpr std::array<std::string_view, 6> kCounters = {"ipv4", "ipv6", "vlan", "udp", "roce", "cnp"};

  explicit Parser(const StageEnv& env) : seed_(env.hash_seed) {}
  void process(Burst& in, uint8_t* next, WorkerContext& ctx) override;

  // Exposed for tests and tools: parse one packet, fill meta, return the edge or kNextDrop.
  uint8_t parse_one(rte_mbuf* m);

 private:
  [[gnu::noinline]] uint8_t classify(rte_mbuf* m);  // the general path, with named drops
  void flush_tally(const parse::FastTally& t);
  uint32_t seed_;
  std::array<uint32_t, kCounters.size()> tally_{};
};

}  // namespace rs
