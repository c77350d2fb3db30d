// Packet capture taps on switch ports (what `roceswitch-ctl capture` records): while a port's
// rx or tx tap is on, the worker that receives or sends its packets copies them (up to the
// snap length) into a pool of its own and hands the copies to the control thread through a
// per-worker ring; the control thread writes them to a pcapng file. A port with no tap on
// costs one relaxed load per burst. A full ring or an empty capture pool loses the copy,
// counted, never the packet.
#pragma once
#include <rte_mbuf.h>
#include <rte_ring.h>

#include <atomic>
#include <cstdint>
#include <vector>

#include "dataplane/core/counter.h"
#include "dataplane/core/types.h"

namespace rs {

// What the control thread gets in front of each copy.
struct CaptureHeader {
  uint64_t ts_ns;
  uint32_t orig_len;  // the packet's length before the snap length cut it
  uint16_t port;
  uint8_t dir;        // CaptureTap::kRx or kTx
  uint8_t pad;
};

class CaptureTap {
 public:
  static constexpr uint8_t kRx = 1, kTx = 2;

  explicit CaptureTap(uint16_t workers);
  ~CaptureTap();
  CaptureTap(const CaptureTap&) = delete;
  CaptureTap& operator=(const CaptureTap&) = delete;

  // Workers.
  [[gnu::always_inline]] bool on(uint16_t port, uint8_t dir) const {
    return (flags_[port].load(std::memory_order_relaxed) & dir) != 0;
  }
  void copy(uint16_t worker, uint16_t port, uint8_t dir, rte_mbuf* const* pkts, uint16_t n, uint64_t now_ns);

  // The control thread. set() turns a port's taps on or off (the first use creates the pool
  // and rings; throws std::runtime_error when it cannot); drain() takes the copies a worker
  // made (each starts with a CaptureHeader), to be freed by the caller.
  void set(uint16_t port, uint8_t dirs, uint32_t snaplen);
  uint8_t dirs(uint16_t port) const { return flags_[port].load(std::memory_order_relaxed); }
  unsigned drain(uint16_t worker, rte_mbuf** out, unsigned max);
  uint16_t workers() const { return workers_; }
  uint64_t lost() const;  // copies lost to a full ring or an empty pool

 private:
  uint16_t workers_;
  std::atomic<uint8_t> flags_[kMaxPorts]{};
  std::atomic<uint32_t> snaplen_[kMaxPorts]{};
  rte_mempool* pool_ = nullptr;
  std::vector<rte_ring*> rings_;  // one per worker: single producer, the control thread consumes
  std::vector<Counter> lost_;     // per worker
};

}  // namespace rs
