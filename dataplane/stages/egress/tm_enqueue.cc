#include "dataplane/stages/egress/tm_enqueue.h"

#include "dataplane/mmu/shared_buffer.h"

namespace rs {

void charge_before_handoff(rte_mbuf* m, WorkerContext& ctx) {
  SharedBuffer& sb = *ctx.sb;
  PacketMeta& pm = meta(m);
  const uint8_t pg = sb.pg_of(pm);
  if (!(sb.lossless_pgs(pm.in_port) & (1u << pg))) return;
  sb.usage(ctx.worker).pg[pm.in_port][pg].add(sb.charge(m->pkt_len));
  pm.flags |= meta_flag::kPgCharged;
  if (ctx.egress[pm.in_port]) ctx.egress[pm.in_port]->check_xoff(pg, ctx.now_ns);
}

void TmEnqueue::process(Burst& in, uint8_t* next, WorkerContext& ctx) {
  const uint16_t n = in.n;
  uint32_t local = 0;
  for (uint16_t i = 0; i < n; ++i) {
    next[i] = kNextConsumed;
    local += enqueue_one(in.pkts[i], meta(in.pkts[i]).out_port, ctx);
  }
  std::array<uint32_t, kCounters.size()> tally{};
  tally[Local] = local;
  tally[Handoff] = n - local;
  publish(tally);
}

REGISTER_STAGE(TmEnqueue);

}  // namespace rs
