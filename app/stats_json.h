// Every counter of a switch as JSON: per port (rx/tx, drops by reason, the 8 queues, PFC sent
// and received), the buffer, per pipeline node (calls, packets, the stage's own counters),
// per worker, and the totals with their balance. Written by --stats-json at exit and read by
// the tests; the live report prints a subset.
#pragma once
#include <nlohmann/json.hpp>

#include "dataplane/switch/switch.h"

namespace rs {

nlohmann::json stats_json(const Switch& sw);

}  // namespace rs
