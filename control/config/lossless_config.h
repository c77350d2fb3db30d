// Reads the lossless-RoCE sections of a config in SONiC's names and units (buffer, wred_profiles,
// queue_wred, pfcwd, the PFC keys of qos, ports[].cable_length_m) and resolves them into
// SwitchConfig::mmu and each port's PortLosslessConfig, or throws a ConfigError.
#pragma once
#include <yaml-cpp/yaml.h>

#include <cstdint>

#include "control/config/config_reader.h"
#include "dataplane/switch/switch_config.h"

namespace rs {

// The lossless PG profile used when qos.pfc_enable is given without buffer.pg: PAUSE once the
// PG holds four jumbo frames (xoff = 4 x mtu), resume under half of that, and the computed
// minimum headroom for the port. Speed and cable length enter through the headroom only.
inline constexpr uint32_t kBuiltinXoffMtus = 4;

// Runs after cfg.ports are read (headroom needs each port's speed).
void read_lossless(const ConfigReader& rd, const YAML::Node& root, SwitchConfig& cfg);

}  // namespace rs
