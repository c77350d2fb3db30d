#include "dataplane/stages/route/ipv4_lpm.h"

#include <rte_ip.h>

#include "dataplane/tables/fib.h"

namespace rs {

void Ipv4Lpm::process(Burst& in, uint8_t* next, WorkerContext& ctx) {
  const Fib& fib = *ctx.fib;
  const uint16_t n = in.n;
  uint32_t hit = 0, miss = 0, ttl = 0;
  for (uint16_t i = 0; i < n; ++i) {
    rte_mbuf* m = in.pkts[i];
    PacketMeta& pm = meta(m);
    auto* ip = rte_pktmbuf_mtod_offset(m, const rte_ipv4_hdr*, pm.l3_offset);
    const uint8_t time_to_live = ip->time_to_live;
    uint32_t group;
    const bool found = fib.lookup4(ip->dst_addr, group);
    if (time_to_live <= 1) [[unlikely]] {
      pm.drop_reason = DropReason::TtlExpired;
      next[i] = kNextDrop;
      ++ttl;
      continue;
    }
    if (!found) [[unlikely]] {
      pm.drop_reason = DropReason::NoRoute;
      next[i] = kNextDrop;
      ++miss;
      continue;
    }
    pm.group = static_cast<uint16_t>(group);
    next[i] = Group;
    ++hit;
  }
  std::array<uint32_t, kCounters.size()> tally{};
  tally[Hit] = hit;
  tally[Miss] = miss;
  tally[TtlExpired] = ttl;
  publish(tally);
}

REGISTER_STAGE(Ipv4Lpm);

}  // namespace rs
