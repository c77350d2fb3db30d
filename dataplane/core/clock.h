// Time is an argument: every fast-path call takes `now` in nanoseconds, so tests step the
// switch deterministically and production feeds it from the TSC.
#pragma once
#include <rte_cycles.h>

#include <cstdint>

namespace rs {

class TscClock {
 public:
  TscClock() : hz_(rte_get_tsc_hz()), start_(rte_rdtsc()) {}
  uint64_t now_ns() const {
    uint64_t c = rte_rdtsc() - start_;
    // Split to keep c * 1e9 from overflowing for long runs.
    return (c / hz_) * 1'000'000'000ull + (c % hz_) * 1'000'000'000ull / hz_;
  }

 private:
  uint64_t hz_;
  uint64_t start_;
};

}  // namespace rs
