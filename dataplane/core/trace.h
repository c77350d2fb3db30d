// Per-packet traces, as VPP's vlib_add_trace and grout's gr_mbuf_trace_add: the pipeline marks
// the packets to trace when they arrive (the first N, then 1 in K), and every stage that
// handles a marked packet appends one fixed record (which edge it took, why it dropped, and
// two words of its own that its format_trace() turns into text). Off, it costs one test per
// rx burst in the pipeline and one per stage call (the stages' traced bodies are separate
// instantiations, VPP's per-frame trace flag).
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "dataplane/core/drop_reason.h"

namespace rs {

struct TraceRecord {
  uint16_t packet;   // PacketMeta::trace
  uint16_t node;     // pipeline node index, or kTraceRx for the arrival record
  uint8_t edge;      // the edge the stage sent the packet on (kNextDrop, kNextConsumed included)
  DropReason drop;   // when edge is kNextDrop, or when the stage dropped it itself
  uint8_t step;      // which of a chain node's stages wrote it (0 for a plain stage)
  uint64_t a, b;     // the stage's own fields
};
inline constexpr uint16_t kTraceRx = 0xFFFF;  // node of the record the pipeline writes at arrival

class Tracer {
 public:
  explicit Tracer(uint32_t capacity = 1u << 14) { records_.reserve(capacity); }
  // Control side, between runs: trace the next `first` packets received, then 1 in `every`
  // (0: none). Tracing ends when the record buffer is full (full() says so).
  void configure(uint32_t first, uint32_t every) {
    first_left_ = first;
    every_ = every;
    since_ = 0;
  }
  bool active() const { return (first_left_ != 0 || every_ != 0) && !full(); }
  // Forgets what was traced, ready to trace anew (the capacity stays: add() never allocates).
  void restart(uint32_t first, uint32_t every) {
    records_.clear();
    next_id_ = 0;
    configure(first, every);
  }
  // The id for a packet just received, or 0 when it is not to be traced.
  uint16_t take() {
    if (full() || next_id_ == 0xFFFF) return 0;
    if (first_left_ != 0) {
      --first_left_;
    } else if (every_ == 0 || ++since_ < every_) {
      return 0;
    } else {
      since_ = 0;
    }
    return ++next_id_;
  }
  void add(uint16_t packet, uint16_t node, uint8_t edge, DropReason drop, uint64_t a = 0, uint64_t b = 0,
           uint8_t step = 0) {
    if (records_.size() < records_.capacity()) records_.push_back({packet, node, edge, drop, step, a, b});
  }
  // Room for a packet's walk through a pipeline of a few stages.
  bool full() const { return records_.size() + 16 > records_.capacity(); }
  std::span<const TraceRecord> records() const { return records_; }

 private:
  std::vector<TraceRecord> records_;  // reserved once: add() never allocates
  uint32_t first_left_ = 0, every_ = 0, since_ = 0;
  uint16_t next_id_ = 0;
};

}  // namespace rs
