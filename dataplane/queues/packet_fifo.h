// A single-owner FIFO of mbufs with byte accounting. Not rte_ring: the scheduler must peek at
// the head packet's length before deciding to send it, and only one lcore ever touches it.
#pragma once
#include <rte_malloc.h>
#include <rte_mbuf.h>

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
    uint32_t cap = 1;
    while (cap < max_packets) cap <<= 1;
    mask_ = cap - 1;
    slots_ = static_cast<rte_mbuf**>(rte_zmalloc("pkt_fifo", sizeof(rte_mbuf*) * cap, 64));
    if (!slots_) throw std::runtime_error("out of memory for a queue");
  }
  ~PacketFifo() { rte_free(slots_); }
  PacketFifo(const PacketFifo&) = delete;
  PacketFifo& operator=(const PacketFifo&) = delete;

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
  rte_mbuf* front() const { return slots_[head_ & mask_]; }
  rte_mbuf* at(uint32_t i) const { return slots_[(head_ + i) & mask_]; }  // i < packets(), 0 = front

  void push(rte_mbuf* m) { push(m, m->pkt_len); }
  void push(rte_mbuf* m, uint32_t pkt_len) {  // pkt_len: the caller has it in a register
    slots_[tail_++ & mask_] = m;
    bytes_ += pkt_len;
  }
  // An empty FIFO starts again at slot 0, so a queue that drains every loop (most do) keeps
  // reusing its first, cached slots instead of walking its whole ring through the cache and
  // the TLB.
  void rewind_if_empty() {
    if (head_ == tail_) head_ = tail_ = 0;
  }
  // Pops packets while fewer than `max` are out and `more(len)` of each popped packet says
  // another may follow; returns how many, their bytes added to `bytes`. Head and slots stay in
  // registers: pop() in a loop reloads them after every store the caller makes.
  template <typename More>
  [[gnu::always_inline]] uint16_t pop_burst(rte_mbuf** out, uint16_t max, uint64_t& bytes, More&& more) {
    rte_mbuf** const slots = slots_;
    const uint32_t mask = mask_, tail = tail_;
    uint32_t head = head_;
    uint64_t sum = 0;
    uint16_t n = 0;
    while (n < max && head != tail) {
      rte_mbuf* m = slots[head++ & mask];
      const uint32_t len = m->pkt_len;
      sum += len;
      out[n++] = m;
      if (!more(len)) break;
    }
    head_ = head;
    bytes_ -= sum;
    bytes += sum;
    return n;
  }
  // Pops min(max, packets()) packets, calling `each(len)` for every one: pop_burst() for a
  // caller that already knows they may all go (a counted loop, one branch per packet).
  template <typename Each>
  [[gnu::always_inline]] uint16_t pop_upto(rte_mbuf** out, uint16_t max, uint64_t& bytes, Each&& each) {
    rte_mbuf** const slots = slots_;
    const uint32_t mask = mask_, head = head_;
    const uint32_t n = std::min<uint32_t>(max, tail_ - head);
    uint64_t sum = 0;
    for (uint32_t i = 0; i < n; ++i) {
      rte_mbuf* m = slots[(head + i) & mask];
      const uint32_t len = m->pkt_len;
      sum += len;
      out[i] = m;
      each(len);
    }
    head_ = head + n;
    bytes_ -= sum;
    bytes += sum;
    return static_cast<uint16_t>(n);
  }
  rte_mbuf* pop() {
    rte_mbuf* m = slots_[head_++ & mask_];
    bytes_ -= m->pkt_len;
    return m;
  }

 private:
  rte_mbuf** slots_ = nullptr;
  uint32_t mask_ = 0;  // capacity - 1 (a power of two)
  uint32_t head_ = 0;
  uint32_t tail_ = 0;
  uint64_t bytes_ = 0;
  uint32_t limit_packets_ = UINT32_MAX;
  uint64_t limit_bytes_ = UINT64_MAX;
};

}  // namespace rs
