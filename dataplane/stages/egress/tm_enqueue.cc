#include "dataplane/stages/egress/tm_enqueue.h"

#include "dataplane/queues/egress_port.h"

namespace rs {

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
      ctx.handoff[owner].push(m);
      ++tally[Handoff];
    }
  }
  publish(tally);
}

REGISTER_STAGE(TmEnqueue);

}  // namespace rs
