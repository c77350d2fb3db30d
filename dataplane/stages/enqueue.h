// The enqueue step: hands a packet to the traffic manager of its egress port, straight into
// the port's priority queues when this worker owns that port, else into the burst for the
// owner's ring. Reads meta out_port (passed in), queue. One inline body, used by
// rewrite_enqueue; the owner puts handed-over packets in its queues with EgressPort::enqueue.
#pragma once
#include "dataplane/core/worker_context.h"
#include "dataplane/tm/queue/egress_port.h"

namespace rs {

// A lossless PG must see a packet the moment it arrives, wherever its egress is: its bytes are
// charged on the ingress worker, so XOFF goes out at once instead of a ring and a loop later
// (the egress owner gives them back when the packet leaves).
void charge_before_handoff(rte_mbuf* m, WorkerContext& ctx);

// Where enqueue_packet() put the packet: handed to another worker, or offered to a local
// queue, which took it (None) or dropped it for this reason.
struct Enqueued {
  bool handoff;
  DropReason dropped;
};

// What the enqueue reads of the context, loaded once per burst (core/step_stage.h says why).
struct EnqueueTables {
  explicit EnqueueTables(const WorkerContext& ctx) : owner(ctx.port_owner), egress(ctx.egress), worker(ctx.worker) {}
  const uint8_t* owner;
  EgressPort* const* egress;
  uint16_t worker;
};

[[gnu::always_inline]] inline Enqueued enqueue_packet(rte_mbuf* m, uint16_t port, const EnqueueTables& q,
                                                      WorkerContext& ctx) {
  const uint8_t owner = q.owner[port];
  if (owner == q.worker) [[likely]]
    return {false, q.egress[port]->enqueue(m, ctx)};
  if (ctx.sb) [[unlikely]]
    charge_before_handoff(m, ctx);
  ctx.handoff[owner].push(m);
  return {true, DropReason::None};
}

}  // namespace rs
