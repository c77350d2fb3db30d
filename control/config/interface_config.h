// Reads what a config says about the switch as a host on its links: the ports' addresses
// (`ports[].ipv4`, `ipv6`, `icmp_unreachable`), next hops by IP (`via: 10.0.2.2`,
// `nexthops: [{ip: 10.0.2.2}]`), the control plane's policers (`copp:`) and its neighbour
// settings (`neighbours:`). Failures name the file, line, key path and reason.
#pragma once
#include <yaml-cpp/yaml.h>

#include <map>
#include <string>

#include "control/config/config_reader.h"
#include "dataplane/switch/switch_config.h"

namespace rs {

// ipv4 / ipv6 of a port or a VLAN: one address with its prefix length, or a list; an address
// of the wrong family, a network or broadcast address of its subnet, or a duplicate is refused.
void read_addresses(const ConfigReader& rd, const YAML::Node& p, const std::string& path, std::vector<InterfaceAddress>& out);
// A port's addresses and its other router-interface keys (icmp_unreachable, lldp).
void read_port_addresses(const ConfigReader& rd, const YAML::Node& p, const std::string& path, PortSpec& ps);
// No two interfaces' subnets (ports' and VLANs') may overlap (the connected routes would
// compete); names both.
void check_interface_overlap(const ConfigReader& rd, const YAML::Node& ports, const YAML::Node& vlans, const SwitchConfig& cfg);
// A next hop given by its address: the port is the one whose subnet holds it (or `port`, which
// must); on a VLAN's subnet, the member has the VLAN and the port is found with its MAC. Its
// MAC is found by ARP / neighbour discovery.
GroupMemberSpec read_via_member(const ConfigReader& rd, const YAML::Node& ip, const YAML::Node& port, const std::string& path,
                                const std::string& port_path,
                                const std::map<std::string, uint16_t>& ports, const SwitchConfig& cfg);
void read_copp(const ConfigReader& rd, const YAML::Node& n, CoppConfig& c);
void read_neighbours(const ConfigReader& rd, const YAML::Node& n, NeighbourConfig& c);
// lldp: {interval_s, hold, system_name, system_description}; ports[].lldp turns it on per port.
void read_lldp(const ConfigReader& rd, const YAML::Node& n, LldpConfig& c);

}  // namespace rs
