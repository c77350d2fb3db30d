// The load view: what adaptive routing policies read of every egress port, from any worker,
// without locks. Each port's egress owner writes its row when it publishes its counters (at
// the end of every transmit); the link monitor writes the link state. Readers load relaxed:
// a view one worker loop old is what an ASIC's quality measure is too (SAI ARS samples it).
//
// Per port: the bytes queued per queue (SAI ARS's "future load"), an EWMA of the transmitted
// rate ("past load"), and a quality band 0..7 quantised from both (7 = least loaded, the band
// a flowlet or packet should prefer). Link state is one word for all ports, so a route stage
// loads it once per burst.
#pragma once
#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>

#include "dataplane/core/types.h"

namespace rs {

// How the quality band is quantised (config `load_view:`). A port's band is 7 minus the
// higher of its two load levels, each the number of thresholds its load reaches.
struct LoadViewConfig {
  std::array<uint64_t, 7> queue_thresholds_bytes = {1500, 4500, 9000, 18000, 36000, 72000, 144000};
  std::array<double, 7> rate_thresholds_pct = {50, 70, 80, 85, 90, 95, 98};
  uint64_t rate_interval_ns = 20'000;  // the tx rate is sampled this often (EWMA input)
  double rate_weight = 0.25;           // weight of a new sample in the EWMA
};

struct alignas(64) PortLoadRow {
  std::array<std::atomic<uint64_t>, 8> queue_bytes{};
  std::atomic<uint64_t> port_bytes{0};    // sum over the queues
  std::atomic<uint64_t> tx_rate_bps{0};   // EWMA
  std::atomic<uint8_t> quality{7};
};

class LoadView {
 public:
  // Readers (policies, stats).
  uint64_t queue_bytes(uint16_t port, unsigned q) const { return row_[port].queue_bytes[q & 7].load(std::memory_order_relaxed); }
  uint64_t port_bytes(uint16_t port) const { return row_[port].port_bytes.load(std::memory_order_relaxed); }
  uint64_t tx_rate_bps(uint16_t port) const { return row_[port].tx_rate_bps.load(std::memory_order_relaxed); }
  uint8_t quality(uint16_t port) const { return row_[port].quality.load(std::memory_order_relaxed); }
  bool link_up(uint16_t port) const { return (up_mask() >> (port & 63)) & 1; }
  uint64_t up_mask() const { return up_.load(std::memory_order_relaxed); }

  // Writers: the port's egress owner for its row, the link monitor for link state.
  PortLoadRow& row(uint16_t port) { return row_[port]; }
  void set_link(uint16_t port, bool up) {
    const uint64_t bit = uint64_t{1} << (port & 63);
    if (up) up_.fetch_or(bit, std::memory_order_relaxed);
    else up_.fetch_and(~bit, std::memory_order_relaxed);
  }
  // The configuration, for the control thread: each egress owner keeps its own copy (set when
  // the port is wired, then through its run-time settings), so a change never races a worker.
  const LoadViewConfig& config() const { return cfg_; }
  void configure(const LoadViewConfig& c) { cfg_ = c; }
  // The band for a port's queued bytes and its rate in percent of its link.
  static uint8_t band(const LoadViewConfig& c, uint64_t queued, double rate_pct) {
    unsigned lq = 0, lr = 0;
    while (lq < 7 && queued >= c.queue_thresholds_bytes[lq]) ++lq;
    while (lr < 7 && rate_pct >= c.rate_thresholds_pct[lr]) ++lr;
    return static_cast<uint8_t>(7 - std::max(lq, lr));
  }
  uint8_t band(uint64_t queued, double rate_pct) const { return band(cfg_, queued, rate_pct); }

 private:
  static_assert(kMaxPorts <= 64, "link state is one 64-bit word");
  std::array<PortLoadRow, kMaxPorts> row_{};
  std::atomic<uint64_t> up_{~uint64_t{0}};
  LoadViewConfig cfg_;
};

}  // namespace rs
