#include "control/runtime/settings_ops.h"

#include <fmt/core.h>

#include "control/config/config_dump.h"
#include "control/config/config_loader.h"

namespace rs {
namespace {

// RFC 7386 on YAML trees.
void merge_patch(YAML::Node target, const YAML::Node& patch) {
  for (auto kv : patch) {
    const std::string k = kv.first.as<std::string>();
    if (kv.second.IsNull()) {
      target.remove(k);
    } else if (kv.second.IsMap()) {
      if (!target[k] || !target[k].IsMap()) target[k] = YAML::Node(YAML::NodeType::Map);
      merge_patch(target[k], kv.second);  // into an empty map when there was none: its nulls go
    } else {
      target[k] = YAML::Clone(kv.second);
    }
  }
}

YAML::Node running_tree(const RunningState& st) { return YAML::Load(dump_config(st.config(false))); }

// Loads the edited tree as a file; a loader error's path loses `strip` (the port's prefix, for
// a port.set, whose request names its keys from the port down).
SwitchConfig load_edited(const YAML::Node& root, const std::string& strip) {
  YAML::Emitter e;
  e << root;
  try {
    return load_config_text(e.c_str(), "request");
  } catch (const ConfigError& x) {
    throw OpError{!strip.empty() && x.path.rfind(strip, 0) == 0 ? x.path.substr(strip.size()) : x.path, x.reason};
  }
}

}  // namespace

void buffer_set(RunningState& st, std::size_t op, const YAML::Node& request) {
  YAML::Node root = running_tree(st);
  YAML::Node patch(YAML::NodeType::Map);
  bool any = false;
  for (const char* k : kBufferSections) {
    if (!request[k]) continue;
    any = true;
    if (std::string(k) == "pfc_quanta") patch["qos"]["pfc_quanta"] = request[k];
    else patch[k] = request[k];
  }
  merge_patch(root, patch);
  // Ports by name, as buffer.get writes them (from a file: the request's own keys have none).
  if (const YAML::Node ports = request["ports"]) {
    if (!ports.IsSequence()) throw OpError{"ports", "expected a list"};
    for (std::size_t i = 0; i < ports.size(); ++i) {
      const YAML::Node p = ports[i];
      const std::string at = fmt::format("ports[{}]", i);
      if (!p.IsMap() || !p["name"] || !p["name"].IsScalar()) throw OpError{at + ".name", "missing"};
      const int idx = st.port_index(p["name"].as<std::string>());
      if (idx < 0) throw OpError{at + ".name", fmt::format("no port '{}'", p["name"].as<std::string>())};
      YAML::Node fields(YAML::NodeType::Map);
      for (auto kv : p) {
        const std::string k = kv.first.as<std::string>();
        if (k != "name" && k != "speed_gbps" && k != "cable_length_m" && k != "queues")
          throw OpError{at + "." + k, "unknown key (allowed: name, speed_gbps, cable_length_m, queues)"};
        if (k != "name") fields[k] = kv.second;
      }
      merge_patch(root["ports"][idx], fields);
      any = true;
    }
  }
  if (!any) throw OpError{"", "nothing to set (buffer, wred_profiles, queue_wred, pfcwd, pfc_quanta, load_view)"};
  st.settings_set(op, load_edited(root, ""));
}

void port_settings_set(RunningState& st, std::size_t op, uint16_t port, const YAML::Node& request) {
  YAML::Node root = running_tree(st);
  YAML::Node patch(YAML::NodeType::Map);
  for (const char* k : {"speed_gbps", "queues", "cable_length_m", "mac"})
    if (request[k]) patch[k] = request[k];
  merge_patch(root["ports"][port], patch);
  st.settings_set(op, load_edited(root, fmt::format("ports[{}].", port)));
}

void port_host_set(RunningState& st, std::size_t op, uint16_t port, const YAML::Node& request) {
  YAML::Node root = running_tree(st);
  YAML::Node patch(YAML::NodeType::Map);
  for (const char* k : kPortHostKeys)
    if (request[k]) patch[k] = request[k];
  merge_patch(root["ports"][port], patch);
  SwitchConfig next;
  try {
    next = load_edited(root, fmt::format("ports[{}].", port));
  } catch (OpError& e) {
    // An overlap is reported at the later of the two ports: the request's address is the one.
    if (e.field.starts_with("ports[") && (e.reason.find("overlaps") != std::string::npos))
      e.field = e.field.find("ipv6") != std::string::npos ? "ipv6" : "ipv4";
    throw;
  }
  st.host_set(op, next);
}

void system_set(RunningState& st, std::size_t op, const YAML::Node& request) {
  YAML::Node root = running_tree(st);
  YAML::Node patch(YAML::NodeType::Map);
  for (const char* k : kSystemSections)
    if (request[k]) patch[k] = request[k];
  if (patch.size() == 0) throw OpError{"", "nothing to set (lldp, neighbours, copp, bridge, vlans)"};
  merge_patch(root, patch);
  st.host_set(op, load_edited(root, ""));
}

namespace {
// A YAML document as a file holds it, ending with a newline (yaml-cpp's emitter ends without).
std::string document(const YAML::Node& n) {
  YAML::Emitter e;
  e << n;
  return std::string(e.c_str()) + "\n";
}
}  // namespace

std::string system_get(const RunningState& st) {
  const YAML::Node root = running_tree(st);
  YAML::Node out(YAML::NodeType::Map);
  for (const char* k : kSystemSections)
    if (root[k]) out[k] = root[k];
  return document(out);
}

std::string buffer_get(const RunningState& st) {
  const YAML::Node root = running_tree(st);
  YAML::Node out(YAML::NodeType::Map);
  for (const char* k : kBufferSections)
    if (std::string(k) == "pfc_quanta") {
      if (root["qos"] && root["qos"]["pfc_quanta"]) out["pfc_quanta"] = root["qos"]["pfc_quanta"];
    } else if (root[k]) {
      out[k] = root[k];
    }
  YAML::Node ports(YAML::NodeType::Sequence);
  for (auto p : root["ports"]) {
    YAML::Node q(YAML::NodeType::Map);
    for (const char* k : {"name", "speed_gbps", "cable_length_m", "queues"})
      if (p[k]) q[k] = p[k];
    ports.push_back(q);
  }
  out["ports"] = ports;
  return document(out);
}

}  // namespace rs
