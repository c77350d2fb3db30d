// `mirror_sessions:` (SONiC's MIRROR_SESSION of type SPAN; the P4 program's mirror sessions
// with their mirror_ingress / mirror_egress entries), the same in a config file and in a
// `mirror.set` request:
//   mirror_sessions:
//     - {name: span, dst_port: p4, rx_ports: [p0, p1], tx_ports: [p2], truncate: 128, queue: 0}
// Copies of what rx_ports receive and tx_ports send go to dst_port's queue, cut to truncate
// bytes (0 or absent: whole frames). A session watching no port yet is valid (BMv2 scripts
// make the session before the table entries). Failures name the key path.
#pragma once
#include <yaml-cpp/yaml.h>

#include <map>
#include <string>
#include <vector>

#include "control/config/config_reader.h"
#include "dataplane/switch/switch_config.h"

namespace rs {

MirrorSessionSpec read_mirror_session(const ConfigReader& rd, const YAML::Node& n, const std::string& path,
                                      const std::map<std::string, uint16_t>& ports);
// The whole section, checked as the switch will (dataplane/switch/mirror_sessions.h) against
// the ports and the lossless queues already read into cfg.
void read_mirror_sessions(const ConfigReader& rd, const YAML::Node& n, const std::map<std::string, uint16_t>& ports,
                          SwitchConfig& cfg);

}  // namespace rs
