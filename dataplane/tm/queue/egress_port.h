// The egress half of a switch port: 8 priority queues over the shared buffer, ECN/WRED at
// enqueue, PFC pause timers per priority (received PAUSE makes a queue ineligible), the
// scheduler (strict queues first, DWRR among the rest), the shaper at the port's link rate,
// and the PFC generator and watchdog of the same physical port. Owned by exactly one worker;
// others hand packets over through rings.
#pragma once
#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <memory>

#include "dataplane/core/counter.h"
#include "dataplane/core/drop_reason.h"
#include "dataplane/core/worker_context.h"
#include "dataplane/tm/buffer/shared_buffer.h"
#include "dataplane/tm/pfc/pfc_frame.h"
#include "dataplane/tm/pfc/pfc_generator.h"
#include "dataplane/tm/pfc/pfc_watchdog.h"
#include "dataplane/tm/ecn/wred.h"
#include "dataplane/tm/sched/dwrr.h"
#include "dataplane/tm/sched/strict_priority.h"
#include "dataplane/tm/queue/load_view.h"
#include "dataplane/tm/queue/packet_fifo.h"
#include "dataplane/tm/queue/queue_config.h"
#include "dataplane/tm/queue/shaper.h"

namespace rs {

class Port;

struct QueueCounters {
  Counter enq_packets, enq_bytes;
  Counter deq_packets, deq_bytes;
  Counter depth_packets, depth_bytes;  // current; written by the owner after each change
  Counter peak_packets, peak_bytes;
  Counter ecn_marked;                  // CE set at enqueue by the WRED/ECN law
  Counter paused_ns;                   // closed pause intervals (received PFC/PAUSE)
  Counter storms_detected, storms_restored;  // PFC watchdog
  Counter drops[kNumDropReasons];
};

// Received MAC control frames, per priority.
struct PfcRxCounters {
  std::array<Counter, 8> xoff;  // PFC frames with this priority enabled and a non-zero time
  std::array<Counter, 8> xon;   // ... with time 0
  Counter pause;                // 802.3x PAUSE frames
  Counter ignored;              // enabled only priorities that are not lossless here
  std::array<Counter, 8> quanta;  // the pause time last received per priority (P4 register pfc_rx_quanta)
};

class EgressPort {
 public:
  // Without an MMU the port gets a private default buffer (tests of the scheduler alone).
  EgressPort(uint16_t port_id, Port* port, const EgressConfig& cfg, uint64_t now_ns);
  // In a switch: the shared buffer, the owner worker's usage row, this port's lossless
  // settings and the pool PFC frames are built from.
  EgressPort(uint16_t port_id, Port* port, const EgressConfig& cfg, uint64_t now_ns, SharedBuffer* sb,
             uint16_t owner, const PortLosslessConfig& lossless, rte_mempool* pool);
  ~EgressPort();

  // Takes ownership: queues the packet (returns None) or drops it with a counted reason (and
  // returns it). Inline: it runs once per packet, so it touches only owner-private fields; the
  // shared counters are published once per transmit() (or by publish_counters()).
  [[gnu::always_inline]] DropReason enqueue(rte_mbuf* m, WorkerContext& ctx) {
    const int q = meta(m).queue & 7;
    // Lossless PGs, WRED, dynamic thresholds, a pool that can fill or a watchdog action: the
    // full admission. Otherwise (plain lossy queues) only the queue's own limits apply.
    if (full_admission_) [[unlikely]]
      return enqueue_full(m, q, ctx);
    PacketFifo& f = q_[q];
    const uint32_t len = m->pkt_len;
    if (!f.fits(len)) [[unlikely]] {
      const DropReason r = f.packets() >= f.limit_packets() ? DropReason::TailDropPackets : DropReason::TailDropBytes;
      qc_[q].drops[static_cast<std::size_t>(r)].inc();
      ctx.drop(m, r, id_);
      return r;
    }
    // admit() without what this mode cannot need: no queue is admitted by its cells
    // (cells_mask_ puts a port in full admission), and the pool cannot fill, so its usage only
    // feeds reports: the FIFO sums the cells and the pool learns them once per transmit
    // (settle_cells).
    f.push(m, len);
    nonempty_mask_ |= static_cast<uint8_t>(1u << q);
    return DropReason::None;
  }
  const PacketFifo& fifo(int q) const { return q_[q]; }  // what is queued, for tests
  // Copies the owner's figures of changed queues into the counters readers see. The owner
  // calls it at the end of every transmit(), so readers are at most one worker loop behind.
  void publish_counters();
  // Sends what the scheduler and shaper allow at `now`; returns packets handed to the port.
  uint16_t transmit(WorkerContext& ctx);
  // Drops everything still queued (stop/shutdown), counted under `reason`.
  void flush(WorkerContext& ctx, DropReason reason);

  // XOFF edge check for one of this port's ingress PGs (owner worker only).
  void check_xoff(uint8_t pg, uint64_t now) {
    if (pfc_.needs_xoff(pg, sb_->pg_level(id_, pg), sb_->pg(id_, pg).xoff)) pfc_.evaluate(*sb_, now);
  }
  // A MAC control frame received on this port (from the mac_control stage).
  void on_pause_frame(const PauseFrame& f, uint64_t now);
  // PFC watchdog, from the owner's housekeeping every poll interval.
  void watchdog_tick(WorkerContext& ctx);
  // Stop or reconfiguration: every storm ends (and is counted restored) before new settings.
  void set_pfcwd(const PfcwdConfig& cfg, WorkerContext& ctx);

  // Run-time settings (the control plane's port and buffer operations). The control thread
  // offers a block; the owner takes it between bursts at its next poll (apply_pending: one
  // relaxed load when nothing is offered), swaps in the new limits, scheduler, shaper rate,
  // WRED, thresholds, PFC timing and watchdog settings, and hands the block back with what
  // it replaced (a queue's old ring), which the control thread frees. Queued packets stay:
  // a lowered limit refuses arrivals until the queue drains below it.
  struct Settings {
    EgressConfig egress;
    PortLosslessConfig lossless;
    PfcwdConfig pfcwd;
    rte_ether_addr mac{};  // the port's own MAC: its PFC frames' source
    LoadViewConfig load_view;  // how its quality band is quantised
    std::array<rte_mbuf**, 8> slots{};  // a larger ring for a queue whose packet limit outgrew its own
    std::array<uint32_t, 8> capacity{};
  };
  // Control thread. offer() returns false, changing nothing, while an earlier offer is still
  // pending, else frees what the owner handed back and offers; applied() is true once taken.
  bool offer(std::unique_ptr<Settings> s);
  bool applied() const { return pending_.load(std::memory_order_acquire) == nullptr; }
  void collect();
  // Owner worker, once per poll.
  void apply_pending(WorkerContext& ctx) {
    if (pending_.load(std::memory_order_relaxed)) [[unlikely]]
      apply(ctx);
  }

  uint16_t id() const { return id_; }
  const QueueCounters& queue(int q) const { return qc_[q]; }
  uint64_t queued_packets() const;
  const EgressConfig& config() const { return cfg_; }
  const PortLosslessConfig& lossless() const { return lcfg_; }
  const PfcwdConfig& pfcwd() const { return pfcwd_; }
  void set_load_view(LoadView* load) {
    load_ = load;
    lv_ = load->config();
  }
  const PfcGenerator& pfc_gen() const { return pfc_; }
  const PfcRxCounters& pfc_rx() const { return rx_; }
  const SharedBuffer& buffer() const { return *sb_; }
  bool paused(int q) const { return paused_pub_.get() & (1u << q); }
  bool in_storm(int q) const { return wd_[q].in_storm(); }

 private:
  int pick(uint8_t nonempty);
  DropReason enqueue_full(rte_mbuf* m, int q, WorkerContext& ctx);
  // Queues an admitted packet and charges its cells. Only what must be per packet: the peak
  // depth is taken where depth stops growing (note_peaks), the port's total for the
  // adaptive-routing view is summed when published, and so are the enqueue counts (what left
  // plus what is still queued: a queue only grows here).
  void admit(rte_mbuf* m, int q, uint32_t len, uint32_t cells) {
    const uint8_t qbit = static_cast<uint8_t>(1u << q);
    q_[q].push(m, len);
    nonempty_mask_ |= qbit;  // and so published (publish_counters)
    use_->used_bytes.add(cells);  // the FIFO sums the queue's own cells
  }
  // Depth only grows between dequeues: called before each dequeue and each publication.
  void note_peaks(uint8_t queues) {
    for (; queues; queues &= static_cast<uint8_t>(queues - 1)) {
      const int q = __builtin_ctz(queues);
      QueueStats& st = qs_[q];
      st.peak_packets = std::max<uint64_t>(st.peak_packets, q_[q].packets());
      st.peak_bytes = std::max(st.peak_bytes, q_[q].bytes());
    }
  }
  // In the lossy mode the pool's usage follows the FIFOs' own cell sums, brought up to date
  // before anything reads or lowers it: what the port's queues hold now against what the pool
  // was last told (an empty queue holds none, so only the non-empty ones are summed).
  uint64_t queued_cells() const {
    uint64_t sum = 0;
    for (uint8_t bits = nonempty_mask_; bits; bits &= static_cast<uint8_t>(bits - 1)) sum += q_[__builtin_ctz(bits)].cells();
    return sum;
  }
  void settle_cells() {
    if (full_admission_) return;  // admit() and release() keep the pool exact
    const uint64_t now = queued_cells();
    if (now != told_cells_) {
      use_->used_bytes.add(now - told_cells_);  // modular: a fall is added as its complement
      told_cells_ = now;
    }
  }
  void update_admission() {
    settle_cells();
    full_admission_ = track_pg_ || wred_mask_ || cells_mask_ || wd_drop_mask_ || sb_->pool_can_fill();
    told_cells_ = queued_cells();  // the pool holds them, whichever mode counted them
  }
  // Lossy admission by the queue's own limit: bytes for a static limit; for SONiC's dynamic
  // threshold the queue's cells against alpha = 2^dynamic_th of the free shared pool, both in
  // the pool's unit, as an ASIC compares them.
  bool over_limit(int q, uint32_t len, uint32_t cells) const {
    const uint64_t queued = q_[q].cells();
    if (queued + cells <= lcfg_.reserved[q]) return false;  // within the queue's own `size`
    if (!(dyn_mask_ & (1u << q))) return q_[q].bytes() + len > cfg_.limits[q].bytes;
    const uint64_t free = sb_->free_shared();
    const int8_t dt = lcfg_.dynamic_th[q];
    return queued + cells > (dt >= 0 ? free << dt : free >> -dt);
  }
  // Gives packets' cells back to the pool and their PGs.
  void release(rte_mbuf* const* pkts, uint16_t n);
  void release_pgs(rte_mbuf* const* pkts, uint16_t n);  // the PG half of release()
  void unpause(int q, uint64_t at);
  void expire_pauses(uint64_t now);
  void drop_queue(int q, WorkerContext& ctx, DropReason reason);
  void apply_storm(int q, bool start, WorkerContext& ctx);
  void init(const EgressConfig& cfg, uint64_t now_ns);
  void apply(WorkerContext& ctx);
  std::atomic<Settings*> pending_{nullptr};  // offered, not yet taken
  std::atomic<Settings*> done_{nullptr};     // taken: what it replaced, for the control thread

  uint16_t id_;
  Port* port_;
  EgressConfig cfg_;
  std::unique_ptr<SharedBuffer> own_sb_;  // only without a switch
  SharedBuffer* sb_ = nullptr;
  SharedBuffer::WorkerUsage* use_ = nullptr;
  uint64_t told_cells_ = 0;  // lossy mode: the queued cells the pool has been told of (settle_cells)
  uint32_t cell_mask_ = 0;  // sb_'s
  bool track_pg_ = false;  // any lossless PG in the switch: account per (ingress port, PG)
  bool full_admission_ = true;
  PortLosslessConfig lcfg_;
  PfcwdConfig pfcwd_;
  std::array<PacketFifo, 8> q_;  // by value: one indirection less per packet
  std::array<QueueCounters, 8> qc_;
  struct QueueStats {
    uint64_t deq_packets = 0, deq_bytes = 0, peak_packets = 0, peak_bytes = 0, ecn_marked = 0;
    uint64_t flushed_packets = 0, flushed_bytes = 0;  // left by drop_queue, not by the scheduler
  };
  std::array<QueueStats, 8> qs_{};  // owner-private; published by publish_counters()
  uint8_t dirty_ = 0;  // queues emptied or counted since the last publication (nonempty ones always are)
  uint8_t strict_mask_ = 0;
  uint8_t paused_mask_ = 0;    // PFC pause lands here (a paused queue is ineligible)
  uint8_t nonempty_mask_ = 0;  // kept per push/pop so the scheduler never scans 8 queues
  uint8_t wred_mask_ = 0;      // queues with a WRED/ECN profile
  uint8_t dyn_mask_ = 0;       // queues with a dynamic threshold
  uint8_t cells_mask_ = 0;     // queues admitted by their cells (dynamic threshold or `size`)
  uint8_t lossless_q_ = 0;     // queues a lossless priority pauses (watched by the watchdog)
  uint8_t wd_drop_mask_ = 0;   // watchdog (drop): queue flushed, arrivals dropped
  uint8_t ignore_pause_ = 0;   // watchdog (drop, forward): received PAUSE ignored
  std::array<int8_t, 8> q_prio_{};         // queue -> the lossless priority pausing it, -1 none
  std::array<uint64_t, 8> pause_until_{};  // by queue
  std::array<uint64_t, 8> pause_start_{};
  std::array<uint64_t, 8> stalled_since_{};  // paused and holding packets since (0: not)
  std::array<uint64_t, 8> last_xoff_{};      // by priority: last XOFF received
  std::array<PfcWatchdogQueue, 8> wd_{};
  Counter paused_pub_;
  Dwrr dwrr_;
  Shaper shaper_;
  PfcGenerator pfc_;
  PfcRxCounters rx_;
  LoadView* load_ = nullptr;
  LoadViewConfig lv_;  // the owner's copy (run-time changes come with its settings)
  // The tx-rate EWMA's last sample: when, and the bytes dequeued by then.
  uint64_t rate_ns_ = 0, rate_bytes_ = 0;
  double rate_bps_ = 0;
  uint64_t now_ns_ = 0;  // the last transmit's time (publish_counters has none of its own)
  void publish_load();
};

}  // namespace rs
