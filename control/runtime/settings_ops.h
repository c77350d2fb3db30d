// The port and buffer settings operations: buffer.set (the traffic manager's sections: the
// lossless ones and the load view adaptive routing reads),
// buffer.get, and port.set's speed_gbps, queues, cable_length_m and mac. Each is a merge patch
// (RFC 7386: a map merges into the running configuration's map, a null removes a key, anything
// else replaces) on the configuration file's own sections, loaded back by the config loader,
// so a request is checked as a file is and its errors name the same key paths; the result goes
// to RunningState::settings_set, applied hitlessly at commit.
#pragma once
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <string>

#include "control/runtime/running_state.h"

namespace rs {

// The sections buffer.set takes (its request keys; pfc_quanta is the config's qos.pfc_quanta).
inline constexpr const char* kBufferSections[] = {"buffer", "wred_profiles", "queue_wred", "pfcwd", "pfc_quanta", "load_view"};

// Throw OpError (field: the key path inside the request). buffer_set also takes `ports`, a list of
// {name, speed_gbps, cable_length_m, queues} as buffer_get writes it.
void buffer_set(RunningState& st, std::size_t op, const YAML::Node& request);
// The switch as a host on its links (RunningState::host_set): port.set's keys of ports[] below,
// and system.set's sections (vlans: the whole list, VLANs and their interfaces).
inline constexpr const char* kPortHostKeys[] = {"ipv4", "ipv6", "icmp_unreachable", "lldp", "vlan"};
inline constexpr const char* kSystemSections[] = {"lldp", "neighbours", "copp", "bridge", "vlans"};
void port_host_set(RunningState& st, std::size_t op, uint16_t port, const YAML::Node& request);
void system_set(RunningState& st, std::size_t op, const YAML::Node& request);
// Those sections as they run, as YAML system.set and the config file take.
std::string system_get(const RunningState& st);
void port_settings_set(RunningState& st, std::size_t op, uint16_t port, const YAML::Node& request);
// The running lossless sections and every port's speed, queues and cable length, as YAML a
// buffer.set or the config file takes.
std::string buffer_get(const RunningState& st);

}  // namespace rs
