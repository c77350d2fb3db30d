// A rate limit as the generic cell rate algorithm (GCRA, ITU-T I.371's virtual scheduling): one
// word of state per policed stream, the theoretical arrival time (TAT) of its next packet. A
// packet conforms when that time is at most now + the burst's tolerance; a conforming packet
// moves it one interval on. The same as a token bucket of `burst` tokens at `pps`, with no
// division and no refill on the fast path. The punt stage's CoPP policers and the bridge's storm
// limit use it.
#pragma once
#include <algorithm>
#include <cstdint>

namespace rs {

struct GcraRate {
  uint64_t interval_ns = 0;   // 1e9 / pps; 0 when pps is 0
  uint64_t tolerance_ns = 0;  // (burst - 1) x interval

  static GcraRate of(uint32_t pps, uint32_t burst) {
    GcraRate r;
    r.interval_ns = pps ? std::max<uint64_t>(1, 1'000'000'000ull / pps) : 0;
    r.tolerance_ns = pps ? uint64_t{std::max<uint32_t>(burst, 1) - 1} * r.interval_ns : 0;
    return r;
  }
  // Whether a packet at `now` conforms to the stream whose TAT is `tat` (advanced if it does).
  bool admit(uint64_t& tat, uint64_t now) const {
    const uint64_t t = std::max(tat, now);
    if (t > now + tolerance_ns) return false;
    tat = t + interval_ns;
    return true;
  }
};

}  // namespace rs
