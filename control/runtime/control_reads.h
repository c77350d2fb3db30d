// The control protocol's reads of the running state: route.list, group.list, port.list, limits.
#pragma once
#include <nlohmann/json.hpp>

#include <string>

#include "control/runtime/running_state.h"

namespace rs {

// Throws OpError (a bad argument) or ConfigError (a bad prefix).
nlohmann::json read_state(const RunningState& state, const std::string& op, const nlohmann::json& args);
// A policy with every parameter's value typed as declared (an Int as an integer, a Choice by
// name): {"name": ..., "params": {...}}, as the protocol, the stats and the docs show it.
nlohmann::json policy_choice_json(const PolicyChoice& pc);
// A group as the protocol and the stats show it: policy with every parameter, members by port
// name, routes using it.
nlohmann::json group_json(const RunningState& state, uint32_t id);

}  // namespace rs
