#include "dataplane/stages/egress/egress_rewrite.h"

#include <rte_ether.h>
#include <rte_ip.h>

#include "dataplane/core/checksum.h"
#include "dataplane/tables/fib.h"

namespace rs {

void EgressRewrite::process(Burst& in, uint8_t* next, WorkerContext& ctx) {
  std::array<uint32_t, kCounters.size()> tally{};
  for (uint16_t i = 0; i < in.n; ++i) {
    rte_mbuf* m = in.pkts[i];
    PacketMeta& pm = meta(m);
    auto* eth = rte_pktmbuf_mtod(m, rte_ether_hdr*);
    eth->dst_addr = ctx.fib->nexthop(pm.nexthop).mac;
    eth->src_addr = ctx.port_mac[pm.out_port];
    if (pm.l3 == L3Type::Ipv4) {
      auto* ip = rte_pktmbuf_mtod_offset(m, rte_ipv4_hdr*, pm.l3_offset);
      // TTL shares a 16-bit word with the protocol field.
      const uint16_t old_word = *reinterpret_cast<const uint16_t*>(&ip->time_to_live);
      ip->time_to_live--;
      const uint16_t new_word = *reinterpret_cast<const uint16_t*>(&ip->time_to_live);
      ip->hdr_checksum = csum_update16(ip->hdr_checksum, old_word, new_word);
      ++tally[Ipv4];
    } else {
      auto* ip = rte_pktmbuf_mtod_offset(m, rte_ipv6_hdr*, pm.l3_offset);
      ip->hop_limits--;
      ++tally[Ipv6];
    }
    next[i] = Enqueue;
  }
  publish(tally);
}

REGISTER_STAGE(EgressRewrite);

}  // namespace rs
