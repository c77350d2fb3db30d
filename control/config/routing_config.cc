#include "control/config/routing_config.h"

#include <rte_lpm.h>

#include <algorithm>
#include <set>
#include <string_view>

#include "dataplane/routing/routing_policy.h"

namespace rs {

// DPDK's own maxima (rte_lpm6.c keeps RTE_LPM6_TBL8_MAX_NUM_GROUPS, 1 << 21, to itself).
static_assert(kMaxTbl8V4 == RTE_LPM_MAX_TBL8_NUM_GROUPS);

GroupMemberSpec read_member(const ConfigReader& rd, const YAML::Node& m, const std::string& mp,
                            const std::map<std::string, uint16_t>& ports, bool inline_in_route) {
  if (!inline_in_route) rd.keys(m, mp, {"port", "mac", "weight"});
  if (!m["port"]) rd.fail(m, mp + ".port", "missing");
  if (!m["mac"]) rd.fail(m, mp + ".mac", "missing: the next hop's MAC address");
  GroupMemberSpec gm;
  const std::string name = rd.str(m["port"], mp + ".port");
  auto it = ports.find(name);
  if (it == ports.end()) rd.fail(m["port"], mp + ".port", fmt::format("port '{}' is referenced but not defined in ports", name));
  gm.port = it->second;
  gm.mac = rd.mac(m["mac"], mp + ".mac");
  if (auto w = m["weight"]) gm.weight = static_cast<uint32_t>(rd.integer(w, mp + ".weight", 1, 64));
  return gm;
}

GroupSpec read_group(const ConfigReader& rd, const YAML::Node& g, const std::string& gp,
                     const std::map<std::string, uint16_t>& ports) {
  rd.keys(g, gp, {"name", "policy", "policy_by_tc", "table_size", "members", "drop"});
  GroupSpec spec;
  if (!g["name"]) rd.fail(g, gp + ".name", "missing");
  spec.name = rd.str(g["name"], gp + ".name");
  if (spec.name.rfind(kRouteGroupPrefix, 0) == 0)
    rd.fail(g["name"], gp + ".name",
            fmt::format("'{}': names starting with '{}' are reserved for the groups routes make for themselves (port + mac, nexthops)",
                        spec.name, kRouteGroupPrefix));
  if (auto d = g["drop"]) {
    read_drop(rd, d, gp + ".drop");
    for (const char* k : kForwardingGroupKeys)
      if (g[k]) rd.fail(g[k], gp + "." + k, "a drop group (a blackhole) has no members and no policy");
    return drop_group(spec.name);
  }
  if (auto x = g["policy"]) spec.policy = read_policy(rd, x, gp + ".policy");
  if (auto x = g["policy_by_tc"]) read_policy_by_tc(rd, x, gp + ".policy_by_tc", spec);
  if (auto x = g["table_size"]) {
    spec.table_size = static_cast<uint32_t>(rd.integer(x, gp + ".table_size", 1, 1 << 16));
    if (spec.table_size & (spec.table_size - 1)) rd.fail(x, gp + ".table_size", "must be a power of two");
  }
  if (!g["members"]) rd.fail(g, gp + ".members", "missing");
  rd.seq(g["members"], gp + ".members");
  if (g["members"].size() == 0) rd.fail(g["members"], gp + ".members", "a group needs at least one member");
  if (g["members"].size() > kMaxGroupMembers)
    rd.fail(g["members"], gp + ".members", fmt::format("{} members; a group has at most {}", g["members"].size(), kMaxGroupMembers));
  for (std::size_t k = 0; k < g["members"].size(); ++k)
    spec.members.push_back(read_member(rd, g["members"][k], fmt::format("{}.members[{}]", gp, k), ports));
  uint32_t total_w = 0;
  for (auto& m : spec.members) total_w += m.weight;
  if (total_w > spec.table_size) rd.fail(g, gp + ".table_size", fmt::format("{} slots cannot hold total weight {}", spec.table_size, total_w));
  return spec;
}

void read_drop(const ConfigReader& rd, const YAML::Node& d, const std::string& path) {
  if (!rd.boolean(d, path)) rd.fail(d, path, "only drop: true is meaningful (a blackhole); leave it out otherwise");
}

PolicySpec read_policy(const ConfigReader& rd, const YAML::Node& n, const std::string& path) {
  PolicySpec spec;
  if (n.IsMap() && !n["name"]) rd.fail(n, path + ".name", "missing: the routing policy's name");
  // Not `name_node = n["name"]` on a copy of n: assigning a yaml-cpp node rebinds what both refer to.
  const YAML::Node name_node = n.IsMap() ? n["name"] : n;
  spec.name = rd.str(name_node, n.IsMap() ? path + ".name" : path);
  const int id = RoutingPolicyRegistry::find(spec.name);
  if (id < 0)
    rd.fail(name_node, n.IsMap() ? path + ".name" : path,
            fmt::format("unknown routing policy '{}' (known: {})", spec.name, RoutingPolicyRegistry::names()));
  if (!n.IsMap()) return spec;
  const RoutingPolicyEntry& e = RoutingPolicyRegistry::at(static_cast<std::size_t>(id));
  for (auto kv : n) {
    const std::string key = rd.key(kv.first, path);
    if (key == "name") continue;
    const std::string kp = path + "." + key;
    const int k = param_index(e.params, key);
    if (k < 0) {
      std::string known;
      for (auto& p : e.params) known += (known.empty() ? "" : ", ") + std::string(p.name);
      rd.fail(kv.first, kp, fmt::format("policy '{}' has no parameter '{}' (it has: {})", spec.name, key,
                                        known.empty() ? "none" : known));
    }
    if (!kv.second.IsScalar()) rd.fail(kv.second, kp, "expected a value");
    const ParsedParam v = parse_param(e.params[static_cast<std::size_t>(k)], rd.str(kv.second, kp));
    if (!v.error.empty()) rd.fail(kv.second, kp, v.error);
    spec.params.emplace_back(key, v.value);
  }
  return spec;
}

void read_policy_by_tc(const ConfigReader& rd, const YAML::Node& n, const std::string& path, GroupSpec& g) {
  rd.map(n, path);
  for (auto kv : n) {
    int64_t tc = -1;
    if (!kv.first.IsScalar() || !YAML::convert<int64_t>::decode(kv.first, tc) || tc < 0 || tc > 7)
      rd.fail(kv.first, fmt::format("{}.{}", path, kv.first.as<std::string>("?")), "not a traffic class (0..7)");
    g.policy_by_tc[static_cast<std::size_t>(tc)] = read_policy(rd, kv.second, fmt::format("{}.{}", path, tc));
  }
}

void read_load_view(const ConfigReader& rd, const YAML::Node& n, LoadViewConfig& lv) {
  const std::string path = "load_view";
  rd.keys(n, path, {"queue_thresholds_bytes", "rate_thresholds_pct", "rate_interval_us", "rate_weight"});
  // Seven thresholds, not decreasing: whole bytes, or percents.
  auto seven = [&](const char* key, auto& arr, auto read) {
    const YAML::Node x = n[key];
    if (!x) return;
    const std::string kp = path + "." + key;
    rd.seq(x, kp);
    if (x.size() != 7) rd.fail(x, kp, fmt::format("expected 7 thresholds (bands 7..0), got {}", x.size()));
    for (std::size_t i = 0; i < 7; ++i) {
      const std::string ip = fmt::format("{}[{}]", kp, i);
      arr[i] = read(x[i], ip);
      if (i > 0 && arr[i] < arr[i - 1]) rd.fail(x[i], ip, "thresholds must not decrease");
    }
  };
  seven("queue_thresholds_bytes", lv.queue_thresholds_bytes,
        [&](const YAML::Node& v, const std::string& p) { return static_cast<uint64_t>(rd.integer(v, p, 0, 1'000'000'000'000)); });
  seven("rate_thresholds_pct", lv.rate_thresholds_pct, [&](const YAML::Node& v, const std::string& p) { return rd.real(v, p, 0, 100); });
  if (auto x = n["rate_interval_us"]) lv.rate_interval_ns = rd.nanoseconds(x, path + ".rate_interval_us", 1, 1e6, 1e3);
  if (auto x = n["rate_weight"]) lv.rate_weight = rd.real(x, path + ".rate_weight", 0.001, 1);
}

void read_link_events(const ConfigReader& rd, const YAML::Node& n, const std::map<std::string, uint16_t>& ports,
                      SwitchConfig& cfg) {
  rd.seq(n, "link_events");
  for (std::size_t i = 0; i < n.size(); ++i) {
    const YAML::Node e = n[i];
    const std::string ep = fmt::format("link_events[{}]", i);
    rd.keys(e, ep, {"port", "at_s", "state"});
    for (const char* k : {"port", "at_s", "state"})
      if (!e[k]) rd.fail(e, ep + "." + k, "missing");
    LinkEvent ev;
    const std::string port = rd.str(e["port"], ep + ".port");
    auto it = ports.find(port);
    if (it == ports.end()) rd.fail(e["port"], ep + ".port", fmt::format("port '{}' is referenced but not defined in ports", port));
    ev.port = it->second;
    ev.at_ns = rd.nanoseconds(e["at_s"], ep + ".at_s", 0, 1e6, 1e9);
    const std::string state = rd.str(e["state"], ep + ".state");
    if (state != "up" && state != "down") rd.fail(e["state"], ep + ".state", "expected 'up' or 'down'");
    ev.up = state == "up";
    cfg.link_events.push_back(ev);
  }
  std::stable_sort(cfg.link_events.begin(), cfg.link_events.end(), [](auto& a, auto& b) { return a.at_ns < b.at_ns; });
}

void read_limits(const ConfigReader& rd, const YAML::Node& n, RouteLimits& limits) {
  rd.keys(n, "limits", {"routes_v4", "routes_v6", "tbl8_v4", "tbl8_v6", "prefault"});
  auto get = [&](const char* key, uint32_t& dst, uint32_t hi) {
    if (auto x = n[key]) dst = static_cast<uint32_t>(rd.integer(x, fmt::format("limits.{}", key), 1, hi));
  };
  get("routes_v4", limits.v4, kMaxRoutesV4);
  get("routes_v6", limits.v6, kMaxRoutesV6);
  get("tbl8_v4", limits.v4_tbl8, kMaxTbl8V4);
  get("tbl8_v6", limits.v6_tbl8, kMaxTbl8V6);
  if (auto x = n["prefault"]) limits.prefault = rd.boolean(x, "limits.prefault");
}

RouteTableNeeds route_table_needs(const std::vector<RouteSpec>& routes) {
  RouteTableNeeds n;
  std::set<uint32_t> v4_groups;      // the /24s holding a longer prefix
  std::set<std::string> v6_nodes;    // a node: the first k bytes (3 <= k < 16) of the prefixes under it
  for (const RouteSpec& route : routes) {
    const RouteSpec r = ConfigReader::masked(route);
    ++(r.ipv6 ? n.v6 : n.v4);
    if (r.depth <= 24) continue;
    if (!r.ipv6) {
      v4_groups.insert(static_cast<uint32_t>(r.addr[0]) << 16 | static_cast<uint32_t>(r.addr[1]) << 8 | r.addr[2]);
      continue;
    }
    // The first level (tbl24) takes 3 bytes; each tbl8 below takes one more, down to the one
    // holding bit `depth`: nodes keyed by the first 3 .. ceil(depth / 8) - 1 bytes.
    for (int k = 3; k < (r.depth + 7) / 8; ++k) v6_nodes.emplace(reinterpret_cast<const char*>(r.addr), static_cast<std::size_t>(k));
  }
  n.v4_tbl8 = static_cast<uint32_t>(v4_groups.size());
  n.v6_tbl8 = static_cast<uint32_t>(v6_nodes.size());
  return n;
}

std::optional<LimitProblem> check_limits(const RouteLimits& l, const RouteTableNeeds& n) {
  struct Row {
    const char* key;
    uint32_t limit, max, need;
    std::string what;
  };
  const Row rows[] = {
      {"routes_v4", l.v4, kMaxRoutesV4, n.v4, "IPv4 routes (the default route counts too)"},
      {"routes_v6", l.v6, kMaxRoutesV6, n.v6, "IPv6 routes (the default route counts too)"},
      {"tbl8_v4", l.v4_tbl8, kMaxTbl8V4, n.v4_tbl8, "IPv4 tbl8 groups (one per /24 holding a longer prefix)"},
      {"tbl8_v6", l.v6_tbl8, kMaxTbl8V6, n.v6_tbl8,
       "IPv6 tbl8 groups (one per 8 bits of a prefix beyond its first 24, shared by prefixes that agree)"},
  };
  for (const Row& r : rows) {
    if (r.limit < 1 || r.limit > r.max) return LimitProblem{r.key, fmt::format("{} is out of range [1, {}]", r.limit, r.max)};
    if (r.need > r.limit) {
      const bool tbl8 = std::string_view(r.key).starts_with("tbl8");
      return LimitProblem{r.key, fmt::format("{}{} {} but limits.{} is {}", tbl8 ? "routes need " : "", r.need, r.what, r.key, r.limit)};
    }
  }
  return std::nullopt;
}

}  // namespace rs
