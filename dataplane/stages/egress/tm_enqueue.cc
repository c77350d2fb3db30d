#include "dataplane/stages/egress/tm_enqueue.h"

#include "dataplane/mmu/shared_buffer.h"
#include "dataplane/queues/egress_port.h"

namespace rs {

void TmEnqueue::charge_before_handoff(rte_mbuf* m, WorkerContext& ctx) {
  SharedBuffer& sb = *ctx.sb;
  PacketMeta& pm = meta(m);
  const uint8_t pg = sb.pg_of(pm);
  if (!(sb.lossless_pgs(pm.in_port) & (1u << pg))) return;
  sb.usage(ctx.worker).pg[pm.in_port][pg].add(sb.charge(m->pkt_len));
  pm.flags |= meta_flag::kPgCharged;
  if (ctx.egress[pm.in_port]) ctx.egress[pm.in_port]->check_xoff(pg, ctx.now_ns);
}

void TmEnqueue::process(Burst& in, uint8_t* next, WorkerContext& ctx) {
  std::array<uint32_t, kCounters.size()> tally{};
  for (uint16_t i = 0; i < in.n; ++i) {
    rte_mbuf* m = in.pkts[i];
    const uint16_t port = meta(m).out_port;
    const uint8_t owner = ctx.port_owner[port];
    next[i] = kNextConsumed;
    if (owner == ctx.worker) {
      ctx.egress[port]->enqueue(m, ctx);
      ++tally[Local];
    } else {
      // A lossless PG must see a packet the moment it arrives, wherever its egress is: its
      // bytes are charged here, on the ingress worker, so XOFF goes out at once instead of a
      // ring and a loop later (the egress owner gives them back when the packet leaves).
      if (ctx.sb) [[unlikely]]
        charge_before_handoff(m, ctx);
      ctx.handoff[owner].push(m);
      ++tally[Handoff];
    }
  }
  publish(tally);
}

REGISTER_STAGE(TmEnqueue);

}  // namespace rs
