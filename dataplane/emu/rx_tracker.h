// What a RoCE receiver sees of each flow it receives: packets, payload bytes (goodput), and
// how far the PSN sequence it got differs from the one that was sent (reordering, loss).
//
// A received flow is keyed by (source IPv4 address, BTH destination QP). Per flow:
//   packets      RoCE packets with a good ICRC (a NIC discards the others unseen)
//   bytes        payload bytes: UDP length - UDP header - BTH - the opcode's extended transport
//                headers (RETH, AETH, ImmDt, DETH...) - BTH pad count - ICRC; goodput is these
//   frame_bytes  whole frames as received (Ethernet header .. ICRC, no FCS)
//   expected     the highest PSN seen + 1 (24-bit, wrap-aware: PSN a is "after" b when
//                (a - b) mod 2^24 < 2^23). The flow's first packet sets it; nothing before it
//                counts as missing (a real NIC starts at a random PSN)
//   out_of_order arrivals with PSN > expected: a gap opened (a go-back-N NIC would NAK here
//                and the sender would retransmit from `expected`)
//   late         arrivals with PSN < expected: a packet overtaken by later ones (or a
//                duplicate, or one from before the flow's first packet)
//   missing      PSNs skipped by a gap and not (yet) received. A window of kWindow PSNs behind
//                the highest remembers which arrived, so a late arrival within it fills its gap
//                (missing - 1); PSNs that fall out of the window unfilled stay missing for good
// A flow with no reordering and no loss has out_of_order = late = missing = 0. After a run
// drained, missing is the flow's loss, late the packets that were overtaken, out_of_order the
// NAKs a go-back-N receiver would have sent.
//
// Single writer, concurrent readers: one worker calls on_packet (the one polling every port
// that shares this tracker); any thread reads with for_each/find while it runs. The table is
// fixed at construction (no allocation, lock or map mutation per packet): slots are claimed in
// order by the writer, their key written first and then published with a release store of
// `used`; counters are rs::Counter. Flows beyond capacity are counted in untracked().
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "dataplane/core/counter.h"

namespace rs {

struct RxFlowStats {
  uint32_t src_ip = 0;  // network order
  uint32_t qp = 0;
  uint64_t packets = 0, bytes = 0, frame_bytes = 0;
  uint64_t out_of_order = 0, late = 0, missing = 0;
  uint64_t first_ns = 0, last_ns = 0;  // first and latest arrival
};

class RxTracker {
 public:
  static constexpr uint32_t kWindow = 4096;  // PSNs remembered behind the highest (power of 2)
  static constexpr uint32_t kDefaultCapacity = 1024;

  explicit RxTracker(uint32_t capacity = kDefaultCapacity);
  RxTracker(const RxTracker&) = delete;
  RxTracker& operator=(const RxTracker&) = delete;

  // Writer only. `src_ip` in network order, `qp` and `psn` 24-bit.
  void on_packet(uint32_t src_ip, uint32_t qp, uint32_t psn, uint32_t payload_bytes, uint32_t frame_bytes,
                 uint64_t now_ns);

  // Any thread: the published flows, in the order they first arrived.
  template <typename F>
  void for_each(F&& f) const {
    for (uint32_t i = 0; i < capacity_; ++i) {
      if (!slots_[i].used.load(std::memory_order_acquire)) return;
      f(read(slots_[i]));
    }
  }
  bool find(uint32_t src_ip, uint32_t qp, RxFlowStats& out) const;
  uint64_t untracked() const { return untracked_.get(); }
  uint32_t capacity() const { return capacity_; }

 private:
  struct Slot {
    std::atomic<bool> used{false};
    uint32_t src_ip = 0, qp = 0;  // written before `used` is released, never after
    uint32_t highest = 0;         // writer only
    Counter packets, bytes, frame_bytes, out_of_order, late, missing, first_ns, last_ns;
  };
  static RxFlowStats read(const Slot& s);
  uint32_t lookup(uint32_t src_ip, uint32_t qp);  // slot index, or capacity_ when full
  uint64_t* window(uint32_t slot) { return &bits_[std::size_t{slot} * (kWindow / 64)]; }

  uint32_t capacity_;
  uint32_t claimed_ = 0;                  // writer only
  std::unique_ptr<Slot[]> slots_;
  std::vector<uint32_t> index_;           // open addressing, slot + 1 (0: empty); writer only
  uint32_t index_mask_ = 0;
  std::vector<uint64_t> bits_;            // kWindow bits a slot, bit psn % kWindow; writer only
  Counter untracked_;
};

}  // namespace rs
