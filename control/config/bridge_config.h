// Reads the bridge: `vlans: [10, {id: 20, ipv4: 10.0.20.1/24}]` (a VLAN, or one with its router
// interface, SVI), each port's membership (`ports[].vlan: {access: 10, tagged: [20]}`) and
// `bridge: {ageing_s, flood_pps, flood_burst, fdb_size}`. A VLAN a port names must be declared;
// a port may not carry one VLAN both untagged and tagged, nor have addresses of its own while
// bridged (they go on the VLAN's interface). Failures name the file, line, key path and reason.
#pragma once
#include <yaml-cpp/yaml.h>

#include "control/config/config_reader.h"
#include "dataplane/switch/switch_config.h"

namespace rs {

void read_vlans(const ConfigReader& rd, const YAML::Node& n, SwitchConfig& cfg);
void read_port_vlans(const ConfigReader& rd, const YAML::Node& n, const std::string& path, const SwitchConfig& cfg, PortSpec& ps);
void read_bridge(const ConfigReader& rd, const YAML::Node& n, BridgeConfig& b);

}  // namespace rs
