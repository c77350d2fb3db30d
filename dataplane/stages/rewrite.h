// The rewrite step (P4 egress: table port_mac and the RoceEgress rewrite): next-hop DMAC, egress
// port SMAC, TTL / hop-limit decrement with an incremental IPv4 checksum. Touches only fields the
// RoCE ICRC masks (TTL and checksum) or does not cover (MACs), so the ICRC stays valid. Reads meta
// nexthop, out_port, l3, l3_offset. One inline body, used by rewrite_enqueue.
#pragma once
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#include <cstring>

#include "dataplane/core/packet_meta.h"
#include "dataplane/tables/fib.h"

namespace rs {

// RFC 1624's HC' = ~(~HC + ~m + m') for m' = m with its TTL byte one lower. In memory order TTL
// is the low byte of the 16-bit (TTL, protocol) load, so ~m + m' = 0xFFFF - 1 exactly (no
// borrow: the route stage let through only TTL >= 2) and the sum is ~HC + 0xFFFE, which needs
// one fold only: the carry of a 16-bit add put back.
static_assert(RTE_BYTE_ORDER == RTE_LITTLE_ENDIAN, "csum_ttl_decrement assumes TTL is the low byte of the load");
inline uint16_t csum_ttl_decrement(uint16_t csum) {
  uint16_t sum;
  const bool carry = __builtin_add_overflow(static_cast<uint16_t>(~csum), uint16_t{0xFFFE}, &sum);
  return static_cast<uint16_t>(~(sum + carry));
}

[[gnu::always_inline]] inline void decrement_ttl_ipv4(uint8_t* l3) {
  auto* ip = reinterpret_cast<rte_ipv4_hdr*>(l3);
  ip->time_to_live--;
  ip->hdr_checksum = csum_ttl_decrement(ip->hdr_checksum);
}

// One packet's rewrite from its metadata; returns whether it was IPv4.
[[gnu::always_inline]] inline bool rewrite_frame(rte_mbuf* m, const PacketMeta& pm, const NextHop* nexthops,
                                                 const rte_ether_addr* port_mac) {
  uint8_t* p = rte_pktmbuf_mtod(m, uint8_t*);
  // Everything from meta before the first byte store to the frame: a byte store may alias
  // meta as far as the compiler knows, and would make it reload each field.
  const rte_ether_addr* dmac = &nexthops[pm.nexthop].mac;
  const rte_ether_addr* smac = &port_mac[pm.out_port];
  const bool is_v4 = pm.l3 == L3Type::Ipv4;
  uint8_t* l3 = p + pm.l3_offset;
  std::memcpy(p, dmac, RTE_ETHER_ADDR_LEN);
  std::memcpy(p + RTE_ETHER_ADDR_LEN, smac, RTE_ETHER_ADDR_LEN);
  if (is_v4) [[likely]]
    decrement_ttl_ipv4(l3);
  else
    reinterpret_cast<rte_ipv6_hdr*>(l3)->hop_limits--;
  return is_v4;
}

}  // namespace rs
