#include "dataplane/ports/capture_tap.h"

#include <fmt/core.h>
#include <rte_errno.h>

#include <stdexcept>

#include "dataplane/core/object_name.h"

namespace rs {

namespace {
// Copies in flight between the workers and the file: enough for a few milliseconds of a busy
// port while the control thread writes.
constexpr unsigned kPoolSize = 8192;
constexpr unsigned kRingSize = 4096;
}  // namespace

CaptureTap::CaptureTap(uint16_t workers) : workers_(workers), lost_(workers) {}

CaptureTap::~CaptureTap() {
  for (auto* r : rings_) {
    void* m;
    while (rte_ring_dequeue(r, &m) == 0) rte_pktmbuf_free(static_cast<rte_mbuf*>(m));
    rte_ring_free(r);
  }
  if (pool_) rte_mempool_free(pool_);
}

void CaptureTap::set(uint16_t port, uint8_t dirs, uint32_t snaplen) {
  if (port >= kMaxPorts) throw std::runtime_error(fmt::format("capture: no port {}", port));
  if (dirs && !pool_) {
    pool_ = rte_pktmbuf_pool_create(unique_object_name("rs_cap").c_str(), kPoolSize, 256, 0,
                                    RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
    if (!pool_) throw std::runtime_error(fmt::format("capture pool: {}", rte_strerror(rte_errno)));
    for (uint16_t w = 0; w < workers_; ++w) {
      rte_ring* r = rte_ring_create(unique_object_name("rs_capr").c_str(), kRingSize, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
      if (!r) throw std::runtime_error(fmt::format("capture ring: {}", rte_strerror(rte_errno)));
      rings_.push_back(r);
    }
  }
  snaplen_[port].store(snaplen, std::memory_order_relaxed);
  flags_[port].store(dirs, std::memory_order_release);
}

void CaptureTap::copy(uint16_t worker, uint16_t port, uint8_t dir, rte_mbuf* const* pkts, uint16_t n, uint64_t now_ns) {
  // Pairs with set()'s release store: the pool and rings made before the flag went on are seen.
  std::atomic_thread_fence(std::memory_order_acquire);
  if (rings_.size() <= worker) return;
  const uint32_t snap = snaplen_[port].load(std::memory_order_relaxed);
  rte_mbuf* copies[64];
  uint16_t k = 0;
  for (uint16_t i = 0; i < n && k < 64; ++i) {
    rte_mbuf* c = rte_pktmbuf_copy(pkts[i], pool_, 0, snap ? snap : UINT32_MAX);
    if (!c) {
      lost_[worker].inc();
      continue;
    }
    auto* h = reinterpret_cast<CaptureHeader*>(rte_pktmbuf_prepend(c, sizeof(CaptureHeader)));
    if (!h) {  // no headroom left (cannot happen with the pool's default headroom)
      rte_pktmbuf_free(c);
      lost_[worker].inc();
      continue;
    }
    *h = CaptureHeader{now_ns, pkts[i]->pkt_len, port, dir, 0};
    copies[k++] = c;
  }
  const unsigned done = rte_ring_sp_enqueue_burst(rings_[worker], reinterpret_cast<void* const*>(copies), k, nullptr);
  for (unsigned i = done; i < k; ++i) {
    rte_pktmbuf_free(copies[i]);
    lost_[worker].inc();
  }
}

unsigned CaptureTap::drain(uint16_t worker, rte_mbuf** out, unsigned max) {
  if (worker >= rings_.size()) return 0;
  return rte_ring_sc_dequeue_burst(rings_[worker], reinterpret_cast<void**>(out), max, nullptr);
}

uint64_t CaptureTap::lost() const {
  uint64_t s = 0;
  for (auto& c : lost_) s += c.get();
  return s;
}

}  // namespace rs
