// Per-port traffic-manager settings, in one unit convention: bytes, packets, Gb/s.
#pragma once
#include <array>
#include <cstdint>

namespace rs {

enum class QueueSched : uint8_t { Dwrr, Strict };

struct QueueLimits {
  uint32_t packets = 1024;
  uint64_t bytes = 1 << 20;
};

struct EgressConfig {
  double speed_gbps = 100.0;
  std::array<QueueLimits, 8> limits{};
  // SONiC's default: DWRR everywhere, weight 15 for the lossless queues 3/4, 14 for the rest.
  std::array<QueueSched, 8> sched{QueueSched::Dwrr, QueueSched::Dwrr, QueueSched::Dwrr, QueueSched::Dwrr,
                                  QueueSched::Dwrr, QueueSched::Dwrr, QueueSched::Dwrr, QueueSched::Dwrr};
  std::array<uint32_t, 8> weights{14, 14, 14, 15, 15, 14, 14, 14};
  // The shaper's bucket in line time (Shaper::configure); 0: the default, for a worker polling
  // in real time. An emulated fabric sets its step, so that a queue drains at the link rate.
  uint64_t bucket_ns = 0;
};

}  // namespace rs
