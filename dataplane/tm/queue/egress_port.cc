#include "dataplane/tm/queue/egress_port.h"

#include "dataplane/ports/capture_tap.h"
#include "dataplane/ports/port.h"
#include "dataplane/ports/port_mirror.h"
#include "dataplane/routing/routing_policy.h"

namespace rs {

EgressPort::EgressPort(uint16_t port_id, Port* port, const EgressConfig& cfg, uint64_t now_ns)
    : id_(port_id), port_(port), cfg_(cfg) {
  std::vector<PortLosslessConfig> none(static_cast<std::size_t>(port_id) + 1);
  MmuConfig mc;
  mc.pool.size = uint64_t{1} << 40;  // no shared pool to speak of: the queue limits rule
  own_sb_ = std::make_unique<SharedBuffer>(mc, none, 1);
  sb_ = own_sb_.get();
  use_ = &sb_->usage(0);
  init(cfg, now_ns);
}

EgressPort::EgressPort(uint16_t port_id, Port* port, const EgressConfig& cfg, uint64_t now_ns, SharedBuffer* sb,
                       uint16_t owner, const PortLosslessConfig& lossless, rte_mempool* pool)
    : id_(port_id), port_(port), cfg_(cfg), sb_(sb), use_(&sb->usage(owner)), lcfg_(lossless) {
  pfcwd_ = sb->config().pfcwd;
  init(cfg, now_ns);
  pfc_.configure(port_id, port, pool, cfg.speed_gbps, lossless.pfc_quanta);
}

EgressPort::~EgressPort() = default;

void EgressPort::init(const EgressConfig& cfg, uint64_t now_ns) {
  track_pg_ = sb_->any_lossless();
  cell_mask_ = sb_->cell_mask();
  q_prio_.fill(-1);
  for (int q = 0; q < 8; ++q) {
    q_[q].reserve(cfg.limits[q].packets);
    q_[q].set_cell_mask(cell_mask_);
    q_[q].set_limits(cfg.limits[q].packets, cfg.limits[q].bytes);
    if (cfg.sched[q] == QueueSched::Strict) strict_mask_ |= static_cast<uint8_t>(1u << q);
    dwrr_.set_weight(q, cfg.weights[q]);
    if (lcfg_.wred[q].enabled) wred_mask_ |= static_cast<uint8_t>(1u << q);
    if (lcfg_.dynamic_th[q] != kNoDynamicTh) dyn_mask_ |= static_cast<uint8_t>(1u << q);
    if (lcfg_.dynamic_th[q] != kNoDynamicTh || lcfg_.reserved[q]) cells_mask_ |= static_cast<uint8_t>(1u << q);
  }
  const MmuConfig& mc = sb_->config();
  for (int p = 0; p < 8; ++p)
    if (mc.pfc_enable & (1u << p)) {
      const int q = mc.pfc_to_queue[p] & 7;
      lossless_q_ |= static_cast<uint8_t>(1u << q);
      q_prio_[q] = static_cast<int8_t>(p);
    }
  shaper_.configure(cfg.speed_gbps, now_ns, cfg.bucket_ns);
  update_admission();
}

DropReason EgressPort::enqueue_full(rte_mbuf* m, int q, WorkerContext& ctx) {
  PacketMeta& pm = meta(m);
  const uint8_t qbit = static_cast<uint8_t>(1u << q);
  PacketFifo& f = q_[q];
  const uint32_t len = m->pkt_len;
  const uint32_t cells = sb_->charge(len);
  const uint16_t in = pm.in_port;
  const uint8_t pg = sb_->pg_of(pm);
  const bool copy = pm.flags & meta_flag::kNoPg;  // a mirror copy or the control plane's packet: charged to no PG
  const bool lossless = !copy && (sb_->lossless_pgs(in) & (1u << pg));
  const bool precharged = pm.flags & meta_flag::kPgCharged;
  DropReason r = DropReason::None;
  if (f.packets() >= cfg_.limits[q].packets) {
    r = DropReason::TailDropPackets;  // the queue's slots: a hard limit even when lossless
  } else if (wd_drop_mask_ & qbit) {
    r = DropReason::PfcWatchdog;
  } else if (lossless) {
    // Lossless: no egress byte limit; the ingress PG is bounded by XOFF + its headroom.
    const PgSettings& s = sb_->pg(in, pg);
    if (sb_->wd_dropping(in) & (1u << pg)) r = DropReason::PfcWatchdog;
    else if (sb_->pg_level(in, pg) + (precharged ? 0 : cells) > s.xoff + s.headroom) r = DropReason::HeadroomExhausted;
  } else if (over_limit(q, len, cells)) {
    r = (dyn_mask_ & qbit) ? DropReason::DynamicThreshold : DropReason::TailDropBytes;
  } else if (sb_->pool_can_fill() && f.cells() + cells > lcfg_.reserved[q] && sb_->used() + cells > sb_->shared_size()) {
    r = DropReason::SharedPoolFull;
  }
  if (r == DropReason::None && (wred_mask_ & qbit)) {
    const EcnVerdict v = wred_decide(lcfg_.wred[q], f.bytes(), pm.ecn, lossless, ctx.rng);
    if (v == EcnVerdict::Mark) {
      mark_ce(m, pm);
      ++qs_[q].ecn_marked;
    } else if (v == EcnVerdict::Drop) {
      r = DropReason::WredDrop;
    }
  }
  if (r != DropReason::None) {
    if (precharged) use_->pg[in][pg].sub(cells);
    qc_[q].drops[static_cast<std::size_t>(r)].inc();
    ctx.drop(m, r, id_);
    return r;
  }
  admit(m, q, len, cells);
  if (track_pg_ && !precharged && !copy) use_->pg[in][pg].add(cells);
  if ((paused_mask_ & qbit) && !stalled_since_[q]) stalled_since_[q] = ctx.now_ns | 1;
  // XOFF must not wait for the next loop: the ingress port's generator is checked now when
  // this worker owns it (otherwise its owner sees the level on its next loop).
  if (lossless && !precharged && ctx.port_owner && ctx.port_owner[in] == ctx.worker && ctx.egress[in])
    ctx.egress[in]->check_xoff(pg, ctx.now_ns);
  return DropReason::None;
}

int EgressPort::pick(uint8_t nonempty) {
  const uint8_t eligible = nonempty & static_cast<uint8_t>(~paused_mask_);
  const int sq = StrictPriority::select(eligible & strict_mask_);
  if (sq >= 0) return sq;
  const uint8_t dw = eligible & static_cast<uint8_t>(~strict_mask_);
  return dwrr_.select_by(dw, [this](int q) { return q_[q].front()->pkt_len; });
}

void EgressPort::publish_counters() {
  settle_cells();
  // Arrivals do not mark a queue dirty (one store less per packet): a queue holding packets
  // may have had some, so it is published too.
  const uint8_t changed = dirty_ | nonempty_mask_;
  note_peaks(changed);
  for (uint8_t bits = changed; bits; bits &= static_cast<uint8_t>(bits - 1)) {
    const int q = __builtin_ctz(bits);
    const QueueStats& st = qs_[q];
    QueueCounters& c = qc_[q];
    c.enq_packets.set(st.deq_packets + st.flushed_packets + q_[q].packets());
    c.enq_bytes.set(st.deq_bytes + st.flushed_bytes + q_[q].bytes());
    c.deq_packets.set(st.deq_packets);
    c.deq_bytes.set(st.deq_bytes);
    c.peak_packets.set(st.peak_packets);
    c.peak_bytes.set(st.peak_bytes);
    c.ecn_marked.set(st.ecn_marked);
    c.depth_packets.set(q_[q].packets());
    c.depth_bytes.set(q_[q].bytes());
  }
  if (load_) publish_load();
  dirty_ = 0;
}

void EgressPort::publish_load() {
  PortLoadRow& row = load_->row(id_);
  uint64_t total = 0;
  for (int q = 0; q < 8; ++q) {
    const uint64_t b = q_[q].bytes();
    total += b;
    if (row.queue_bytes[q].load(std::memory_order_relaxed) != b) row.queue_bytes[q].store(b, std::memory_order_relaxed);
  }
  row.port_bytes.store(total, std::memory_order_relaxed);
  const LoadViewConfig& lc = lv_;
  if (now_ns_ >= rate_ns_ + lc.rate_interval_ns) {
    uint64_t sent = 0;
    for (const auto& st : qs_) sent += st.deq_bytes;
    if (rate_ns_ != 0) {
      const double sample = static_cast<double>(sent - rate_bytes_) * 8e9 / static_cast<double>(now_ns_ - rate_ns_);
      rate_bps_ += lc.rate_weight * (sample - rate_bps_);
      row.tx_rate_bps.store(static_cast<uint64_t>(rate_bps_), std::memory_order_relaxed);
    }
    rate_ns_ = now_ns_;
    rate_bytes_ = sent;
  }
  const double link_bps = cfg_.speed_gbps * 1e9;
  const double pct = link_bps > 0 ? 100.0 * rate_bps_ / link_bps : 0;
  row.quality.store(LoadView::band(lv_, total, pct), std::memory_order_relaxed);
}

void EgressPort::release_pgs(rte_mbuf* const* pkts, uint16_t n) {
  for (uint16_t i = 0; i < n; ++i) {
    const PacketMeta& pm = meta(pkts[i]);
    if (pm.flags & meta_flag::kNoPg) continue;
    use_->pg[pm.in_port][sb_->pg_of(pm)].sub(sb_->charge(pkts[i]->pkt_len));
  }
}

void EgressPort::release(rte_mbuf* const* pkts, uint16_t n) {
  if (!full_admission_) {
    settle_cells();  // the packets have left their FIFO, and so its cell sum
    return;          // no PGs without full admission
  }
  uint64_t total = 0;
  for (uint16_t i = 0; i < n; ++i) total += sb_->charge(pkts[i]->pkt_len);
  use_->used_bytes.sub(total);
  if (track_pg_) release_pgs(pkts, n);
}

void EgressPort::unpause(int q, uint64_t at) {
  const uint8_t bit = static_cast<uint8_t>(1u << q);
  if (!(paused_mask_ & bit)) return;
  paused_mask_ &= static_cast<uint8_t>(~bit);
  qc_[q].paused_ns.add(at > pause_start_[q] ? at - pause_start_[q] : 0);
  stalled_since_[q] = 0;
  paused_pub_.set(paused_mask_);
}

void EgressPort::expire_pauses(uint64_t now) {
  for (uint8_t m = paused_mask_; m; m &= static_cast<uint8_t>(m - 1)) {
    const int q = __builtin_ctz(m);
    if (now >= pause_until_[q]) unpause(q, pause_until_[q]);
  }
}

void EgressPort::on_pause_frame(const PauseFrame& f, uint64_t now) {
  if (!f.pfc) rx_.pause.inc();
  const uint8_t lossless = sb_->config().pfc_enable;
  for (int p = 0; p < 8; ++p) {
    if (!(f.enable & (1u << p))) continue;
    rx_.quanta[p].set(f.quanta[p]);
    // 802.3x PAUSE stops the whole link; PFC only the priorities this switch runs lossless.
    int q;
    if (f.pfc) {
      if (!(lossless & (1u << p))) {
        rx_.ignored.inc();
        continue;
      }
      q = sb_->config().pfc_to_queue[p] & 7;
      (f.quanta[p] ? rx_.xoff[p] : rx_.xon[p]).inc();
    } else {
      q = p;
    }
    const uint8_t bit = static_cast<uint8_t>(1u << q);
    if (f.quanta[p] == 0) {
      unpause(q, now);  // XON resumes at once; it is never a pause, so never a storm
      continue;
    }
    last_xoff_[p] = now;
    if (ignore_pause_ & bit) continue;  // the watchdog took this queue out of PFC
    if (!(paused_mask_ & bit)) {
      paused_mask_ |= bit;
      pause_start_[q] = now;
      if (!q_[q].empty()) stalled_since_[q] = now | 1;
      paused_pub_.set(paused_mask_);
    }
    // A new frame restarts the timer (802.1Qbb), shorter or longer.
    pause_until_[q] = now + pause_quanta_to_ns(f.quanta[p], cfg_.speed_gbps);
  }
}

uint16_t EgressPort::transmit(WorkerContext& ctx) {
  now_ns_ = ctx.now_ns;
  // A link that is down sends nothing: what was queued for it is lost, as on a cut cable (the
  // routing policies stop choosing it from the next poll on).
  if (load_ && !load_->link_up(id_)) [[unlikely]] {
    if (nonempty_mask_) flush(ctx, DropReason::LinkDown);
    return 0;
  }
  settle_cells();
  if (paused_mask_) [[unlikely]]
    expire_pauses(ctx.now_ns);
  // This port's own ingress PGs: refresh or release PAUSE as their levels move.
  if (sb_->lossless_pgs(id_)) pfc_.evaluate(*sb_, ctx.now_ns);
  const uint8_t eligible = nonempty_mask_ & static_cast<uint8_t>(~paused_mask_);
  // An idle (or paused) port still stamps the shaper, so the next backlog starts fresh.
  shaper_.refill(ctx.now_ns, eligible != 0);
  if (!eligible) {
    if (dirty_ | nonempty_mask_) publish_counters();
    return 0;
  }
  note_peaks(eligible);
  rte_mbuf* out_buf[kBurst];
  rte_mbuf** out = out_buf;  // or the queue's own slots, when it goes out whole
  uint8_t served = 0;  // queues dequeued from
  uint16_t n = 0;
  uint64_t bytes = 0;
  // Cells leave with their packets: the FIFOs' sums before and after say how many.
  const uint64_t cells_before = queued_cells();
  if ((eligible & (eligible - 1)) == 0) {
    // One queue has traffic (the usual case on a port): no arbitration per packet. A DWRR
    // queue served alone starts the next contended round with no carried deficit.
    const int q = __builtin_ctz(eligible);
    PacketFifo& f = q_[q];
    static_assert(PacketFifo::kMinFrameNoFcs == kEthMinFrame - kEthFcs);
    if (shaper_.covers(f.bytes(), f.packets())) {
      // The link can take the whole queue (a fast port): no credit check per frame, and when
      // the queue goes out whole (it usually does) no pass over its packets at all: the FIFO
      // has their totals and the PMD gets its slots.
      PacketFifo::Taken t;
      uint64_t frames;  // bytes of each frame padded to the minimum frame
      if (rte_mbuf** all = f.take_all(kBurst, t)) [[likely]] {
        out = all;
        n = static_cast<uint16_t>(t.packets);
        bytes = t.bytes;
        frames = t.frame_bytes;
      } else {
        const uint64_t frames_before = f.frame_bytes();
        n = f.pop_upto(out, kBurst, bytes, [](uint32_t) {});
        frames = frames_before - f.frame_bytes();
      }
      shaper_.consume_wire(frames + uint64_t{n} * (kEthFcs + kEthPreambleIfg));  // sum of wire_bytes()
    } else {
      n = shaper_.spend([&](auto& more) { return f.pop_burst(out, kBurst, bytes, more); });
    }
    qs_[q].deq_packets += n;
    qs_[q].deq_bytes += bytes;
    served = static_cast<uint8_t>(1u << q);
    if (f.empty()) {
      nonempty_mask_ &= static_cast<uint8_t>(~(1u << q));
      f.rewind_if_empty();
    }
    if (!(strict_mask_ & (1u << q))) dwrr_.on_empty(q);
  } else {
    while (n < kBurst && shaper_.can_send()) {
      const int q = pick(nonempty_mask_);
      if (q < 0) break;
      rte_mbuf* m = q_[q].pop();
      const uint32_t len = m->pkt_len;
      const bool now_empty = q_[q].empty();
      if (now_empty) {
        nonempty_mask_ &= static_cast<uint8_t>(~(1u << q));
        q_[q].rewind_if_empty();
      }
      if (!(strict_mask_ & (1u << q))) dwrr_.on_sent(q, len, now_empty);
      shaper_.consume(len);
      ++qs_[q].deq_packets;
      qs_[q].deq_bytes += len;
      served |= static_cast<uint8_t>(1u << q);
      bytes += len;
      out[n++] = m;
    }
  }
  if (n == 0) {
    if (dirty_ | nonempty_mask_) publish_counters();
    return 0;
  }
  const uint64_t cells = cells_before - queued_cells();
  // The pool gets the cells back (and in the lossy mode knows it has: settle_cells); PGs
  // (lossless accounting) need each packet's ingress PG.
  use_->used_bytes.sub(cells);
  told_cells_ -= cells;
  if (track_pg_) release_pgs(out, n);
  dirty_ |= served;
  publish_counters();
  if (ctx.tap && ctx.tap->on(id_, CaptureTap::kTx)) [[unlikely]] ctx.tap->copy(ctx.worker, id_, CaptureTap::kTx, out, n, ctx.now_ns);
  if (ctx.mirror && ctx.mirror->on(id_, PortMirror::kTx)) [[unlikely]] ctx.mirror->copy(ctx, id_, PortMirror::kTx, out, n);
  const uint16_t sent = port_->tx_burst(out, n, ctx.now_ns);
  for (uint16_t i = sent; i < n; ++i) {
    bytes -= out[i]->pkt_len;
    ctx.drop(out[i], DropReason::TxFull, id_);
  }
  ctx.counters->port_tx_pkts[id_].add(sent);
  ctx.counters->port_tx_bytes[id_].add(bytes);
  return sent;
}

void EgressPort::drop_queue(int q, WorkerContext& ctx, DropReason reason) {
  note_peaks(static_cast<uint8_t>(1u << q));
  while (!q_[q].empty()) {
    qc_[q].drops[static_cast<std::size_t>(reason)].inc();
    rte_mbuf* m = q_[q].pop();
    ++qs_[q].flushed_packets;
    qs_[q].flushed_bytes += m->pkt_len;
    release(&m, 1);
    ctx.drop(m, reason, id_);
  }
  nonempty_mask_ &= static_cast<uint8_t>(~(1u << q));
  q_[q].rewind_if_empty();
  stalled_since_[q] = 0;
  dwrr_.on_empty(q);
  dirty_ |= static_cast<uint8_t>(1u << q);
}

void EgressPort::flush(WorkerContext& ctx, DropReason reason) {
  for (int q = 0; q < 8; ++q) drop_queue(q, ctx, reason);
  publish_counters();
}

void EgressPort::apply_storm(int q, bool start, WorkerContext& ctx) {
  const uint8_t bit = static_cast<uint8_t>(1u << q);
  const int p = q_prio_[q];
  const uint8_t pbit = static_cast<uint8_t>(1u << p);
  if (start) {
    qc_[q].storms_detected.inc();
    if (pfcwd_.action == PfcwdAction::Alert) return;
    ignore_pause_ |= bit;
    unpause(q, ctx.now_ns);
    if (pfcwd_.action == PfcwdAction::Drop) {
      // SONiC's drop: the stuck queue is emptied and stays empty, and this port stops asking
      // its peer to pause that priority (its ingress PG drops instead of filling up).
      wd_drop_mask_ |= bit;
      update_admission();
      drop_queue(q, ctx, DropReason::PfcWatchdog);
      sb_->set_wd_dropping(id_, static_cast<uint8_t>(sb_->wd_dropping(id_) | pbit));
      pfc_.set_suppressed(sb_->wd_dropping(id_), ctx.now_ns);
    }
  } else {
    qc_[q].storms_restored.inc();
    ignore_pause_ &= static_cast<uint8_t>(~bit);
    wd_drop_mask_ &= static_cast<uint8_t>(~bit);
    update_admission();
    if (sb_->wd_dropping(id_) & pbit) {
      sb_->set_wd_dropping(id_, static_cast<uint8_t>(sb_->wd_dropping(id_) & ~pbit));
      pfc_.set_suppressed(sb_->wd_dropping(id_), ctx.now_ns);
    }
  }
}

void EgressPort::watchdog_tick(WorkerContext& ctx) {
  if (!pfcwd_.enabled) return;
  if (paused_mask_) expire_pauses(ctx.now_ns);
  for (uint8_t m = lossless_q_; m; m &= static_cast<uint8_t>(m - 1)) {
    const int q = __builtin_ctz(m);
    const auto ev = wd_[q].tick(pfcwd_, ctx.now_ns, stalled_since_[q], last_xoff_[q_prio_[q]]);
    if (ev == PfcWatchdogQueue::Event::StormDetected) apply_storm(q, true, ctx);
    else if (ev == PfcWatchdogQueue::Event::StormRestored) apply_storm(q, false, ctx);
  }
  publish_counters();
}

void EgressPort::set_pfcwd(const PfcwdConfig& cfg, WorkerContext& ctx) {
  for (int q = 0; q < 8; ++q)
    if (wd_[q].reset(ctx.now_ns)) apply_storm(q, false, ctx);
  pfcwd_ = cfg;
}

uint64_t EgressPort::queued_packets() const {
  uint64_t n = 0;
  for (auto& c : qc_) n += c.depth_packets.get();
  return n;
}

}  // namespace rs
