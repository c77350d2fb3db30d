#include "dataplane/ports/port_mirror.h"

#include <fmt/core.h>
#include <rte_errno.h>
#include <rte_ring.h>

#include <cstring>
#include <stdexcept>

#include "dataplane/core/object_name.h"
#include "dataplane/core/packet_meta.h"
#include "dataplane/core/worker_context.h"
#include "dataplane/tm/queue/egress_port.h"

namespace rs {

namespace {
// Copies queued at once on destination ports: a few bursts per port of a busy session. A
// queue's own limit bounds what one destination holds; this bounds all of them.
constexpr unsigned kPoolSize = 8192;

uint64_t pack(const MirrorTarget& t) {
  return 1u | uint64_t{t.dst_port} << 8 | uint64_t{t.queue & 7u} << 24 | uint64_t{t.truncate} << 32;
}
MirrorTarget unpack(uint64_t w) {
  return MirrorTarget{static_cast<uint16_t>(w >> 8), static_cast<uint8_t>((w >> 24) & 7), static_cast<uint32_t>(w >> 32)};
}
}  // namespace

PortMirror::PortMirror(uint16_t workers) : workers_(workers), counts_(std::make_unique<Counts[]>(workers)) {}

PortMirror::~PortMirror() {
  if (pool_) rte_mempool_free(pool_);
}

void PortMirror::prepare() {
  if (pool_) return;
  // The switch's metadata area: a copy is queued as any packet is.
  pool_ = rte_pktmbuf_pool_create(unique_object_name("rs_mirror").c_str(), kPoolSize, 256, kMbufPrivSize,
                                  RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
  if (!pool_) throw std::runtime_error(fmt::format("mirror pool: {}", rte_strerror(rte_errno)));
}

void PortMirror::set(uint16_t port, uint8_t dir, std::optional<MirrorTarget> target) {
  if (port >= kMaxPorts || dir > kTx || (target && target->dst_port >= kMaxPorts))
    throw std::runtime_error(fmt::format("mirror: no port {}", target && port < kMaxPorts ? target->dst_port : port));
  if (target) prepare();
  word_[port][dir].store(target ? pack(*target) : 0, std::memory_order_release);
}

std::optional<MirrorTarget> PortMirror::target(uint16_t port, uint8_t dir) const {
  const uint64_t w = word_[port][dir].load(std::memory_order_relaxed);
  if (!w) return std::nullopt;
  return unpack(w);
}

void PortMirror::copy(WorkerContext& ctx, uint16_t port, uint8_t dir, rte_mbuf* const* pkts, uint16_t n) {
  // Pairs with set()'s release store: the pool made before the word went on is seen.
  const uint64_t w = word_[port][dir].load(std::memory_order_acquire);
  if (!w) return;
  const MirrorTarget t = unpack(w);
  Counts& c = counts_[ctx.worker];
  rte_mbuf* copies[kBurst];
  uint16_t k = 0;
  for (uint16_t i = 0; i < n && k < kBurst; ++i) {
    if (dir == kTx && (meta(pkts[i]).flags & meta_flag::kMirrorCopy)) continue;  // never mirror a copy
    rte_mbuf* m = rte_pktmbuf_copy(pkts[i], pool_, 0, t.truncate ? t.truncate : UINT32_MAX);
    if (!m) {
      c.lost[port][dir].inc();
      continue;
    }
    PacketMeta& pm = meta(m);
    std::memset(&pm, 0, sizeof(pm));
    pm.in_port = port;
    pm.out_port = t.dst_port;
    pm.queue = t.queue;
    pm.tc = t.queue;
    pm.flags = meta_flag::kMirrorCopy;
    copies[k++] = m;
  }
  if (k == 0) return;
  c.copies[port][dir].add(k);
  const uint8_t owner = ctx.port_owner ? ctx.port_owner[t.dst_port] : ctx.worker;
  if (owner == ctx.worker) {
    EgressPort* e = ctx.egress[t.dst_port];
    for (uint16_t i = 0; i < k; ++i) e->enqueue(copies[i], ctx);  // a refusal is counted there
    // A tx copy may land on a port whose transmit already ran this poll: its depth is published
    // now, or the books would miss the copy until that port's next transmit.
    if (dir == kTx) e->publish_counters();
    return;
  }
  const unsigned done = rte_ring_sp_enqueue_burst(ctx.outbox[owner], reinterpret_cast<void* const*>(copies), k, nullptr);
  for (unsigned i = done; i < k; ++i) ctx.drop(copies[i], DropReason::HandoffFull, t.dst_port);
}

uint64_t PortMirror::copies(uint16_t port, uint8_t dir) const {
  uint64_t s = 0;
  for (uint16_t w = 0; w < workers_; ++w) s += counts_[w].copies[port][dir].get();
  return s;
}

uint64_t PortMirror::lost(uint16_t port, uint8_t dir) const {
  uint64_t s = 0;
  for (uint16_t w = 0; w < workers_; ++w) s += counts_[w].lost[port][dir].get();
  return s;
}

uint64_t PortMirror::copies() const {
  uint64_t s = 0;
  for (uint16_t p = 0; p < kMaxPorts; ++p) s += copies(p, kRx) + copies(p, kTx);
  return s;
}

}  // namespace rs
