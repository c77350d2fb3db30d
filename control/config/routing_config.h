// Reads what a config says about routing beyond routes and members: a group's policy and its
// parameters (`policy: drill`, `policy: {name: flowlet_quality, idle_time_us: 256}`), per-class
// policies (`policy_by_tc: {3: spray}`), the load view's quality bands (`load_view:`), and
// scheduled link changes (`link_events:`). Every value is checked against what the policy
// declares (routing/policy_params.h); a failure names the file, line, key path and reason.
#pragma once
#include <yaml-cpp/yaml.h>

#include <map>
#include <string>

#include "control/config/config_reader.h"
#include "dataplane/switch/switch_config.h"

namespace rs {

// A member is {port, mac, weight}; a route's shorthand carries port and mac inline.
GroupMemberSpec read_member(const ConfigReader& rd, const YAML::Node& m, const std::string& path,
                            const std::map<std::string, uint16_t>& ports, bool inline_in_route = false);
// A next-hop group: name, policy, policy_by_tc, table_size, members (checked: at least one,
// at most kMaxGroupMembers, total weight within the table).
GroupSpec read_group(const ConfigReader& rd, const YAML::Node& g, const std::string& path,
                     const std::map<std::string, uint16_t>& ports);
PolicySpec read_policy(const ConfigReader& rd, const YAML::Node& n, const std::string& path);
void read_policy_by_tc(const ConfigReader& rd, const YAML::Node& n, const std::string& path, GroupSpec& g);
void read_load_view(const ConfigReader& rd, const YAML::Node& n, LoadViewConfig& lv);
void read_link_events(const ConfigReader& rd, const YAML::Node& n, const std::map<std::string, uint16_t>& ports,
                      SwitchConfig& cfg);

}  // namespace rs
