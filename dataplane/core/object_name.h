// DPDK object names (rings, pools, LPM tables) must be unique per process: a prefix and a
// process-wide sequence number.
#pragma once
#include <fmt/core.h>

#include <atomic>
#include <cstdint>
#include <string>

namespace rs {

inline std::string unique_object_name(const char* prefix) {
  static std::atomic<uint32_t> seq{0};
  return fmt::format("{}{}", prefix, seq.fetch_add(1));
}

}  // namespace rs
