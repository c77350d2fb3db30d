// The routes a router interface's addresses make: what SONiC's intfmgrd/fpmsyncd install for an
// interface (the address as a host route to the CPU, the subnet as a connected route whose hosts
// are resolved one by one).
#include <fmt/core.h>

#include <set>
#include <stdexcept>

#include "dataplane/switch/switch_config.h"

namespace rs {

namespace {
RouteSpec prefix_route(const IpAddr& a, uint8_t depth, uint32_t group) {
  RouteSpec r;
  r.ipv6 = a.v6;
  r.depth = depth;
  r.group = group;
  for (unsigned i = 0; i < (a.v6 ? 16u : 4u); ++i) {
    const unsigned bits = depth > 8 * i ? std::min(8u, depth - 8 * i) : 0;
    r.addr[i] = static_cast<uint8_t>(a.b[i] & (0xFF00u >> bits));
  }
  return r;
}
std::string text(const RouteSpec& r) {
  IpAddr a;
  a.v6 = r.ipv6;
  std::copy(r.addr, r.addr + 16, a.b.begin());
  return fmt::format("{}/{}", format_ip(a), r.depth);
}
}  // namespace

std::vector<InterfaceRoute> interface_routes(const SwitchConfig& cfg) {
  std::vector<InterfaceRoute> out;
  bool any_v6 = false;
  // `name` as the connected group names it: the port's, or VlanN.
  auto add_iface = [&](const std::string& label, const std::string& name, const std::vector<InterfaceAddress>& addrs) {
    for (auto& a : addrs) {
      const std::string what = fmt::format("{}'s address {}/{}", label, format_ip(a.addr), a.depth);
      out.push_back({prefix_route(a.addr, a.addr.v6 ? 128 : 32, 0), kLocalGroup, what});
      any_v6 |= a.addr.v6;
      if (a.depth == (a.addr.v6 ? 128 : 32)) continue;
      const RouteSpec subnet = prefix_route(a.addr, a.depth, 0);
      out.push_back({subnet, fmt::format("{}{}:{}", kConnectedGroupPrefix, name, text(subnet)), what});
    }
  };
  for (auto& p : cfg.ports) add_iface("port " + p.name, p.name, p.addrs);
  for (auto& v : cfg.vlan_interfaces) add_iface(fmt::format("VLAN {}", v.vlan), fmt::format("Vlan{}", v.vlan), v.addrs);
  if (any_v6) {
    IpAddr mc;
    mc.v6 = true;
    mc.b[0] = 0xff;
    mc.b[1] = 0x02;
    out.push_back({prefix_route(mc, 16, 0), kLocalGroup, "neighbour discovery (some interface has an IPv6 address)"});
  }
  return out;
}

void add_interface_routes(SwitchConfig& cfg) {
  if (!cfg.has_addresses()) return;
  std::set<std::tuple<bool, std::string>> taken;
  for (auto& r : cfg.routes) taken.emplace(r.ipv6, text(r));
  GroupSpec local;
  local.name = kLocalGroup;
  local.origin = GroupOrigin::Local;
  const auto local_id = static_cast<uint32_t>(cfg.groups.size());
  cfg.groups.push_back(local);
  for (InterfaceRoute& ir : interface_routes(cfg)) {
    if (!taken.emplace(ir.route.ipv6, text(ir.route)).second)
      throw std::runtime_error(fmt::format("route {}: {} makes this route itself", text(ir.route), ir.why));
    if (ir.group == kLocalGroup) {
      ir.route.group = local_id;
    } else {
      ir.route.group = static_cast<uint32_t>(cfg.groups.size());
      cfg.groups.push_back(connected_group(ir.group));
    }
    cfg.routes.push_back(ir.route);
  }
}

}  // namespace rs
