#include "dataplane/switch/local_path.h"

#include <fmt/core.h>
#include <rte_errno.h>

#include <stdexcept>

#include "dataplane/core/object_name.h"
#include "dataplane/core/packet_meta.h"

namespace rs {

LocalPath::LocalPath(uint16_t workers, const uint8_t* port_owner, uint16_t num_ports, rte_mempool* pool)
    : workers_(workers), port_owner_(port_owner), num_ports_(num_ports), pool_(pool) {
  auto ring = [](const char* what) {
    rte_ring* r = rte_ring_create(unique_object_name(what).c_str(), kRingSize, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
    if (!r) throw std::runtime_error(fmt::format("{} ring: {}", what, rte_strerror(rte_errno)));
    return r;
  };
  try {
    for (uint16_t w = 0; w < workers; ++w) {
      punt_.push_back(ring("rs_punt"));
      inject_.push_back(ring("rs_inject"));
    }
  } catch (...) {
    for (auto* r : punt_) rte_ring_free(r);
    for (auto* r : inject_) rte_ring_free(r);
    throw;
  }
}

LocalPath::~LocalPath() {
  for (auto& v : {punt_, inject_})
    for (auto* r : v) {
      void* m;
      while (rte_ring_dequeue(r, &m) == 0) rte_pktmbuf_free(static_cast<rte_mbuf*>(m));
      rte_ring_free(r);
    }
}

unsigned LocalPath::take(rte_mbuf** pkts, unsigned max) {
  unsigned n = 0;
  for (uint16_t k = 0; k < workers_ && n < max; ++k) {
    rte_ring* r = punt_[(next_ + k) % workers_];
    n += rte_ring_sc_dequeue_burst(r, reinterpret_cast<void**>(pkts + n), max - n, nullptr);
  }
  next_ = static_cast<uint16_t>((next_ + 1) % workers_);
  return n;
}

rte_mbuf* LocalPath::alloc() {
  rte_mbuf* m = rte_pktmbuf_alloc(pool_);
  if (!m) no_mbuf_.inc();
  return m;
}

bool LocalPath::send(rte_mbuf* m, uint16_t port, uint8_t queue, bool made) {
  PacketMeta& pm = meta(m);
  pm.out_port = port;
  pm.in_port = port;  // no ingress PG is charged (kLocalOrigin); any valid port will do
  pm.queue = queue & 7;
  pm.flags = static_cast<uint8_t>((pm.flags & ~meta_flag::kPgCharged) | meta_flag::kLocalOrigin);
  if (made) originated_.inc();
  if (port >= num_ports_ || rte_ring_sp_enqueue(inject_[port_owner_[port]], m) != 0) {
    drop(m, DropReason::LocalTxFull);
    return false;
  }
  return true;
}

void LocalPath::drop(rte_mbuf* m, DropReason r) {
  const uint16_t port = meta(m).in_port;
  if (port < kMaxPorts) counters_.port_drops[port][static_cast<std::size_t>(r)].inc();
  rte_pktmbuf_free(m);
}

uint64_t LocalPath::in_flight() const {
  uint64_t n = 0;
  for (auto* r : punt_) n += rte_ring_count(r);
  for (auto* r : inject_) n += rte_ring_count(r);
  return n;
}

void LocalPath::flush_punted() {
  for (auto* r : punt_) {
    void* m;
    while (rte_ring_sc_dequeue(r, &m) == 0) drop(static_cast<rte_mbuf*>(m), DropReason::Shutdown);
  }
}

}  // namespace rs
