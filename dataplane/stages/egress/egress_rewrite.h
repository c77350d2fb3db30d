// P4 egress port_mac + rewrite: next-hop DMAC, egress port SMAC, TTL / hop-limit decrement with
// an incremental IPv4 checksum. Touches only fields the RoCE ICRC masks (MACs are outside the
// ICRC; TTL and checksum are masked), so the ICRC stays valid.
// Reads meta nexthop, out_port, l3, l3_offset.
#pragma once
#include <rte_ether.h>
#include <rte_ip.h>

#include <cstddef>
#include <cstring>

#include "dataplane/core/stage.h"
#include "dataplane/tables/fib.h"

namespace rs {

// csum_update16(csum, w, w') for w' = w with its TTL byte one lower, as stored in the packet.
// In memory order TTL is the low byte of the 16-bit load, so ~w + w' = 0xFFFF - 1 exactly
// (no borrow: TTL >= 1) and the RFC 1624 sum is ~csum + 0xFFFE, which needs one fold only
// (0xFFFF + 0xFFFE = 0x1FFFD folds to 0xFFFE). Same integers as csum_update16, fewer steps:
// the fold is the carry of a 16-bit add put back (add, adc), since it cannot carry twice.
static_assert(RTE_BYTE_ORDER == RTE_LITTLE_ENDIAN, "csum_ttl_decrement assumes TTL is the low byte of the load");
inline uint16_t csum_ttl_decrement(uint16_t csum) {
  uint16_t sum;
  const bool carry = __builtin_add_overflow(static_cast<uint16_t>(~csum), uint16_t{0xFFFE}, &sum);
  return static_cast<uint16_t>(~(sum + carry));
}

// The rewrite in parts, so a caller that already knows the shape (ipv4_fastpath) skips the
// metadata reads. Touches only what the ICRC masks or does not cover.
[[gnu::always_inline]] inline void rewrite_macs(uint8_t* frame, const rte_ether_addr* dmac, const rte_ether_addr* smac) {
  std::memcpy(frame, dmac, RTE_ETHER_ADDR_LEN);
  std::memcpy(frame + RTE_ETHER_ADDR_LEN, smac, RTE_ETHER_ADDR_LEN);
}
// TTL is the high byte of the (TTL, protocol) word: TTL - 1 takes 0x0100 from that word, so
// RFC 1624's HC' = ~(~HC + ~m + m') is HC + 0x0100 in one's-complement arithmetic. The route
// lookup let through only TTL >= 2, so the byte never borrows.
[[gnu::always_inline]] inline void decrement_ttl_ipv4(uint8_t* l3) {
  auto* ip = reinterpret_cast<rte_ipv4_hdr*>(l3);
  ip->time_to_live--;
  ip->hdr_checksum = csum_ttl_decrement(ip->hdr_checksum);
}

// The MAC rewrite of an untagged IPv4 frame in two 8-byte stores. `nh` is the next hop as it
// sits in the table (port, then MAC: one load gives both); `src_ipv4` is the egress port's
// port_src_ipv4_word. The first store puts the next hop's MAC in bytes 0..6 (and two bytes
// that the second overwrites), the second the port's MAC and the EtherType, which was 0x0800
// already.
static_assert(RTE_BYTE_ORDER == RTE_LITTLE_ENDIAN, "the words below are built in memory order");
inline uint64_t port_src_ipv4_word(const rte_ether_addr& mac) {
  uint64_t w = uint64_t{RTE_BE16(RTE_ETHER_TYPE_IPV4)} << 48;
  std::memcpy(&w, mac.addr_bytes, RTE_ETHER_ADDR_LEN);
  return w;
}
[[gnu::always_inline]] inline void rewrite_macs_ipv4(uint8_t* frame, uint64_t nh_word, uint64_t src_ipv4) {
  const uint64_t dst = nh_word >> 16;
  std::memcpy(frame, &dst, sizeof(dst));
  std::memcpy(frame + RTE_ETHER_ADDR_LEN, &src_ipv4, sizeof(src_ipv4));
}

// One packet's rewrite from its metadata; returns whether it was IPv4.
[[gnu::always_inline]] inline bool rewrite_one(rte_mbuf* m, const NextHop* nexthops, const rte_ether_addr* port_mac) {
  const PacketMeta& pm = meta(m);
  uint8_t* p = rte_pktmbuf_mtod(m, uint8_t*);
  // Read everything from meta before the first byte store to the frame: a byte store may
  // alias meta as far as the compiler knows, and would force it to reload each field.
  const rte_ether_addr* dmac = &nexthops[pm.nexthop].mac;
  const rte_ether_addr* smac = &port_mac[pm.out_port];
  const bool is_v4 = pm.l3 == L3Type::Ipv4;
  uint8_t* l3 = p + pm.l3_offset;
  rewrite_macs(p, dmac, smac);
  if (is_v4) decrement_ttl_ipv4(l3);
  else reinterpret_cast<rte_ipv6_hdr*>(l3)->hop_limits--;
  return is_v4;
}

class EgressRewrite final : public StageBase<EgressRewrite> {
 public:
  static constexpr std::string_view kName = "egress_rewrite";
  enum Next : uint8_t { Enqueue };
  static constexpr std::array<std::string_view, 1> kNext = {"enqueue"};
  enum Ctr : uint8_t { Ipv4, Ipv6 };
  static constexpr std::array<std::string_view, 2> kCounters = {"ipv4", "ipv6"};

  explicit EgressRewrite(const StageEnv&) {}
  void process(Burst& in, uint8_t* next, WorkerContext& ctx) override;
};

}  // namespace rs
