#include "dataplane/switch/worker.h"

#include <rte_rcu_qsbr.h>

#include <algorithm>

#include "dataplane/ports/capture_tap.h"
#include "dataplane/ports/port.h"
#include "dataplane/ports/port_mirror.h"
#include "dataplane/tm/queue/load_view.h"
#include "dataplane/tm/queue/egress_port.h"

namespace rs {

Worker::Worker(uint16_t id_, const PipelineSpec& spec, const StageEnv& env, uint32_t seed)
    : id(id_), pipeline(spec, env) {
  nexthop_counters = std::make_unique<NexthopCounters[]>(kMaxNexthops);
  ctx.worker = id;
  ctx.counters = &counters;
  ctx.nexthop_counters = nexthop_counters.get();
  ctx.egress = egress_by_port;
  ctx.handoff = handoff_;
  ctx.outbox = outbox;
  ctx.tracer = &tracer;
  ctx.rng = FastRng(seed * 7919u + id_ + 1);
  for (Held& h : held_) h.pkts = std::make_unique<rte_mbuf*[]>(kHeld);
}

void Worker::turn_back(uint16_t dest, rte_mbuf* m) {
  PacketMeta& pm = meta(m);
  Held& h = held_[dest];
  if ((pm.flags & meta_flag::kPgCharged) && h.n < kHeld) {
    h.pkts[h.n++] = m;
    counters.handoff_held.inc();
    return;
  }
  if (pm.flags & meta_flag::kPgCharged)  // charged by the enqueue step on this worker: give it back
    ctx.sb->usage(id).pg[pm.in_port][ctx.sb->pg_of(pm)].sub(ctx.sb->charge(m->pkt_len));
  ctx.drop_before_queue(m, DropReason::HandoffFull, pm.out_port);
}

void Worker::flush_handoff() {
  // Only the workers there are (inbox holds a ring from each other one): each idle handoff
  // burst checked is a cache line read per rx burst.
  const auto workers = static_cast<uint16_t>(inbox.size() + 1);
  uint32_t held = 0;
  for (uint16_t w = 0; w < workers; ++w) {
    Burst& b = handoff_[w];
    Held& h = held_[w];
    if (b.empty() && h.n == 0) continue;
    if (h.n) [[unlikely]] {
      const unsigned sent = rte_ring_sp_enqueue_burst(outbox[w], reinterpret_cast<void* const*>(h.pkts.get()), h.n, nullptr);
      std::copy(h.pkts.get() + sent, h.pkts.get() + h.n, h.pkts.get());
      h.n -= sent;
    }
    // Newer packets go only behind the held ones, so a flow keeps its order.
    const unsigned done =
        h.n ? 0 : rte_ring_sp_enqueue_burst(outbox[w], reinterpret_cast<void* const*>(b.pkts), b.n, nullptr);
    for (unsigned i = done; i < b.n; ++i) turn_back(w, b.pkts[i]);
    b.clear();
    held += h.n;
  }
  held_now_.store(held, std::memory_order_relaxed);
}

void Worker::poll(uint64_t now_ns) {
  ctx.now_ns = now_ns;
  // One snapshot per loop: every stage of every burst in this loop sees the same tables.
  ctx.fib = fib->load();
  if (classify) ctx.classify = classify->load();
  if (port_macs) ctx.port_mac = port_macs->load()->mac.data();
  if (vlans) ctx.vlans = vlans->load();
  if (punt_policy) {
    const PuntPolicy* p = punt_policy->load();
    ctx.unreachable_ports = p->unreachable_ports;
    ctx.copp_rate = p->rate.data();
  }
  if (const uint32_t seq = trace_req.seq.load(std::memory_order_acquire); seq != trace_seen_) [[unlikely]] {
    const uint32_t first = trace_req.first.load(std::memory_order_relaxed), every = trace_req.every.load(std::memory_order_relaxed);
    if (trace_req.keep.load(std::memory_order_relaxed)) tracer.configure(first, every);
    else tracer.restart(first, every);
    // Busy before seen: the control thread must not take a restarted tracer for a finished one.
    trace_idle_ = !tracer.active();
    trace_req.idle.store(trace_idle_, std::memory_order_relaxed);
    trace_seen_ = seq;
    trace_req.seen.store(seq, std::memory_order_release);
  }
  // Run-time port settings the control plane offered (one relaxed load a port when none).
  for (EgressPort* e : tx_ports) e->apply_pending(ctx);
  counters.loops.inc();
  Burst b;
  const uint64_t up = ctx.load ? ctx.load->up_mask() : ~uint64_t{0};
  for (Port* port : rx_ports) {
    if (!((up >> (port->id & 63)) & 1)) [[unlikely]] {
      // A link that is down receives nothing: what its port still delivers is lost with it,
      // unparsed, so of no class (its metadata is an earlier packet's): never a lossless drop.
      const uint16_t n = port->rx_burst(b.pkts, kBurst, now_ns);
      counters.port_rx_pkts[port->id].add(n);
      for (uint16_t i = 0; i < n; ++i) {
        counters.port_rx_bytes[port->id].add(b.pkts[i]->pkt_len);
        ctx.drop(b.pkts[i], DropReason::LinkDown, port->id);
      }
      continue;
    }
    // A busy port gets a few bursts per loop (as l3fwd drains its rx ring), so each egress
    // transmit below sends more than a handful of packets per call.
    for (int k = 0; k < kRxBurstsPerPoll; ++k) {
      const uint16_t n = port->rx_burst(b.pkts, kBurst, now_ns);
      if (n == 0) break;
      b.n = n;
      counters.rx_bursts.inc();
      uint64_t bytes = 0;
#pragma GCC unroll 4
      for (uint16_t i = 0; i < n; ++i) bytes += b.pkts[i]->pkt_len;
      counters.port_rx_pkts[port->id].add(n);
      counters.port_rx_bytes[port->id].add(bytes);
      if (ctx.tap && ctx.tap->on(port->id, CaptureTap::kRx)) [[unlikely]]
        ctx.tap->copy(id, port->id, CaptureTap::kRx, b.pkts, n, now_ns);
      if (ctx.mirror && ctx.mirror->on(port->id, PortMirror::kRx)) [[unlikely]]
        ctx.mirror->copy(ctx, port->id, PortMirror::kRx, b.pkts, n);
      ctx.rx_port = port->id;
      pipeline.run(b, ctx);  // consumes b
      flush_handoff();
      if (n < kBurst) break;
    }
  }
  if (held_now_.load(std::memory_order_relaxed)) [[unlikely]]
    flush_handoff();  // no rx burst flushed them this loop
  // As many bursts from each other worker as it may have received from one port this loop: a
  // ring drained slower than it fills turns packets back, however idle the owner is.
  for (rte_ring* r : inbox)
    for (int k = 0; k < kRxBurstsPerPoll; ++k) {
      rte_mbuf* pkts[kBurst];
      const unsigned n = rte_ring_sc_dequeue_burst(r, reinterpret_cast<void**>(pkts), kBurst, nullptr);
      for (unsigned i = 0; i < n; ++i) egress_by_port[meta(pkts[i]).out_port]->enqueue(pkts[i], ctx);
      if (n < kBurst) break;
    }
  if (inject) {
    rte_mbuf* pkts[kBurst];
    const unsigned n = rte_ring_sc_dequeue_burst(inject, reinterpret_cast<void**>(pkts), kBurst, nullptr);
    for (unsigned i = 0; i < n; ++i) egress_by_port[meta(pkts[i]).out_port]->enqueue(pkts[i], ctx);
  }
  // A port sends a burst per call; one that sent a whole burst may have more that its link
  // allows. It gets as many bursts as could have come in this loop, so that a port fed by
  // several rx bursts (say one input and one output port) keeps up instead of tail-dropping
  // what one burst a loop cannot carry.
  const int tx_bursts = kRxBurstsPerPoll * static_cast<int>(rx_ports.size() + inbox.size());
  for (EgressPort* e : tx_ports)
    for (int k = 0; k < tx_bursts && e->transmit(ctx) == kBurst; ++k) {
    }
  // Housekeeping on the worker's own loop but off the per-packet path: the PFC watchdog
  // looks at its queues once per poll interval.
  if (const uint64_t wd = wd_poll_ns.load(std::memory_order_relaxed); wd && now_ns >= next_wd_ns_) [[unlikely]] {
    for (EgressPort* e : tx_ports) e->watchdog_tick(ctx);
    next_wd_ns_ = next_wd_ns_ == 0 ? now_ns + wd : next_wd_ns_ + wd;
    if (next_wd_ns_ <= now_ns) next_wd_ns_ = now_ns + wd;  // fell behind: no burst of ticks
  }
  if (const bool idle = !tracer.active(); idle != trace_idle_) [[unlikely]] {
    trace_idle_ = idle;
    trace_req.idle.store(idle, std::memory_order_release);
  }
  if (qsbr) rte_rcu_qsbr_quiescent(qsbr, id);
}

}  // namespace rs
