#include "dataplane/stages/route/ipv6_lpm.h"

#include <rte_ip.h>

#include "dataplane/tables/fib.h"

namespace rs {

void Ipv6Lpm::process(Burst& in, uint8_t* next, WorkerContext& ctx) {
  std::array<uint32_t, kCounters.size()> tally{};
  for (uint16_t i = 0; i < in.n; ++i) {
    rte_mbuf* m = in.pkts[i];
    PacketMeta& pm = meta(m);
    auto* ip = rte_pktmbuf_mtod_offset(m, const rte_ipv6_hdr*, pm.l3_offset);
    if (ip->hop_limits <= 1) {
      pm.drop_reason = DropReason::TtlExpired;
      next[i] = kNextDrop;
      ++tally[HopLimitExpired];
      continue;
    }
    uint32_t group;
    if (!ctx.fib->lookup6(ip->dst_addr, group)) {
      pm.drop_reason = DropReason::NoRoute;
      next[i] = kNextDrop;
      ++tally[Miss];
      continue;
    }
    pm.group = static_cast<uint16_t>(group);
    next[i] = Group;
    ++tally[Hit];
  }
  publish(tally);
}

REGISTER_STAGE(Ipv6Lpm);

}  // namespace rs
