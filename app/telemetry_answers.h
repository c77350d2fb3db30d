// The switch's own DPDK telemetry commands (/roceswitch/ports, /queues, /pfc, /groups, /drops,
// /totals), which dpdk-telemetry.py reads as it reads /ethdev/stats: what each one answers, and
// that answer in DPDK's telemetry data. Registering them with DPDK is
// app/telemetry_registration.h; docs/observability.md describes them.
#pragma once
#include <nlohmann/json.hpp>

#include <string_view>

#include "dataplane/switch/switch.h"

struct rte_tel_data;

namespace rs {

// The telemetry commands, exposed for tests. Names and help strings as DPDK lists them.
struct TelemetryCommand {
  const char* name;
  const char* help;
};
extern const TelemetryCommand kTelemetryCommands[6];

// The answer to one command (main thread): an object whose values are numbers, strings, or
// arrays of them (DPDK telemetry has no deeper nesting that dpdk-telemetry.py shows well);
// {"error": "..."} for an unknown command, port or group, or an answer too large for DPDK.
nlohmann::ordered_json telemetry_answer(const Switch& sw, std::string_view cmd, std::string_view param);
// Fills DPDK's reply from such an answer (any thread; no switch access). 0, or negative errno.
int telemetry_fill(const nlohmann::ordered_json& answer, rte_tel_data* d);

}  // namespace rs
