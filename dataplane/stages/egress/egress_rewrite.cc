#include "dataplane/stages/egress/egress_rewrite.h"

#include <rte_ether.h>
#include <rte_ip.h>

#include <cstring>

#include "dataplane/core/checksum.h"
#include "dataplane/tables/fib.h"

namespace rs {
namespace {

// csum_update16(csum, w, w') for w' = w with its TTL byte one lower, as stored in the packet.
// In memory order TTL is the low byte of the 16-bit load, so ~w + w' = 0xFFFF - 1 exactly
// (no borrow: TTL >= 1) and the RFC 1624 sum is ~csum + 0xFFFE, which needs one fold only
// (0xFFFF + 0xFFFE = 0x1FFFD folds to 0xFFFE). Same integers as csum_update16, fewer steps.
static_assert(RTE_BYTE_ORDER == RTE_LITTLE_ENDIAN, "csum_ttl_decrement assumes TTL is the low byte of the load");
inline uint16_t csum_ttl_decrement(uint16_t csum) {
  uint32_t sum = static_cast<uint16_t>(~csum) + 0xFFFEu;
  sum = (sum & 0xFFFF) + (sum >> 16);
  return static_cast<uint16_t>(~sum);
}

}  // namespace

void EgressRewrite::process(Burst& in, uint8_t* next, WorkerContext& ctx) {
  const NextHop* nexthops = ctx.fib->nexthop_table();
  const rte_ether_addr* port_mac = ctx.port_mac;
  const uint16_t n = in.n;
  uint32_t v4 = 0;
  for (uint16_t i = 0; i < n; ++i) {
    rte_mbuf* m = in.pkts[i];
    const PacketMeta& pm = meta(m);
    uint8_t* p = rte_pktmbuf_mtod(m, uint8_t*);
    // Read everything from meta before the first byte store to the frame: a byte store may
    // alias meta as far as the compiler knows, and would force it to reload each field.
    const rte_ether_addr* dmac = &nexthops[pm.nexthop].mac;
    const rte_ether_addr* smac = &port_mac[pm.out_port];
    const bool is_v4 = pm.l3 == L3Type::Ipv4;
    uint8_t* l3 = p + pm.l3_offset;
    std::memcpy(p, dmac, RTE_ETHER_ADDR_LEN);
    std::memcpy(p + RTE_ETHER_ADDR_LEN, smac, RTE_ETHER_ADDR_LEN);
    if (is_v4) {
      auto* ip = reinterpret_cast<rte_ipv4_hdr*>(l3);
      // TTL is the high byte of the (TTL, protocol) word: TTL - 1 takes 0x0100 from that word,
      // so RFC 1624's HC' = ~(~HC + ~m + m') is HC + 0x0100 in one's-complement arithmetic.
      // ipv4_lpm let through only TTL >= 2, so the byte never borrows.
      ip->time_to_live--;
      ip->hdr_checksum = csum_ttl_decrement(ip->hdr_checksum);
      ++v4;
    } else {
      reinterpret_cast<rte_ipv6_hdr*>(l3)->hop_limits--;
    }
    next[i] = Enqueue;
  }
  std::array<uint32_t, kCounters.size()> tally{};
  tally[Ipv4] = v4;
  tally[Ipv6] = n - v4;
  publish(tally);
}

REGISTER_STAGE(EgressRewrite);

}  // namespace rs
