// The egress half of a switch port: 8 priority queues with per-queue limits, the scheduler
// (strict queues first, DWRR among the rest) and the shaper at the port's link rate. Owned by
// exactly one worker; others hand packets over through rings.
#pragma once
#include <array>
#include <cstdint>
#include <memory>

#include "dataplane/core/counter.h"
#include "dataplane/core/drop_reason.h"
#include "dataplane/core/worker_context.h"
#include "dataplane/policies/routing/routing_policy.h"
#include "dataplane/policies/sched/dwrr.h"
#include "dataplane/policies/sched/strict_priority.h"
#include "dataplane/queues/packet_fifo.h"
#include "dataplane/queues/queue_config.h"
#include "dataplane/queues/shaper.h"

namespace rs {

class Port;
struct PortLoad;

struct QueueCounters {
  Counter enq_packets, enq_bytes;
  Counter deq_packets, deq_bytes;
  Counter depth_packets, depth_bytes;  // current; written by the owner after each change
  Counter peak_packets, peak_bytes;
  Counter drops[kNumDropReasons];
};

class EgressPort {
 public:
  EgressPort(uint16_t port_id, Port* port, const EgressConfig& cfg, uint64_t now_ns);

  // Takes ownership: queues the packet or drops it with a counted reason. Inline: it runs once
  // per packet from tm_enqueue, so it touches only owner-private fields; the shared counters
  // are published once per transmit() (or by publish_counters()).
  void enqueue(rte_mbuf* m, WorkerContext& ctx) {
    const int q = meta(m).queue & 7;
    PacketFifo& f = *q_[q];
    DropReason r = DropReason::None;
    if (f.packets() >= cfg_.limits[q].packets) r = DropReason::TailDropPackets;
    else if (f.bytes() + m->pkt_len > cfg_.limits[q].bytes) r = DropReason::TailDropBytes;
    if (r != DropReason::None) [[unlikely]] {
      qc_[q].drops[static_cast<std::size_t>(r)].inc();
      ctx.drop(m, r, id_);
      return;
    }
    f.push(m);
    nonempty_mask_ |= static_cast<uint8_t>(1u << q);
    total_bytes_ += m->pkt_len;
    QueueStats& st = qs_[q];
    ++st.enq_packets;
    st.enq_bytes += m->pkt_len;
    // Depth only grows between transmits, so the peak is seen here.
    if (f.packets() > st.peak_packets) st.peak_packets = f.packets();
    if (f.bytes() > st.peak_bytes) st.peak_bytes = f.bytes();
    dirty_ |= static_cast<uint8_t>(1u << q);
  }
  // Copies the owner's figures of changed queues into the counters readers see. The owner
  // calls it at the end of every transmit(), so readers are at most one worker loop behind.
  void publish_counters();
  // Sends what the scheduler and shaper allow at `now`; returns packets handed to the port.
  uint16_t transmit(WorkerContext& ctx);
  // Drops everything still queued (stop/shutdown), counted under `reason`.
  void flush(WorkerContext& ctx, DropReason reason);

  uint16_t id() const { return id_; }
  const QueueCounters& queue(int q) const { return qc_[q]; }
  uint64_t queued_packets() const;
  const EgressConfig& config() const { return cfg_; }
  void set_load_view(PortLoad* load) { load_ = load; }

 private:
  int pick(uint8_t nonempty);


  uint16_t id_;
  Port* port_;
  EgressConfig cfg_;
  std::array<std::unique_ptr<PacketFifo>, 8> q_;
  std::array<QueueCounters, 8> qc_;
  struct QueueStats {
    uint64_t enq_packets = 0, enq_bytes = 0, deq_packets = 0, deq_bytes = 0, peak_packets = 0, peak_bytes = 0;
  };
  std::array<QueueStats, 8> qs_{};  // owner-private; published by publish_counters()
  uint8_t dirty_ = 0;                 // queues changed since the last publication
  uint8_t strict_mask_ = 0;
  uint8_t paused_mask_ = 0;    // PFC pause lands here (a paused queue is ineligible)
  uint8_t nonempty_mask_ = 0;  // kept per push/pop so the scheduler never scans 8 queues
  uint64_t total_bytes_ = 0;   // all queues, for the adaptive-routing load view
  Dwrr dwrr_;
  Shaper shaper_;
  PortLoad* load_ = nullptr;
};

}  // namespace rs
