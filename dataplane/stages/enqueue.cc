#include "dataplane/stages/enqueue.h"

#include "dataplane/tm/buffer/shared_buffer.h"

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

}  // namespace rs
