// The shared buffer (MMU): one pool of cells for the whole switch, per (ingress port, priority
// group) accounting for PFC and lossless admission, and the free-pool figure behind dynamic
// queue thresholds. Usage is written only by the worker that owns the egress queue a packet
// sits in (single writer per worker row) and summed across workers on read, like every
// other counter; readers never write a worker's lines.
#pragma once
#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "dataplane/core/counter.h"
#include "dataplane/core/packet_meta.h"
#include "dataplane/core/rcu_snapshot.h"
#include "dataplane/core/types.h"
#include "dataplane/tm/buffer/mmu_config.h"

namespace rs {

class SharedBuffer {
 public:
  struct alignas(64) WorkerUsage {
    Counter used_bytes;                                // cell-rounded, all queues this worker owns
    std::array<std::array<Counter, 8>, kMaxPorts> pg;  // by ingress port and PG, cell-rounded
  };

  // `ports` is indexed by port id. `static_limits` is every queue's static byte limit summed
  // (cell rounding included) and `any_dynamic` whether some queue has a dynamic threshold:
  // a pool of size 0 is sized to hold them plus the reservations, and lossy admission looks
  // at the pool only when it can fill. Throws std::runtime_error when the reservations do not
  // fit in the pool (the loader rejects that first; tests build directly).
  SharedBuffer(const MmuConfig& cfg, const std::vector<PortLosslessConfig>& ports, uint16_t workers,
               uint64_t static_limits = 0, bool any_dynamic = false);

  // Bytes a packet really occupies: whole cells.
  uint32_t charge(uint32_t len) const { return charge(len, cell_mask_); }
  static uint32_t charge(uint32_t len, uint32_t cell_mask) { return (len + cell_mask) & ~cell_mask; }
  uint32_t cell_mask() const { return cell_mask_; }

  const MmuConfig& config() const { return cfg_; }
  const PgSettings& pg(uint16_t port, uint8_t pg) const { return pgs_.load()->pg[port][pg]; }
  uint8_t lossless_pgs(uint16_t port) const { return lossless_[port]; }
  bool any_lossless() const { return any_lossless_; }
  // The pool minus every lossless PG's reserved headroom: what lossy traffic and the
  // below-XOFF part of lossless traffic share.
  uint64_t shared_size() const { return shared_size_.load(std::memory_order_relaxed); }
  uint64_t headroom_reserved() const { return headroom_total_; }
  uint64_t queue_reserved() const { return reserved_total_; }

  // Whether lossy admission must look at the pool at all: not when every static queue limit
  // together fits in the shared part and no queue uses a dynamic threshold (the usual lab
  // setup), which keeps a cross-worker sum off the per-packet path.
  bool pool_can_fill() const { return pool_can_fill_.load(std::memory_order_relaxed); }

  // Run time (the control thread): new PG thresholds and headroom, queue reservations, pool
  // size, watchdog settings, the split of the pool recomputed. Which PGs are lossless stays
  // (the packets in the buffer were accounted by it): ports[p].pg[g].lossless must be as
  // before. The PG table is published under RCU (set_qsbr; reclaim() frees the old ones once
  // no worker can see them). Throws std::runtime_error, changing nothing, when the
  // reservations do not fit in the pool.
  void reconfigure(const MmuConfig& cfg, const std::vector<PortLosslessConfig>& ports, uint64_t static_limits, bool any_dynamic);
  void set_qsbr(rte_rcu_qsbr* qsbr) { pgs_.set_qsbr(qsbr); }
  void reclaim() { pgs_.reclaim(); }
  // The ingress priority group a packet is charged to.
  uint8_t pg_of(const PacketMeta& pm) const { return cfg_.tc_to_pg[pm.tc & 7]; }

  WorkerUsage& usage(uint16_t worker) { return usage_[worker]; }
  uint64_t used() const {
    uint64_t s = 0;
    for (uint16_t w = 0; w < workers_; ++w) s += usage_[w].used_bytes.get();
    return s;
  }
  uint64_t free_shared() const {
    const uint64_t u = used(), shared = shared_size();
    return u >= shared ? 0 : shared - u;
  }
  uint64_t pg_level(uint16_t port, uint8_t pg) const {
    uint64_t s = 0;
    for (uint16_t w = 0; w < workers_; ++w) s += usage_[w].pg[port][pg].get();
    return s;
  }

  // PGs whose ingress the PFC watchdog drops (action drop): set by the port's owner, read by
  // every egress owner at enqueue.
  uint8_t wd_dropping(uint16_t port) const { return wd_drop_[port].load(std::memory_order_relaxed); }
  void set_wd_dropping(uint16_t port, uint8_t mask) { wd_drop_[port].store(mask, std::memory_order_relaxed); }

 private:
  MmuConfig cfg_;
  uint32_t cell_mask_;
  uint16_t workers_;
  struct PgTable {
    std::array<std::array<PgSettings, 8>, kMaxPorts> pg{};
  };
  // The split of the pool for `ports`: fills totals and the table, throws when it does not fit.
  struct Layout {
    uint64_t pool = 0, headroom = 0, reserved = 0;
    std::unique_ptr<PgTable> table;
  };
  static Layout layout(const MmuConfig& cfg, const std::vector<PortLosslessConfig>& ports, uint64_t static_limits);

  bool any_lossless_ = false;
  std::atomic<bool> pool_can_fill_{true};
  std::atomic<uint64_t> shared_size_{0};
  uint64_t headroom_total_ = 0;
  uint64_t reserved_total_ = 0;
  RcuSnapshot<PgTable> pgs_;
  std::array<uint8_t, kMaxPorts> lossless_{};
  std::array<std::atomic<uint8_t>, kMaxPorts> wd_drop_{};
  std::vector<WorkerUsage> usage_;
};

}  // namespace rs
