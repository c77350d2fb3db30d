// A single-owner FIFO of mbufs with byte accounting. Not rte_ring: the scheduler must peek at
// the head packet's length before deciding to send it, and only one lcore ever touches it.
// Besides bytes it sums what transmit would otherwise add up per packet (the buffer cells
// the packets hold, the padding of runt frames to the Ethernet minimum), so a queue that goes
// out whole leaves with its totals known and its slots handed to the PMD as they are
// (take_all).
#pragma once
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>

namespace rs {

class PacketFifo {
 public:
  PacketFifo() = default;
  explicit PacketFifo(uint32_t max_packets) { reserve(max_packets); }
  // Sizes an empty FIFO (once, before use) for at least max_packets.
  void reserve(uint32_t max_packets) {
    const uint32_t cap = capacity_for(max_packets);
    mask_ = cap - 1;
    slots_ = static_cast<rte_mbuf**>(rte_zmalloc("pkt_fifo", sizeof(rte_mbuf*) * cap, 64));
    if (!slots_) throw std::runtime_error("out of memory for a queue");
  }
  ~PacketFifo() { rte_free(slots_); }
  // The ring's size, a power of two: a power-of-two round-up of what reserve() was asked for.
  static uint32_t capacity_for(uint32_t max_packets) {
    uint32_t cap = 1;
    while (cap < max_packets) cap <<= 1;
    return cap;
  }
  uint32_t capacity() const { return mask_ + 1; }
  // A larger ring, allocated by the control thread, taken by the owner with the queued packets
  // moved over in order; returns the old ring for the control thread to free (a queue's limit
  // grows at run time without an allocation on the worker). `cap` is a power of two larger
  // than the current capacity.
  rte_mbuf** adopt(rte_mbuf** slots, uint32_t cap) {
    const uint32_t n = tail_ - head_;
    for (uint32_t i = 0; i < n; ++i) slots[i] = slots_[(head_ + i) & mask_];
    rte_mbuf** old = slots_;
    slots_ = slots;
    mask_ = cap - 1;
    head_ = 0;
    tail_ = n;
    return old;
  }
  PacketFifo(const PacketFifo&) = delete;
  PacketFifo& operator=(const PacketFifo&) = delete;

  // The shared buffer's cell, as SharedBuffer::charge rounds to it (cell size - 1; 0: bytes).
  void set_cell_mask(uint32_t mask) { cell_mask_ = mask; }
  // The queue's configured limits, kept beside the indices enqueue checks them against.
  void set_limits(uint32_t packets, uint64_t bytes) {
    limit_packets_ = packets;
    limit_bytes_ = bytes;
  }
  uint32_t limit_packets() const { return limit_packets_; }
  uint64_t limit_bytes() const { return limit_bytes_; }
  // A packet of `len` bytes stays within both limits.
  bool fits(uint32_t len) const { return tail_ - head_ < limit_packets_ && bytes_ + len <= limit_bytes_; }
  bool full() const { return tail_ - head_ == mask_ + 1; }
  bool empty() const { return tail_ == head_; }
  uint32_t packets() const { return tail_ - head_; }
  uint64_t bytes() const { return bytes_; }
  uint64_t cells() const { return cells_; }  // sum of each packet's bytes rounded up to the cell
  // Sum of each frame's length padded to the Ethernet minimum (no FCS), as the wire sees it.
  uint64_t frame_bytes() const { return bytes_ + pad_; }
  rte_mbuf* front() const { return slots_[head_ & mask_]; }
  rte_mbuf* at(uint32_t i) const { return slots_[(head_ + i) & mask_]; }  // i < packets(), 0 = front

  void push(rte_mbuf* m) { push(m, m->pkt_len); }
  void push(rte_mbuf* m, uint32_t pkt_len) {  // pkt_len: the caller has it in a register
    slots_[tail_++ & mask_] = m;
    bytes_ += pkt_len;
    cells_ += cells_of(pkt_len, cell_mask_);
    if (pkt_len < kMinFrameNoFcs) [[unlikely]]
      pad_ += pad_of(pkt_len);
  }
  // An empty FIFO starts again at slot 0, so a queue that drains every loop (most do) keeps
  // reusing its first, cached slots instead of walking its whole ring through the cache and
  // the TLB.
  void rewind_if_empty() {
    if (head_ == tail_) head_ = tail_ = 0;
  }
  // Every queued packet at once when there are at most `max` and they sit in consecutive slots
  // (so for a queue rewound when it last drained that has not wrapped since: nearly always).
  // Returns the first of them, readable until the next push, so the caller hands the slots
  // to the PMD without copying them; nullptr (nothing taken) otherwise.
  struct Taken {
    uint32_t packets;
    uint64_t bytes, cells, frame_bytes;
  };
  rte_mbuf** take_all(uint32_t max, Taken& t) {
    const uint32_t n = tail_ - head_, first = head_ & mask_;
    if (n > max || first + n > mask_ + 1) return nullptr;
    t = {n, bytes_, cells_, bytes_ + pad_};
    head_ = tail_ = 0;
    bytes_ = cells_ = pad_ = 0;
    return slots_ + first;
  }
  // Pops packets while fewer than `max` are out and `more(len)` of each popped packet says
  // another may follow; returns how many, their bytes added to `bytes`. Head and slots stay in
  // registers: pop() in a loop reloads them after every store the caller makes.
  template <typename More>
  [[gnu::always_inline]] uint16_t pop_burst(rte_mbuf** out, uint16_t max, uint64_t& bytes, More&& more) {
    rte_mbuf** const slots = slots_;
    const uint32_t mask = mask_, tail = tail_;
    uint32_t head = head_;
    Sums sum;
    uint16_t n = 0;
    while (n < max && head != tail) {
      rte_mbuf* m = slots[head++ & mask];
      const uint32_t len = m->pkt_len;
      sum.add(len, cell_mask_);
      out[n++] = m;
      if (!more(len)) break;
    }
    // A paced port (the shaper stopped the loop) reads the next head's length on a later poll,
    // by when the mbuf has left the cache: fetched now, it is there.
    if (head != tail) rte_prefetch0(slots[head & mask]);
    head_ = head;
    remove(sum);
    bytes += sum.bytes;
    return n;
  }
  // Pops min(max, packets()) packets, calling `each(len)` for every one: pop_burst() for a
  // caller that already knows they may all go (a counted loop, one branch per packet).
  template <typename Each>
  [[gnu::always_inline]] uint16_t pop_upto(rte_mbuf** out, uint16_t max, uint64_t& bytes, Each&& each) {
    rte_mbuf** const slots = slots_;
    const uint32_t mask = mask_, head = head_;
    const uint32_t n = std::min<uint32_t>(max, tail_ - head);
    Sums sum;
    for (uint32_t i = 0; i < n; ++i) {
      rte_mbuf* m = slots[(head + i) & mask];
      const uint32_t len = m->pkt_len;
      sum.add(len, cell_mask_);
      out[i] = m;
      each(len);
    }
    head_ = head + n;
    remove(sum);
    bytes += sum.bytes;
    return static_cast<uint16_t>(n);
  }
  rte_mbuf* pop() {
    rte_mbuf* m = slots_[head_++ & mask_];
    Sums sum;
    sum.add(m->pkt_len, cell_mask_);
    remove(sum);
    return m;
  }

  // What pad_ pads to: the minimum Ethernet frame without its FCS.
  static constexpr uint32_t kMinFrameNoFcs = 60;

 private:
  // What one packet adds to the sums (push) and takes from them (the pops).
  static uint32_t cells_of(uint32_t len, uint32_t cell_mask) { return (len + cell_mask) & ~cell_mask; }
  static uint32_t pad_of(uint32_t len) { return len < kMinFrameNoFcs ? kMinFrameNoFcs - len : 0; }
  struct Sums {
    uint64_t bytes = 0, cells = 0;
    uint32_t pad = 0;
    void add(uint32_t len, uint32_t cell_mask) {
      bytes += len;
      cells += cells_of(len, cell_mask);
      pad += pad_of(len);
    }
  };
  void remove(const Sums& s) {
    bytes_ -= s.bytes;
    cells_ -= s.cells;
    pad_ -= s.pad;
  }

  rte_mbuf** slots_ = nullptr;
  uint32_t mask_ = 0;  // capacity - 1 (a power of two)
  uint32_t head_ = 0;
  uint32_t tail_ = 0;
  uint32_t cell_mask_ = 0;
  uint32_t limit_packets_ = UINT32_MAX;
  uint32_t pad_ = 0;  // bytes the runt frames queued lack of the minimum frame (< 60 each)
  uint64_t bytes_ = 0;
  uint64_t cells_ = 0;
  uint64_t limit_bytes_ = UINT64_MAX;
};

}  // namespace rs
