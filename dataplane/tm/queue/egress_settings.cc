// EgressPort's run-time settings: the control thread's offer and the owner's apply (see
// EgressPort::Settings). Nothing here allocates on the worker: a queue that needs a larger ring
// gets it in the offer, allocated by the control thread, and its old ring goes back in the same
// block to be freed there.
#include <rte_malloc.h>

#include "dataplane/tm/queue/egress_port.h"

namespace rs {
namespace {
void free_block(EgressPort::Settings* s) {
  if (!s) return;
  for (auto* slots : s->slots) rte_free(slots);
  delete s;
}
}  // namespace

void EgressPort::collect() { free_block(done_.exchange(nullptr, std::memory_order_acquire)); }

bool EgressPort::offer(std::unique_ptr<Settings> s) {
  // applied() first: the owner hands the last block back before it clears pending_, so once
  // pending_ reads empty, collect() is sure to see (and free) that block.
  if (!applied()) return false;
  collect();
  pending_.store(s.release(), std::memory_order_release);
  return true;
}

void EgressPort::apply(WorkerContext& ctx) {
  Settings* s = pending_.load(std::memory_order_acquire);
  settle_cells();  // the pool is told of what is queued under the old admission mode
  for (int q = 0; q < 8; ++q) {
    if (s->slots[q]) s->slots[q] = q_[q].adopt(s->slots[q], s->capacity[q]);  // the old ring goes back
    q_[q].set_limits(s->egress.limits[q].packets, s->egress.limits[q].bytes);
  }
  const bool sched_changed = s->egress.sched != cfg_.sched || s->egress.weights != cfg_.weights;
  const bool timing_changed = s->egress.speed_gbps != cfg_.speed_gbps || s->lossless.pfc_quanta != lcfg_.pfc_quanta;
  cfg_ = s->egress;
  // The PG half of lossless settings lives in the shared buffer (published there); the queue half here.
  lcfg_.dynamic_th = s->lossless.dynamic_th;
  lcfg_.reserved = s->lossless.reserved;
  lcfg_.wred = s->lossless.wred;
  lcfg_.pfc_quanta = s->lossless.pfc_quanta;
  strict_mask_ = wred_mask_ = dyn_mask_ = cells_mask_ = 0;
  for (int q = 0; q < 8; ++q) {
    const uint8_t bit = static_cast<uint8_t>(1u << q);
    if (cfg_.sched[q] == QueueSched::Strict) strict_mask_ |= bit;
    dwrr_.set_weight(q, cfg_.weights[q]);
    if (sched_changed) dwrr_.on_empty(q);  // no credit carried into a new discipline
    if (lcfg_.wred[q].enabled) wred_mask_ |= bit;
    if (lcfg_.dynamic_th[q] != kNoDynamicTh) dyn_mask_ |= bit;
    if (lcfg_.dynamic_th[q] != kNoDynamicTh || lcfg_.reserved[q]) cells_mask_ |= bit;
  }
  pfc_.set_source(s->mac);
  lv_ = s->load_view;
  if (timing_changed) {
    shaper_.configure(cfg_.speed_gbps, ctx.now_ns, cfg_.bucket_ns);
    pfc_.set_timing(cfg_.speed_gbps, lcfg_.pfc_quanta);
  }
  if (s->pfcwd.enabled != pfcwd_.enabled || s->pfcwd.action != pfcwd_.action || s->pfcwd.detection_ns != pfcwd_.detection_ns ||
      s->pfcwd.restoration_ns != pfcwd_.restoration_ns || s->pfcwd.poll_ns != pfcwd_.poll_ns)
    set_pfcwd(s->pfcwd, ctx);
  update_admission();
  done_.store(s, std::memory_order_release);
  pending_.store(nullptr, std::memory_order_release);
}

}  // namespace rs
