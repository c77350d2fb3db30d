// Message completion times as a histogram the NIC's worker writes and any thread reads: log
// buckets, four to each power of two (each bucket within 25 % of its neighbours), counts and
// sums in relaxed atomics, so the stats can read it while the worker runs and the memory never
// grows. A reader takes a snapshot (FctCounts): percentiles, sums over queue pairs and the
// CDF's points come from the snapshot, so the figures of one report agree with each other.
#pragma once
#include <array>
#include <atomic>
#include <bit>
#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace rs::nic {

struct FctCounts {
  static constexpr unsigned kBuckets = 256;
  static unsigned bucket(uint64_t ns) {
    if (ns < 4) return static_cast<unsigned>(ns);
    const unsigned e = 63 - static_cast<unsigned>(std::countl_zero(ns));
    return e * 4 + static_cast<unsigned>((ns >> (e - 2)) & 3);
  }
  // A bucket's range is [lower(b), lower(b + 1)); value() is its middle.
  static double lower(unsigned b) {
    if (b < 4) return b;
    const unsigned e = b / 4, sub = b % 4;
    return static_cast<double>(4u + sub) * static_cast<double>(uint64_t{1} << (e - 2));
  }
  static double value(unsigned b) { return b < 4 ? b : (lower(b) + lower(b + 1)) / 2; }

  std::array<uint64_t, kBuckets> n{};
  uint64_t count = 0, sum = 0, max = 0;

  FctCounts& operator+=(const FctCounts& o) {
    for (unsigned b = 0; b < kBuckets; ++b) n[b] += o.n[b];
    count += o.count;
    sum += o.sum;
    max = std::max(max, o.max);
    return *this;
  }
  double mean() const { return count ? static_cast<double>(sum) / static_cast<double>(count) : 0; }
  // The value below which a fraction p of the samples lie (a bucket's middle, never above the
  // largest sample; 0 when empty).
  double percentile(double p) const {
    uint64_t total = 0;
    for (uint64_t c : n) total += c;
    if (total == 0) return 0;
    const double want = p * static_cast<double>(total);
    uint64_t seen = 0;
    for (unsigned b = 0; b < kBuckets; ++b) {
      seen += n[b];
      if (static_cast<double>(seen) >= want && n[b]) return std::min(value(b), static_cast<double>(max));
    }
    return static_cast<double>(max);
  }
  // The CDF's steps: (a non-empty bucket's upper edge, samples in it), in increasing order.
  std::vector<std::pair<double, uint64_t>> steps() const {
    std::vector<std::pair<double, uint64_t>> out;
    for (unsigned b = 0; b < kBuckets; ++b)
      if (n[b]) out.emplace_back(lower(b + 1), n[b]);
    return out;
  }
};

class FctHistogram {
 public:
  void add(uint64_t ns) {
    n_[FctCounts::bucket(ns)].fetch_add(1, std::memory_order_relaxed);
    sum_.fetch_add(ns, std::memory_order_relaxed);
    if (ns > max_.load(std::memory_order_relaxed)) max_.store(ns, std::memory_order_relaxed);  // one writer
  }
  FctCounts snapshot() const {
    FctCounts c;
    for (unsigned b = 0; b < FctCounts::kBuckets; ++b) c.count += c.n[b] = n_[b].load(std::memory_order_relaxed);
    c.sum = sum_.load(std::memory_order_relaxed);
    c.max = max_.load(std::memory_order_relaxed);
    return c;
  }

 private:
  std::array<std::atomic<uint64_t>, FctCounts::kBuckets> n_{};
  std::atomic<uint64_t> sum_{0}, max_{0};
};

}  // namespace rs::nic
