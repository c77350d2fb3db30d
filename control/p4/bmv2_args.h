// The BMv2 CLI's argument reads, shared by its command files: a number that must fit a P4
// field's width, and a handle.
#pragma once
#include <fmt/core.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "control/runtime/running_state.h"

namespace rs::bmv2 {

inline uint64_t number(const std::string& s, uint16_t bits, const std::string& what) {
  std::size_t used = 0;
  uint64_t v = 0;
  try {
    v = std::stoull(s, &used, 0);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != s.size() || s.empty()) throw OpError{"", fmt::format("{}: '{}' is not a number", what, s)};
  if (bits < 64 && v >> bits) throw OpError{"", fmt::format("{}: {} does not fit in bit<{}>", what, s, bits)};
  return v;
}

inline uint32_t handle(const std::string& s, const std::string& what) { return static_cast<uint32_t>(number(s, 32, what)); }

}  // namespace rs::bmv2
