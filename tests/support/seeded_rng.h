// A seeded xorshift for tests that step a simulated clock or place events at random: the same
// sequence on every machine and standard library, so a failure repeats with its seed.
#pragma once
#include <cstdint>

namespace rs::test {

class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed ? seed : 1) {}
  uint64_t next() {
    s_ ^= s_ << 13;
    s_ ^= s_ >> 7;
    s_ ^= s_ << 17;
    return s_;
  }
  // A value in [lo, hi], both included.
  uint64_t between(uint64_t lo, uint64_t hi) { return lo + next() % (hi - lo + 1); }

 private:
  uint64_t s_;
};

}  // namespace rs::test
