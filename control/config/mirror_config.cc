#include "control/config/mirror_config.h"

#include <fmt/core.h>

#include "dataplane/switch/mirror_sessions.h"

namespace rs {

MirrorSessionSpec read_mirror_session(const ConfigReader& rd, const YAML::Node& n, const std::string& path,
                                      const std::map<std::string, uint16_t>& ports) {
  rd.keys(n, path, {"name", "dst_port", "rx_ports", "tx_ports", "truncate", "queue"});
  const auto at = [&](const char* k) { return ConfigReader::join(path, k); };
  for (const char* k : {"name", "dst_port"})
    if (!n[k]) rd.fail(n, at(k), "missing");
  auto port = [&](const YAML::Node& p, const std::string& pp) {
    const std::string name = rd.str(p, pp);
    auto it = ports.find(name);
    if (it == ports.end()) rd.fail(p, pp, fmt::format("port '{}' is referenced but not defined in ports", name));
    return it->second;
  };
  MirrorSessionSpec s;
  s.name = rd.str(n["name"], at("name"));
  if (s.name.empty()) rd.fail(n["name"], at("name"), "empty");
  s.dst_port = port(n["dst_port"], at("dst_port"));
  for (const char* key : {"rx_ports", "tx_ports"}) {
    const YAML::Node l = n[key];
    if (!l) continue;
    rd.seq(l, at(key));
    auto& out = std::string_view(key) == "rx_ports" ? s.rx_ports : s.tx_ports;
    for (std::size_t i = 0; i < l.size(); ++i) out.push_back(port(l[i], fmt::format("{}[{}]", at(key), i)));
  }
  if (auto x = n["truncate"]) s.truncate = static_cast<uint32_t>(rd.integer(x, at("truncate"), 0, 65535));
  if (auto x = n["queue"]) s.queue = static_cast<uint8_t>(rd.integer(x, at("queue"), 0, 7));
  return s;
}

void read_mirror_sessions(const ConfigReader& rd, const YAML::Node& n, const std::map<std::string, uint16_t>& ports,
                          SwitchConfig& cfg) {
  rd.seq(n, "mirror_sessions");
  for (std::size_t i = 0; i < n.size(); ++i)
    cfg.mirror_sessions.push_back(read_mirror_session(rd, n[i], fmt::format("mirror_sessions[{}]", i), ports));
  if (auto bad = check_mirror_sessions(cfg.mirror_sessions, cfg.ports.size(), cfg.mmu)) {
    const YAML::Node s = n[bad->session];
    const std::string field = bad->field.substr(0, bad->field.find('['));
    rd.fail(s[field] ? s[field] : s, fmt::format("mirror_sessions[{}].{}", bad->session, bad->field), bad->reason);
  }
}

}  // namespace rs
