// Sizes fixed at compile time so per-worker state is plain arrays (no heap on the fast path).
#pragma once
#include <cstddef>
#include <cstdint>

namespace rs {

inline constexpr uint16_t kBurst = 64;        // packets per rx burst and per stage call
inline constexpr uint16_t kMaxPorts = 64;     // switch ports (ethdev + emulated), not ethdevs
inline constexpr uint16_t kNumQueues = 8;     // priority queues per egress port
inline constexpr uint16_t kMaxWorkers = 16;
inline constexpr uint16_t kInvalidPort = 0xFFFF;

}  // namespace rs
