// Egress shaper: a token bucket in bytes at the port's emulated link rate, charging each frame
// its wire cost (FCS, minimum frame, preamble + SFD and inter-frame gap) so that 64-byte line
// rate comes out as on a real link (100 Gb/s -> 148.8 Mpps). Without it nothing queues on a
// fast virtual port and priority queues do nothing.
#pragma once
#include <algorithm>
#include <cstdint>

namespace rs {

inline constexpr uint32_t kEthFcs = 4;
inline constexpr uint32_t kEthMinFrame = 64;     // with FCS
inline constexpr uint32_t kEthPreambleIfg = 20;  // 7 preamble + 1 SFD + 12 IFG

// Bytes a frame of `pkt_len` (as in the mbuf: no FCS) occupies on the wire.
constexpr uint32_t wire_bytes(uint32_t pkt_len) {
  return std::max(pkt_len + kEthFcs, kEthMinFrame) + kEthPreambleIfg;
}

class Shaper {
 public:
  // Credit is kept in byte-nanoseconds per second units (bytes * 1e9) so integer maths is exact.
  // `bucket_ns` (0: the default below) bounds the credit to that much line time, with no
  // catch-up: on a virtual clock there is no polling jitter to make up, and a bucket of one
  // step keeps what leaves serialised at the rate (a host resuming after PFC sends at line
  // rate, not its banked bucket at once).
  void configure(double gbps, uint64_t now_ns, uint64_t bucket_ns = 0) {
    bucket_ns_ = bucket_ns;
    set_rate(gbps);
    credit_ = 0;
    last_ = now_ns;
  }
  // A new rate from now on (a congestion controller's), the credit kept within the new bucket.
  void set_rate(double gbps) {
    rate_bps_ = static_cast<uint64_t>(gbps * 1e9 / 8.0);  // bytes per second
    if (bucket_ns_) {
      burst_ = std::max<uint64_t>(1, rate_bps_ * bucket_ns_ / 1'000'000'000) * kScale;
      catchup_ = burst_;
    } else {
      // Allow ~20 us of line time (at least two jumbo frames) so polling jitter does not lose rate.
      burst_ = std::max<uint64_t>(2 * 9216 + 64, rate_bps_ / 50'000) * kScale;
      // A backlogged link whose worker lost the CPU (a busy laptop, a CI box) would have kept
      // sending: up to 5 ms of that is made up afterwards, so the long-run rate holds. An idle
      // link gets no such credit, so queues still build from the first packet of an incast.
      catchup_ = std::max<uint64_t>(burst_, rate_bps_ / 200 * kScale);
    }
    credit_ = std::min<int64_t>(credit_, static_cast<int64_t>(burst_));
  }
  uint64_t rate_bytes_per_s() const { return rate_bps_; }
  // The bucket of an idle link, in bytes: what it may send at once without being backlogged.
  uint64_t burst_bytes() const { return burst_ / kScale; }

  // `backlogged`: packets were waiting (and not paused) over the interval since the last refill.
  void refill(uint64_t now_ns, bool backlogged = false) {
    if (now_ns <= last_) return;
    const unsigned __int128 add = static_cast<unsigned __int128>(now_ns - last_) * rate_bps_;
    last_ = now_ns;
    const int64_t cap = static_cast<int64_t>(backlogged ? catchup_ : burst_);
    if (credit_ >= cap) {
      credit_ = cap;
      return;
    }
    const int64_t room = cap - credit_;  // credit may be in debt
    credit_ += add < static_cast<unsigned __int128>(room) ? static_cast<int64_t>(add) : room;
  }
  // A frame may start while credit is positive; the debt it leaves keeps the long-run rate exact.
  bool can_send() const { return credit_ > 0; }
  void consume(uint32_t pkt_len) { credit_ -= static_cast<int64_t>(wire_bytes(pkt_len)) * kScale; }
  // Whether frames of `bytes` in all, `frames` of them, may all start now: a frame of n bytes
  // costs at most n + 84 on the wire (minimum frame, FCS, preamble, gap). Then a burst loop
  // can sum their wire bytes and consume() the total, without a check per frame.
  bool covers(uint64_t bytes, uint64_t frames) const {
    return credit_ > 0 && static_cast<uint64_t>(credit_) / kScale > bytes + frames * (kEthMinFrame + kEthPreambleIfg);
  }
  void consume_wire(uint64_t wire) { credit_ -= static_cast<int64_t>(wire) * kScale; }
  // can_send() and consume() over a burst with the credit in a register: `send(more)` gets a
  // callable that consumes one frame and says whether another may start.
  template <typename Send>
  [[gnu::always_inline]] auto spend(Send&& send) {
    int64_t credit = credit_;
    auto more = [&credit](uint32_t pkt_len) {
      credit -= static_cast<int64_t>(wire_bytes(pkt_len)) * kScale;
      return credit > 0;
    };
    const auto r = credit > 0 ? send(more) : decltype(send(more)){};
    credit_ = credit;
    return r;
  }

 private:
  static constexpr int64_t kScale = 1'000'000'000;
  uint64_t rate_bps_ = 0;
  uint64_t burst_ = 0;
  uint64_t catchup_ = 0;
  uint64_t bucket_ns_ = 0;
  int64_t credit_ = 0;
  uint64_t last_ = 0;
};

}  // namespace rs
