// Hands each packet to the traffic manager of its egress port: straight into the port's
// priority queues when this worker owns that port, else into the burst for the owner's ring.
// Reads meta out_port, queue. Consumes every packet.
#pragma once
#include "dataplane/core/stage.h"

namespace rs {

class TmEnqueue final : public StageBase<TmEnqueue> {
 public:
  static constexpr std::string_view kName = "tm_enqueue";
  static constexpr std::array<std::string_view, 0> kNext = {};
  enum Ctr : uint8_t { Local, Handoff };
  static constexpr std::array<std::string_view, 2> kCounters = {"local", "handoff"};

  explicit TmEnqueue(const StageEnv&) {}
  void process(Burst& in, uint8_t* next, WorkerContext& ctx) override;

 private:
  static void charge_before_handoff(rte_mbuf* m, WorkerContext& ctx);
};

}  // namespace rs
