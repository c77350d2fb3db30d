// Port mirroring (SPAN: the P4 program's mirror_ingress / mirror_egress tables and their
// sessions). A watched port's receive side (rx: every frame it receives, before any check, so
// dropped ones too) or send side (tx: what leaves it, after the rewrite) is copied, optionally
// truncated, into a queue of the session's destination port.
//
// Copies come from a pool of their own, so mirroring never takes a buffer a switched packet
// needs, and an empty pool loses the copy (counted), never the packet. A copy is lossy whatever
// the class of its original: no ingress PG is charged for it, so mirroring can never make the
// switch send a PAUSE; it is never mirrored again. A copy is counted where it is made (the
// books: received + mirrored = sent + queued + in flight + dropped). A port with no session
// costs one relaxed load per burst.
#pragma once
#include <rte_mbuf.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>

#include "dataplane/core/counter.h"
#include "dataplane/core/types.h"

namespace rs {

struct WorkerContext;

// Where a watched port's copies go.
struct MirrorTarget {
  uint16_t dst_port = 0;
  uint8_t queue = 0;      // of the destination port
  uint32_t truncate = 0;  // bytes kept of each frame; 0: whole frames
  bool operator==(const MirrorTarget&) const = default;
};

class PortMirror {
 public:
  static constexpr uint8_t kRx = 0, kTx = 1;

  explicit PortMirror(uint16_t workers);
  ~PortMirror();
  PortMirror(const PortMirror&) = delete;
  PortMirror& operator=(const PortMirror&) = delete;

  // Workers.
  [[gnu::always_inline]] bool on(uint16_t port, uint8_t dir) const {
    return word_[port][dir].load(std::memory_order_relaxed) != 0;
  }
  // Copies n frames (tx: those that are not copies themselves) and queues them on the target
  // port: directly when this worker owns it, else through the handoff ring to its owner.
  void copy(WorkerContext& ctx, uint16_t port, uint8_t dir, rte_mbuf* const* pkts, uint16_t n);

  // The control thread: a port side's target, or none. The first target creates the pool
  // (throws std::runtime_error when it cannot); prepare() creates it ahead, so that a set of
  // changes cannot fail half-way. Workers see a change on their next burst.
  void prepare();
  void set(uint16_t port, uint8_t dir, std::optional<MirrorTarget> target);
  std::optional<MirrorTarget> target(uint16_t port, uint8_t dir) const;
  // Summed over the workers.
  uint64_t copies(uint16_t port, uint8_t dir) const;
  uint64_t lost(uint16_t port, uint8_t dir) const;  // the pool was empty
  uint64_t copies() const;                            // every copy made, all ports

 private:
  struct alignas(64) Counts {
    Counter copies[kMaxPorts][2];
    Counter lost[kMaxPorts][2];
  };
  uint16_t workers_;
  std::atomic<uint64_t> word_[kMaxPorts][2]{};  // 0: off; else 1 | dst << 8 | queue << 24 | truncate << 32
  rte_mempool* pool_ = nullptr;
  std::unique_ptr<Counts[]> counts_;  // per worker
};

}  // namespace rs
