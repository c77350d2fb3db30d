#include "dataplane/emu/rx_tracker.h"

#include <algorithm>
#include <stdexcept>

namespace rs {
namespace {
constexpr uint32_t kPsnMask = 0xFFFFFF;
constexpr uint32_t kPsnHalf = 0x800000;  // 24-bit serial arithmetic: ahead if 0 < a - b < 2^23
constexpr uint32_t kWords = RxTracker::kWindow / 64;
static_assert((RxTracker::kWindow & (RxTracker::kWindow - 1)) == 0 && RxTracker::kWindow >= 64);

bool test_bit(const uint64_t* w, uint32_t psn) { return w[(psn / 64) % kWords] >> (psn % 64) & 1; }
void set_bit(uint64_t* w, uint32_t psn) { w[(psn / 64) % kWords] |= uint64_t{1} << (psn % 64); }

// Clears `n` (< kWindow) bits of the ring from PSN `start` on, a word at a time.
void clear_bits(uint64_t* w, uint32_t start, uint32_t n) {
  start &= RxTracker::kWindow - 1;
  while (n) {
    const uint32_t bit = start % 64;
    const uint32_t k = std::min(n, 64 - bit);
    const uint64_t mask = (k == 64 ? ~uint64_t{0} : (uint64_t{1} << k) - 1) << bit;
    w[start / 64] &= ~mask;
    start = (start + k) & (RxTracker::kWindow - 1);
    n -= k;
  }
}
}  // namespace

RxTracker::RxTracker(uint32_t capacity) : capacity_(capacity) {
  if (capacity == 0 || capacity > (1u << 24)) throw std::invalid_argument("rx tracker capacity must be 1..2^24");
  slots_ = std::make_unique<Slot[]>(capacity);
  uint32_t n = 2;
  while (n < 2 * capacity) n <<= 1;  // at most half full: probes stay short, and one is empty
  index_.assign(n, 0);
  index_mask_ = n - 1;
  bits_.assign(std::size_t{capacity} * kWords, 0);
}

uint32_t RxTracker::lookup(uint32_t src_ip, uint32_t qp) {
  const uint64_t key = uint64_t{src_ip} << 24 | qp;
  uint32_t h = static_cast<uint32_t>((key * 0x9E3779B97F4A7C15ull) >> 32) & index_mask_;
  for (;; h = (h + 1) & index_mask_) {
    const uint32_t e = index_[h];
    if (e == 0) break;
    const Slot& s = slots_[e - 1];
    if (s.src_ip == src_ip && s.qp == qp) return e - 1;
  }
  if (claimed_ == capacity_) return capacity_;
  const uint32_t i = claimed_++;
  Slot& s = slots_[i];
  s.src_ip = src_ip;
  s.qp = qp;
  s.used.store(true, std::memory_order_release);  // readers see the key from here on
  index_[h] = i + 1;
  return i;
}

void RxTracker::on_packet(uint32_t src_ip, uint32_t qp, uint32_t psn, uint32_t payload_bytes, uint32_t frame_bytes,
                          uint64_t now_ns) {
  qp &= kPsnMask;
  psn &= kPsnMask;
  const uint32_t i = lookup(src_ip, qp);
  if (i == capacity_) {
    untracked_.inc();
    return;
  }
  Slot& f = slots_[i];
  uint64_t* w = window(i);
  if (f.packets.get() == 0) {
    // The first packet starts the sequence: everything behind it counts as received.
    std::fill(w, w + kWords, ~uint64_t{0});
    f.highest = psn;
    f.first_ns.set(now_ns);
  } else if (const uint32_t ahead = (psn - f.highest) & kPsnMask; ahead != 0 && ahead < kPsnHalf) {
    if (ahead > 1) {
      // A gap: the PSNs in between are missing until they arrive late (if they do).
      f.out_of_order.inc();
      f.missing.add(ahead - 1);
      if (ahead - 1 >= kWindow) std::fill(w, w + kWords, 0);
      else clear_bits(w, f.highest + 1, ahead - 1);
    }
    f.highest = psn;
    set_bit(w, psn);  // the slot PSN - kWindow left behind
  } else {
    f.late.inc();
    const uint32_t behind = (f.highest - psn) & kPsnMask;
    if (behind < kWindow && !test_bit(w, psn)) {
      set_bit(w, psn);
      f.missing.sub(1);  // filled its gap
    }
  }
  f.packets.inc();
  f.bytes.add(payload_bytes);
  f.frame_bytes.add(frame_bytes);
  f.last_ns.set(now_ns);
}

RxFlowStats RxTracker::read(const Slot& s) {
  RxFlowStats r;
  r.src_ip = s.src_ip;
  r.qp = s.qp;
  r.packets = s.packets.get();
  r.bytes = s.bytes.get();
  r.frame_bytes = s.frame_bytes.get();
  r.out_of_order = s.out_of_order.get();
  r.late = s.late.get();
  r.missing = s.missing.get();
  r.first_ns = s.first_ns.get();
  r.last_ns = s.last_ns.get();
  return r;
}

bool RxTracker::find(uint32_t src_ip, uint32_t qp, RxFlowStats& out) const {
  for (uint32_t i = 0; i < capacity_; ++i) {
    const Slot& s = slots_[i];
    if (!s.used.load(std::memory_order_acquire)) return false;
    if (s.src_ip == src_ip && s.qp == qp) {
      out = read(s);
      return true;
    }
  }
  return false;
}

}  // namespace rs
