#include "control/config/routing_config.h"

#include <algorithm>

#include "dataplane/routing/routing_policy.h"

namespace rs {

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
    const std::string key = kv.first.as<std::string>();
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
    const ParsedParam v = parse_param(e.params[static_cast<std::size_t>(k)], kv.second.as<std::string>());
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
  auto seven = [&](const char* key, auto& arr, double hi) {
    const YAML::Node x = n[key];
    if (!x) return;
    const std::string kp = path + "." + key;
    rd.seq(x, kp);
    if (x.size() != 7) rd.fail(x, kp, fmt::format("expected 7 thresholds (bands 7..0), got {}", x.size()));
    for (std::size_t i = 0; i < 7; ++i) {
      arr[i] = static_cast<std::remove_reference_t<decltype(arr[i])>>(rd.real(x[i], fmt::format("{}[{}]", kp, i), 0, hi));
      if (i > 0 && arr[i] < arr[i - 1]) rd.fail(x[i], fmt::format("{}[{}]", kp, i), "thresholds must not decrease");
    }
  };
  seven("queue_thresholds_bytes", lv.queue_thresholds_bytes, 1e12);
  seven("rate_thresholds_pct", lv.rate_thresholds_pct, 100);
  if (auto x = n["rate_interval_us"]) lv.rate_interval_ns = static_cast<uint64_t>(rd.real(x, path + ".rate_interval_us", 1, 1e6) * 1000);
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
    ev.at_ns = static_cast<uint64_t>(rd.real(e["at_s"], ep + ".at_s", 0, 1e6) * 1e9);
    const std::string state = rd.str(e["state"], ep + ".state");
    if (state != "up" && state != "down") rd.fail(e["state"], ep + ".state", "expected 'up' or 'down'");
    ev.up = state == "up";
    cfg.link_events.push_back(ev);
  }
  std::stable_sort(cfg.link_events.begin(), cfg.link_events.end(), [](auto& a, auto& b) { return a.at_ns < b.at_ns; });
}

}  // namespace rs
