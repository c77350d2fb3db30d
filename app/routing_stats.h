// The routing side of the stats: each next-hop group with its policies (parameters, counters),
// its members (port, link, packets and bytes sent to each) and failovers; and one compact
// sample of the time series (--series): per-port tx bytes, queue depths and quality band,
// per-member tx, and what the emulated hosts received per flow.
#pragma once
#include <nlohmann/json.hpp>

#include "dataplane/switch/switch.h"

namespace rs {

nlohmann::json groups_json(const Switch& sw);
nlohmann::json series_sample(const Switch& sw, double t_s);

}  // namespace rs
