#include "dataplane/ports/fault_port.h"

#include <algorithm>
#include <array>

#include "dataplane/tm/pfc/pfc_frame.h"

namespace rs {
namespace {
constexpr int kRxDir = 0;
constexpr int kTxDir = 1;
bool later(const auto& a, const auto& b) { return a.release_ns != b.release_ns ? a.release_ns > b.release_ns : a.seq > b.seq; }
}  // namespace

void FaultPort::HoldQueue::push(const Held& h) {
  heap.push_back(h);  // within the reserved capacity: the callers check full() first
  std::push_heap(heap.begin(), heap.end(), [](const Held& a, const Held& b) { return later(a, b); });
}

rte_mbuf* FaultPort::HoldQueue::pop() {
  std::pop_heap(heap.begin(), heap.end(), [](const Held& a, const Held& b) { return later(a, b); });
  rte_mbuf* m = heap.back().m;
  heap.pop_back();
  return m;
}

FaultPort::FaultPort(std::unique_ptr<Port> inner, const FaultSpec& spec, rte_mempool* pool, uint64_t seed)
    : inner_(std::move(inner)), spec_(spec), pool_(pool), rng_(seed) {
  name = inner_->name;
  mac = inner_->mac;
  speed_gbps = inner_->speed_gbps;
  id = inner_->id;
  for (auto& h : held_) h.heap.reserve(kHoldCapacity);
}

FaultPort::~FaultPort() { stop(); }

bool FaultPort::apply(int dir, rte_mbuf* m, uint64_t release) {
  Counters& c = c_[dir];
  if (draw(spec_.drop)) {
    rte_pktmbuf_free(m);
    c.dropped.inc();
    return false;
  }
  if (draw(spec_.corrupt) && m->data_len > 0) {
    const uint32_t len = m->data_len;
    const uint32_t off = spec_.corrupt_offset >= 0 ? std::min<uint32_t>(static_cast<uint32_t>(spec_.corrupt_offset), len - 1)
                                                   : rng_.next() % len;
    // XOR with a non-zero value: the byte always changes.
    rte_pktmbuf_mtod(m, uint8_t*)[off] ^= static_cast<uint8_t>(1 + rng_.next() % 255);
    c.corrupted.inc();
  }
  if (draw(spec_.duplicate)) {
    if (held_[dir].full()) {
      c.overflow.inc();
    } else if (rte_mbuf* d = rte_pktmbuf_copy(m, pool_, 0, UINT32_MAX)) {
      held_[dir].push({release, seq_++, d});
      c.duplicated.inc();
    } else {
      c.overflow.inc();  // no mbuf for the copy: the duplicate is not made
    }
  }
  return true;
}

uint16_t FaultPort::rx_burst(rte_mbuf** pkts, uint16_t n, uint64_t now_ns) {
  flush_tx(now_ns);  // delayed frames to the receiver leave even when the switch sends nothing new
  uint16_t got = 0;
  if (stuck(now_ns) && spec_.stuck_pfc && now_ns >= next_xoff_ns_ && n > 0) {
    // Refresh at half the pause time, as a NIC whose receive buffer never drains would.
    std::array<uint16_t, 8> q{};
    for (int p = 0; p < 8; ++p)
      if (spec_.stuck_pfc & (1u << p)) q[p] = spec_.stuck_quanta;
    const rte_ether_addr src{{0x02, 0x46, 0x41, 0x55, 0x4c, static_cast<uint8_t>(id)}};
    if (rte_mbuf* m = make_pfc_mbuf(pool_, src, spec_.stuck_pfc, q)) {
      pkts[got++] = m;
      stuck_pfc_.inc();
      next_xoff_ns_ = now_ns + std::max<uint64_t>(1, pause_quanta_to_ns(spec_.stuck_quanta, speed_gbps) / 2);
    }
  }
  HoldQueue& h = held_[kRxDir];
  // Held frames first: they arrived before anything the inner port has now.
  while (got < n && h.due(now_ns)) pkts[got++] = h.pop();
  if (got == n) return got;
  const uint16_t k = inner_->rx_burst(pkts + got, static_cast<uint16_t>(n - got), now_ns);
  if (!(spec_.direction & FaultSpec::kRx)) return static_cast<uint16_t>(got + k);
  const bool hold = spec_.delay_ns || spec_.jitter_ns;
  uint16_t out = got;
  for (uint16_t i = got; i < got + k; ++i) {
    rte_mbuf* m = pkts[i];
    const uint64_t release = hold ? release_at(now_ns) : now_ns;
    if (!apply(kRxDir, m, release)) continue;
    if (!hold) {
      pkts[out++] = m;
    } else if (h.full()) {
      rte_pktmbuf_free(m);
      c_[kRxDir].overflow.inc();
    } else {
      h.push({release, seq_++, m});
      c_[kRxDir].delayed.inc();
    }
  }
  // A held frame comes out at the first poll at or after its release time.
  return out;
}

void FaultPort::flush_tx(uint64_t now_ns) {
  HoldQueue& h = held_[kTxDir];
  if (stuck(now_ns)) return;
  while (h.due(now_ns)) {
    std::array<rte_mbuf*, 32> burst;
    std::array<Held, 32> keys;
    uint16_t k = 0;
    while (k < burst.size() && h.due(now_ns)) {
      keys[k] = h.heap.front();
      burst[k] = h.pop();
      ++k;
    }
    const uint16_t sent = inner_->tx_burst(burst.data(), k, now_ns);
    if (sent < k) {
      // The receiver's ring is full: the rest go back, in their order, for a later poll.
      for (uint16_t i = sent; i < k; ++i) h.push(keys[i]);
      return;
    }
  }
}

uint16_t FaultPort::tx_burst(rte_mbuf** pkts, uint16_t n, uint64_t now_ns) {
  if (stuck(now_ns)) return 0;  // the receiver takes nothing: the switch keeps its frames
  HoldQueue& h = held_[kTxDir];
  flush_tx(now_ns);
  if (!(spec_.direction & FaultSpec::kTx)) {
    if (h.empty()) return inner_->tx_burst(pkts, n, now_ns);
    // Frames held from before a change of spec go first; these queue behind them.
    uint16_t took = 0;
    for (; took < n && !h.full(); ++took) h.push({now_ns, seq_++, pkts[took]});
    flush_tx(now_ns);
    return took;
  }
  // Every frame goes through the hold queue (due now when there is no delay), so frames the
  // receiver refuses stay in order; a full queue refuses frames and the switch keeps them.
  uint16_t took = 0;
  for (; took < n && !h.full(); ++took) {
    rte_mbuf* m = pkts[took];
    const uint64_t release = release_at(now_ns);
    if (!apply(kTxDir, m, release)) continue;
    if (h.full()) {  // a duplicate took the last slot
      rte_pktmbuf_free(m);
      c_[kTxDir].overflow.inc();
      continue;
    }
    h.push({release, seq_++, m});
    if (release > now_ns) c_[kTxDir].delayed.inc();
  }
  flush_tx(now_ns);
  return took;
}

void FaultPort::stop() {
  for (auto& h : held_)
    while (!h.empty()) rte_pktmbuf_free(h.pop());
  if (inner_) inner_->stop();
}

void FaultPort::stats(nlohmann::json& j) const {
  inner_->stats(j);
  auto& f = j["faults"];
  for (int d = 0; d < 2; ++d) {
    const Counters& c = c_[d];
    f[d == kRxDir ? "rx" : "tx"] = {{"dropped", c.dropped.get()},       {"corrupted", c.corrupted.get()},
                                    {"duplicated", c.duplicated.get()}, {"delayed", c.delayed.get()},
                                    {"overflow", c.overflow.get()}};
  }
  if (spec_.stuck_start_ns != UINT64_MAX) f["stuck_pfc_frames"] = stuck_pfc_.get();
}

}  // namespace rs
