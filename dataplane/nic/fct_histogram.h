// Message completion times as a histogram the NIC's worker writes and any thread reads: log
// buckets, four to each power of two (each bucket within 25 % of its neighbours), counts and
// sums in relaxed atomics, so the stats can read percentiles while the worker runs and the memory
// never grows.
#pragma once
#include <array>
#include <atomic>
#include <bit>
#include <cstdint>

namespace rs::nic {

class FctHistogram {
 public:
  static constexpr unsigned kBuckets = 256;
  static unsigned bucket(uint64_t ns) {
    if (ns < 4) return static_cast<unsigned>(ns);
    const unsigned e = 63 - static_cast<unsigned>(std::countl_zero(ns));
    return e * 4 + static_cast<unsigned>((ns >> (e - 2)) & 3);
  }
  // The middle of a bucket's range.
  static double value(unsigned b) {
    if (b < 4) return b;
    const unsigned e = b / 4, sub = b % 4;
    const double lo = static_cast<double>((4u + sub)) * static_cast<double>(uint64_t{1} << (e - 2));
    return lo + static_cast<double>(uint64_t{1} << (e - 2)) / 2;
  }
  void add(uint64_t ns) {
    n_[bucket(ns)].fetch_add(1, std::memory_order_relaxed);
    count_.fetch_add(1, std::memory_order_relaxed);
    sum_.fetch_add(ns, std::memory_order_relaxed);
    if (ns > max_.load(std::memory_order_relaxed)) max_.store(ns, std::memory_order_relaxed);  // one writer
  }
  uint64_t count() const { return count_.load(std::memory_order_relaxed); }
  double mean() const { return count() ? static_cast<double>(sum_.load(std::memory_order_relaxed)) / static_cast<double>(count()) : 0; }
  uint64_t max() const { return max_.load(std::memory_order_relaxed); }
  // The value below which a fraction p of the samples lie (a bucket's middle; 0 when empty).
  double percentile(double p) const {
    std::array<uint64_t, kBuckets> c;
    uint64_t total = 0;
    for (unsigned b = 0; b < kBuckets; ++b) total += c[b] = n_[b].load(std::memory_order_relaxed);
    if (total == 0) return 0;
    const double want = p * static_cast<double>(total);
    uint64_t seen = 0;
    for (unsigned b = 0; b < kBuckets; ++b) {
      seen += c[b];
      if (static_cast<double>(seen) >= want && c[b]) return value(b);
    }
    return value(kBuckets - 1);
  }

 private:
  std::array<std::atomic<uint64_t>, kBuckets> n_{};
  std::atomic<uint64_t> count_{0}, sum_{0}, max_{0};
};

}  // namespace rs::nic
