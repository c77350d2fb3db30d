#include "control/config/bridge_config.h"

#include <fmt/core.h>

#include <algorithm>

namespace rs {

void read_vlans(const ConfigReader& rd, const YAML::Node& n, SwitchConfig& cfg) {
  rd.seq(n, "vlans");
  for (std::size_t i = 0; i < n.size(); ++i) {
    const std::string path = fmt::format("vlans[{}]", i);
    const auto id = static_cast<uint16_t>(rd.integer(n[i], path, 1, kMaxVlanId));
    if (std::find(cfg.vlans.begin(), cfg.vlans.end(), id) != cfg.vlans.end()) rd.fail(n[i], path, fmt::format("VLAN {} is given twice", id));
    cfg.vlans.push_back(id);
  }
}

void read_port_vlans(const ConfigReader& rd, const YAML::Node& n, const std::string& path, const SwitchConfig& cfg, PortSpec& ps) {
  rd.map(n, path);
  rd.keys(n, path, {"access", "tagged"});
  auto declared = [&](const YAML::Node& x, const std::string& p) {
    const auto id = static_cast<uint16_t>(rd.integer(x, p, 1, kMaxVlanId));
    if (std::find(cfg.vlans.begin(), cfg.vlans.end(), id) == cfg.vlans.end())
      rd.fail(x, p, fmt::format("VLAN {} is not declared in vlans", id));
    return id;
  };
  if (auto x = n["access"]) ps.access_vlan = declared(x, path + ".access");
  if (auto t = n["tagged"]) {
    rd.seq(t, path + ".tagged");
    for (std::size_t i = 0; i < t.size(); ++i) {
      const std::string p = fmt::format("{}.tagged[{}]", path, i);
      const uint16_t id = declared(t[i], p);
      if (id == ps.access_vlan) rd.fail(t[i], p, fmt::format("VLAN {} is the port's access VLAN: a port carries a VLAN untagged or tagged, not both", id));
      if (std::find(ps.tagged_vlans.begin(), ps.tagged_vlans.end(), id) != ps.tagged_vlans.end())
        rd.fail(t[i], p, fmt::format("VLAN {} is given twice", id));
      ps.tagged_vlans.push_back(id);
    }
  }
  if (ps.bridged() && !ps.addrs.empty())
    rd.fail(n, path, "a bridged port has no addresses of its own (a VLAN interface, SVI, is not supported yet): drop ipv4/ipv6 or the VLAN");
}

void read_bridge(const ConfigReader& rd, const YAML::Node& n, BridgeConfig& b) {
  rd.map(n, "bridge");
  rd.keys(n, "bridge", {"ageing_s", "flood_pps", "flood_burst", "fdb_size"});
  if (auto x = n["ageing_s"]) b.ageing_s = rd.real(x, "bridge.ageing_s", 1, 1e6);
  if (auto x = n["flood_pps"]) b.flood_pps = static_cast<uint32_t>(rd.integer(x, "bridge.flood_pps", 0, 1'000'000'000));
  if (auto x = n["flood_burst"]) b.flood_burst = static_cast<uint32_t>(rd.integer(x, "bridge.flood_burst", 1, 1'000'000'000));
  if (auto x = n["fdb_size"]) b.fdb_size = static_cast<uint32_t>(rd.integer(x, "bridge.fdb_size", 64, 1 << 22));
}

}  // namespace rs
