// Strict priority: the highest-numbered eligible queue always goes first (queue 7 highest, as
// SONiC and most ASICs number them). Lower queues starve while a higher one has packets.
#pragma once
#include <cstdint>

namespace rs {

struct StrictPriority {
  // `eligible`: bit q set when queue q is strict, non-empty and not paused. -1 when none.
  static int select(uint8_t eligible) { return eligible ? 31 - __builtin_clz(eligible) : -1; }
};

}  // namespace rs
