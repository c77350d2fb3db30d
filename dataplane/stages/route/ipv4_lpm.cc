#include "dataplane/stages/route/ipv4_lpm.h"

#include <rte_ip.h>

#include "dataplane/tables/fib.h"

namespace rs {

void Ipv4Lpm::process(Burst& in, uint8_t* next, WorkerContext& ctx) {
  std::array<uint32_t, kCounters.size()> tally{};
  for (uint16_t i = 0; i < in.n; ++i) {
    rte_mbuf* m = in.pkts[i];
    PacketMeta& pm = meta(m);
    auto* ip = rte_pktmbuf_mtod_offset(m, const rte_ipv4_hdr*, pm.l3_offset);
    if (ip->time_to_live <= 1) {
      pm.drop_reason = DropReason::TtlExpired;
      next[i] = kNextDrop;
      ++tally[TtlExpired];
      continue;
    }
    uint32_t group;
    if (!ctx.fib->lookup4(ip->dst_addr, group)) {
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

REGISTER_STAGE(Ipv4Lpm);

}  // namespace rs
