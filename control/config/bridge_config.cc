#include "control/config/bridge_config.h"

#include "control/config/interface_config.h"

#include <fmt/core.h>

#include <algorithm>

namespace rs {

void read_vlans(const ConfigReader& rd, const YAML::Node& n, SwitchConfig& cfg) {
  rd.seq(n, "vlans");
  for (std::size_t i = 0; i < n.size(); ++i) {
    const std::string path = fmt::format("vlans[{}]", i);
    const YAML::Node item = n[i];
    // A VLAN id, or {id, ipv4, ipv6, mac}: the VLAN with its router interface (SVI).
    const bool svi = item.IsMap();
    if (svi) {
      rd.keys(item, path, {"id", "ipv4", "ipv6", "mac"});
      if (!item["id"]) rd.fail(item, path + ".id", "missing");
    }
    const std::string id_path = svi ? path + ".id" : path;
    const YAML::Node id_node = svi ? item["id"] : item;
    const auto id = static_cast<uint16_t>(rd.integer(id_node, id_path, 1, kMaxVlanId));
    if (std::find(cfg.vlans.begin(), cfg.vlans.end(), id) != cfg.vlans.end()) rd.fail(id_node, id_path, fmt::format("VLAN {} is given twice", id));
    cfg.vlans.push_back(id);
    if (!svi) continue;
    VlanInterface v;
    v.vlan = id;
    // Apart from the ports' default MACs (02:52:53:00:00:port).
    v.mac = item["mac"] ? rd.mac(item["mac"], path + ".mac")
                        : rte_ether_addr{{0x02, 0x52, 0x53, 0x01, static_cast<uint8_t>(id >> 8), static_cast<uint8_t>(id)}};
    read_addresses(rd, item, path, v.addrs);
    if (v.addrs.empty()) rd.fail(item, path, "a VLAN interface needs an address (ipv4 or ipv6); a plain VLAN is just its id");
    cfg.vlan_interfaces.push_back(std::move(v));
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
    rd.fail(n, path, "a bridged port has no addresses of its own: give them to its VLAN's interface (vlans: [{id: 10, ipv4: 10.0.10.1/24}])");
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
