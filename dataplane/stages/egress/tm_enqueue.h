// Hands each packet to the traffic manager of its egress port: straight into the port's
// priority queues when this worker owns that port, else into the burst for the owner's ring.
// Reads meta out_port, queue. Consumes every packet.
#pragma once
#include "dataplane/core/stage.h"
#include "dataplane/queues/egress_port.h"

namespace rs {

// A lossless PG must see a packet the moment it arrives, wherever its egress is: its bytes are
// charged on the ingress worker, so XOFF goes out at once instead of a ring and a loop later
// (the egress owner gives them back when the packet leaves).
void charge_before_handoff(rte_mbuf* m, WorkerContext& ctx);

// Queues one packet at its egress port (meta out_port, passed in by a caller that has it) or
// into the owner worker's handoff burst; returns whether it stayed on this worker. Shared by
// tm_enqueue and the ipv4_fastpath stage.
[[gnu::always_inline]] inline bool enqueue_one(rte_mbuf* m, uint16_t port, WorkerContext& ctx) {
  const uint8_t owner = ctx.port_owner[port];
  if (owner == ctx.worker) {
    ctx.egress[port]->enqueue(m, ctx);
    return true;
  }
  if (ctx.sb) [[unlikely]]
    charge_before_handoff(m, ctx);
  ctx.handoff[owner].push(m);
  return false;
}

class TmEnqueue final : public StageBase<TmEnqueue> {
 public:
  static constexpr std::string_view kName = "tm_enqueue";
  static constexpr std::array<std::string_view, 0> kNext = {};
  enum Ctr : uint8_t { Local, Handoff };
  static constexpr std::array<std::string_view, 2> kCounters = {"local", "handoff"};

  explicit TmEnqueue(const StageEnv&) {}
  void process(Burst& in, uint8_t* next, WorkerContext& ctx) override;
};

}  // namespace rs
