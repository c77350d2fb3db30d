// Single-writer counters: the owning worker stores with relaxed atomics (no lock prefix, no
// shared cache-line RMW); readers load relaxed and sum across workers.
#pragma once
#include <atomic>
#include <cstddef>
#include <span>
#include <cstdint>

namespace rs {

struct Counter {
  std::atomic<uint64_t> v{0};

  void add(uint64_t n) { v.store(v.load(std::memory_order_relaxed) + n, std::memory_order_relaxed); }
  void sub(uint64_t n) { v.store(v.load(std::memory_order_relaxed) - n, std::memory_order_relaxed); }
  void inc() { add(1); }
  void set(uint64_t n) { v.store(n, std::memory_order_relaxed); }
  uint64_t get() const { return v.load(std::memory_order_relaxed); }
};

// A burst's tallies into counters: one store per counter that moved, not one per packet.
inline void add_tallies(Counter* ctr, std::span<const uint32_t> tally) {
  for (std::size_t i = 0; i < tally.size(); ++i)
    if (tally[i]) ctr[i].add(tally[i]);
}

}  // namespace rs
