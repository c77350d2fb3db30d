// Random draws on the fast path (WRED/ECN, randomised routing policies): one generator per
// worker, so runs are deterministic for a seed and no draw takes a lock or a syscall.
#pragma once
#include <cstdint>

namespace rs {

// xorshift64*: small, fast, and good enough for Bernoulli draws at 2^-32 resolution.
struct FastRng {
  uint64_t state = 0x9e3779b97f4a7c15ull;
  explicit FastRng(uint64_t seed = 1) : state(seed ? seed * 0x9e3779b97f4a7c15ull : 0x9e3779b97f4a7c15ull) {}
  uint32_t next() {
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return static_cast<uint32_t>((state * 0x2545f4914f6cdd1dull) >> 32);
  }
};

}  // namespace rs
