// A fabric written out switch by switch and cable by cable (docs/fabric.md):
//   fabric:
//     switches: [{name, hosts: N, host_gbps, config: FILE}]   # FILE: a whole roceswitch config
//     links: [{a, b, gbps, cable_m, loss}]                     # an end: SWITCH (a new port) or
//                                                               # SWITCH.PORT (named, or a FILE's link port)
// Routes are computed as for the generated topologies (fabric_routes). Each mistake is refused
// with the key path and the reason: a switch named twice, a link to a port that does not exist,
// is not a link port or is already linked (two links between the same pair of ports among
// them), a switch cabled to itself, a config's link port that no link joins, two hosts with one
// address, a host some switch cannot reach.
#pragma once
#include <yaml-cpp/yaml.h>

#include <string>

#include "control/config/config_reader.h"
#include "control/fabric/fabric_topology.h"

namespace rs {

// Builds the switches and cables of `fab` (fabric.switches, fabric.links) into `b.f`, then its
// routes with `policy`. `source` is the fabric file: a switch's FILE is found beside it.
void read_custom_topology(const ConfigReader& rd, const YAML::Node& fab, FabricBuilder& b, const PolicySpec& policy,
                          const std::string& source);

}  // namespace rs
