// Reads the bridge: `vlans: [10, 20]`, each port's membership (`ports[].vlan: {access: 10,
// tagged: [20]}`) and `bridge: {ageing_s, flood_pps, flood_burst, fdb_size}`. A VLAN a port names
// must be declared; a port may not carry one VLAN both untagged and tagged, nor have addresses
// of its own while bridged (a VLAN's addresses would go on its SVI, which the switch does not
// have yet). Failures name the file, line, key path and reason.
#pragma once
#include <yaml-cpp/yaml.h>

#include "control/config/config_reader.h"
#include "dataplane/switch/switch_config.h"

namespace rs {

void read_vlans(const ConfigReader& rd, const YAML::Node& n, SwitchConfig& cfg);
void read_port_vlans(const ConfigReader& rd, const YAML::Node& n, const std::string& path, const SwitchConfig& cfg, PortSpec& ps);
void read_bridge(const ConfigReader& rd, const YAML::Node& n, BridgeConfig& b);

}  // namespace rs
