#include "dataplane/queues/egress_port.h"

#include "dataplane/io/port.h"
#include "dataplane/policies/routing/routing_policy.h"

namespace rs {

EgressPort::EgressPort(uint16_t port_id, Port* port, const EgressConfig& cfg, uint64_t now_ns)
    : id_(port_id), port_(port), cfg_(cfg) {
  for (int q = 0; q < 8; ++q) {
    q_[q] = std::make_unique<PacketFifo>(cfg.limits[q].packets);
    if (cfg.sched[q] == QueueSched::Strict) strict_mask_ |= static_cast<uint8_t>(1u << q);
    dwrr_.set_weight(q, cfg.weights[q]);
  }
  shaper_.configure(cfg.speed_gbps, now_ns);
}

int EgressPort::pick(uint8_t nonempty) {
  const uint8_t eligible = nonempty & static_cast<uint8_t>(~paused_mask_);
  const int sq = StrictPriority::select(eligible & strict_mask_);
  if (sq >= 0) return sq;
  const uint8_t dw = eligible & static_cast<uint8_t>(~strict_mask_);
  return dwrr_.select_by(dw, [this](int q) { return q_[q]->front()->pkt_len; });
}

void EgressPort::publish_counters() {
  for (int q = 0; q < 8; ++q) {
    if (!(dirty_ & (1u << q))) continue;
    const QueueStats& st = qs_[q];
    QueueCounters& c = qc_[q];
    c.enq_packets.set(st.enq_packets);
    c.enq_bytes.set(st.enq_bytes);
    c.deq_packets.set(st.deq_packets);
    c.deq_bytes.set(st.deq_bytes);
    c.peak_packets.set(st.peak_packets);
    c.peak_bytes.set(st.peak_bytes);
    c.depth_packets.set(q_[q]->packets());
    c.depth_bytes.set(q_[q]->bytes());
  }
  if (load_) load_->queued_bytes[id_].set(total_bytes_);
  dirty_ = 0;
}

uint16_t EgressPort::transmit(WorkerContext& ctx) {
  const uint8_t eligible = nonempty_mask_ & static_cast<uint8_t>(~paused_mask_);
  // An idle (or paused) port still stamps the shaper, so the next backlog starts fresh.
  shaper_.refill(ctx.now_ns, eligible != 0);
  if (!nonempty_mask_) {
    if (dirty_) publish_counters();
    return 0;
  }
  rte_mbuf* out[kBurst];
  uint32_t deq_bytes[8] = {};
  uint16_t deq_pkts[8] = {};
  uint16_t n = 0;
  uint64_t bytes = 0;
  if (eligible && (eligible & (eligible - 1)) == 0) {
    // One queue has traffic (the usual case on a port): no arbitration per packet. A DWRR
    // queue served alone starts the next contended round with no carried deficit.
    const int q = __builtin_ctz(eligible);
    PacketFifo& f = *q_[q];
    while (n < kBurst && shaper_.can_send() && !f.empty()) {
      rte_mbuf* m = f.pop();
      shaper_.consume(m->pkt_len);
      bytes += m->pkt_len;
      out[n++] = m;
    }
    deq_pkts[q] = n;
    deq_bytes[q] = static_cast<uint32_t>(bytes);
    if (f.empty()) nonempty_mask_ &= static_cast<uint8_t>(~(1u << q));
    if (!(strict_mask_ & (1u << q))) dwrr_.on_empty(q);
  } else {
    while (n < kBurst && shaper_.can_send()) {
      const int q = pick(nonempty_mask_);
      if (q < 0) break;
      rte_mbuf* m = q_[q]->pop();
      const uint32_t len = m->pkt_len;
      const bool now_empty = q_[q]->empty();
      if (now_empty) nonempty_mask_ &= static_cast<uint8_t>(~(1u << q));
      if (!(strict_mask_ & (1u << q))) dwrr_.on_sent(q, len, now_empty);
      shaper_.consume(len);
      ++deq_pkts[q];
      deq_bytes[q] += len;
      bytes += len;
      out[n++] = m;
    }
  }
  if (n == 0) {
    if (dirty_) publish_counters();
    return 0;
  }
  total_bytes_ -= bytes;
  for (int q = 0; q < 8; ++q)
    if (deq_pkts[q]) {
      qs_[q].deq_packets += deq_pkts[q];
      qs_[q].deq_bytes += deq_bytes[q];
      dirty_ |= static_cast<uint8_t>(1u << q);
    }
  publish_counters();
  const uint16_t sent = port_->tx_burst(out, n, ctx.now_ns);
  for (uint16_t i = sent; i < n; ++i) {
    bytes -= out[i]->pkt_len;
    ctx.drop(out[i], DropReason::TxFull, id_);
  }
  ctx.counters->port_tx_pkts[id_].add(sent);
  ctx.counters->port_tx_bytes[id_].add(bytes);
  return sent;
}

void EgressPort::flush(WorkerContext& ctx, DropReason reason) {
  for (int q = 0; q < 8; ++q) {
    while (!q_[q]->empty()) {
      qc_[q].drops[static_cast<std::size_t>(reason)].inc();
      rte_mbuf* m = q_[q]->pop();
      total_bytes_ -= m->pkt_len;
      ctx.drop(m, reason, id_);
    }
    nonempty_mask_ &= static_cast<uint8_t>(~(1u << q));
    dwrr_.on_empty(q);
    dirty_ |= static_cast<uint8_t>(1u << q);
  }
  publish_counters();
}

uint64_t EgressPort::queued_packets() const {
  uint64_t n = 0;
  for (auto& c : qc_) n += c.depth_packets.get();
  return n;
}

}  // namespace rs
