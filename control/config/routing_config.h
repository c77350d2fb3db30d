// Reads what a config says about routing beyond routes and members: a group's policy and its
// parameters (`policy: drill`, `policy: {name: flowlet_quality, idle_time_us: 256}`), per-class
// policies (`policy_by_tc: {3: spray}`), the load view's quality bands (`load_view:`),
// scheduled link changes (`link_events:`) and the route tables' sizes (`limits:`). Every value
// is checked against what the policy declares (routing/policy_params.h); a failure names the
// file, line, key path and reason.
#pragma once
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "control/config/config_reader.h"
#include "dataplane/switch/switch_config.h"

namespace rs {

// The name of the group a route given as port + mac or nexthops makes for itself:
// "route:" and the prefix as the file writes it. Reserved: no named group may start so.
inline constexpr const char* kRouteGroupPrefix = "route:";

// A member is {port, mac, weight}; a route's shorthand carries port and mac inline.
GroupMemberSpec read_member(const ConfigReader& rd, const YAML::Node& m, const std::string& path,
                            const std::map<std::string, uint16_t>& ports, bool inline_in_route = false);
// A next-hop group: name, policy, policy_by_tc, table_size, members (checked: at least one,
// at most kMaxGroupMembers, total weight within the table), or name and `drop: true` alone (a
// blackhole). A name starting with kRouteGroupPrefix is refused: those are the groups routes
// make for themselves.
GroupSpec read_group(const ConfigReader& rd, const YAML::Node& g, const std::string& path,
                     const std::map<std::string, uint16_t>& ports);
// What a group that forwards has and a drop group (a blackhole) may not give.
inline constexpr const char* kForwardingGroupKeys[] = {"members", "policy", "policy_by_tc", "table_size"};
// `drop:` of a route or a group: only `true` means something (a blackhole); refused otherwise.
void read_drop(const ConfigReader& rd, const YAML::Node& d, const std::string& path);
PolicySpec read_policy(const ConfigReader& rd, const YAML::Node& n, const std::string& path);
void read_policy_by_tc(const ConfigReader& rd, const YAML::Node& n, const std::string& path, GroupSpec& g);
void read_load_view(const ConfigReader& rd, const YAML::Node& n, LoadViewConfig& lv);
void read_link_events(const ConfigReader& rd, const YAML::Node& n, const std::map<std::string, uint16_t>& ports,
                      SwitchConfig& cfg);

// `limits:` (routes_v4, routes_v6, tbl8_v4, tbl8_v6): what each route table holds at most,
// run-time changes included. The ranges are DPDK's: rte_lpm takes up to 2^24 tbl8 groups
// (RTE_LPM_MAX_TBL8_NUM_GROUPS), rte_lpm6 up to 2^21 (RTE_LPM6_TBL8_MAX_NUM_GROUPS, its next-hop
// field's width), and neither takes 0 of anything; routes up to 16M IPv4 and 4M IPv6.
constexpr uint32_t kMaxRoutesV4 = 1u << 24, kMaxRoutesV6 = 1u << 22, kMaxTbl8V4 = 1u << 24, kMaxTbl8V6 = 1u << 21;
void read_limits(const ConfigReader& rd, const YAML::Node& n, RouteLimits& limits);

// What a set of routes needs of the route tables. Routes per family, the default route
// included (it is held beside the LPM, but counts against the limit as at run time). tbl8
// groups: rte_lpm needs one per /24 that holds a longer prefix; rte_lpm6 one per trie node
// below its 24-bit first level, that is one for each prefix of the first 3, 4, ... bytes of a
// route down to the byte that holds its last bit, shared by routes that agree on those bytes.
// Both tables allocate exactly these when the routes are added (host bits do not count).
struct RouteTableNeeds {
  uint32_t v4 = 0, v6 = 0, v4_tbl8 = 0, v6_tbl8 = 0;
};
RouteTableNeeds route_table_needs(const std::vector<RouteSpec>& routes);
// The first limit `needs` exceeds, or one out of its range: the key in `limits:` and why.
struct LimitProblem {
  std::string key;  // routes_v4, routes_v6, tbl8_v4, tbl8_v6
  std::string reason;
};
std::optional<LimitProblem> check_limits(const RouteLimits& limits, const RouteTableNeeds& needs);

}  // namespace rs
