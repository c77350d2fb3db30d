// RunningState::host_set: the switch as a host on its links, changed at run time as SONiC's
// `config interface ip add` and its CoPP, LLDP and neighbour settings are. An interface's
// addresses carry their routes with them (the same ones add_interface_routes makes at
// start-up), in the operator's transaction, so the address and what it routes appear at once.
#include <fmt/core.h>

#include <map>

#include "control/runtime/running_state.h"

namespace rs {

namespace {
std::string ip_field(bool v6) { return v6 ? "ipv6" : "ipv4"; }
}  // namespace

void RunningState::interface_routes_set(std::size_t op, const SwitchConfig& next) {
  using Key = std::pair<RouteKey, std::string>;
  std::map<Key, const InterfaceRoute*> had, has;
  const std::vector<InterfaceRoute> before = interface_routes(base_), after = interface_routes(next);
  for (auto& r : before) had[{route_key(r.route), r.group}] = &r;
  for (auto& r : after) has[{route_key(r.route), r.group}] = &r;
  Internal in(internal_);
  for (auto& [k, r] : had) {
    if (has.count(k)) continue;
    if (auto at = routes_.find(k.first); at != routes_.end() && groups_[at->second] && groups_[at->second]->name == k.second)
      route_del(op, r->route);
    if (const auto g = group_id(k.second); g && k.second != kLocalGroup && refs_[*g] == 0) group_del(op, k.second);
  }
  for (auto& [k, r] : has) {
    if (had.count(k)) continue;
    // A neighbour resolved at the new address gives way to it (the switch made its route).
    if (auto at = routes_.find(k.first); at != routes_.end() && groups_[at->second] && groups_[at->second]->origin == GroupOrigin::Neighbour) {
      IpAddr ip;
      ip.v6 = k.first.ipv6;
      std::copy(k.first.addr.begin(), k.first.addr.end(), ip.b.begin());
      neighbour_route_del(op, ip);
    }
    if (auto at = routes_.find(k.first); at != routes_.end())
      throw OpError{ip_field(k.first.ipv6), fmt::format("{} makes route {}, which exists (group '{}'): delete it first", r->why,
                                                        format_prefix(k.first), groups_[at->second] ? groups_[at->second]->name : "?")};
    if (!group_id(k.second)) group_add(op, connected_group(k.second));
    route_add(op, r->route, k.second, false);
  }
}

void RunningState::host_set(std::size_t op, const SwitchConfig& next) {
  require_txn();
  if (next.bridge.fdb_size != base_.bridge.fdb_size) throw OpError{"bridge.fdb_size", "set at start-up (the FDB's table is made with it)"};
  // What the switch was made with: a bridge (its FDB) when it started with VLANs, a path to its
  // control plane when some port had an address or LLDP.
  if (!sw_.fdb() && !next.vlans.empty())
    throw OpError{"vlans", "the switch started with no VLAN, so without a bridge (its FDB is made at start-up): declare a VLAN in the configuration"};
  if (!sw_.local()) {
    constexpr const char* kNoPath = "the switch started with no address and no LLDP on any port, so without a path to its control "
                                    "plane (made at start-up): give some port an address in the configuration";
    for (std::size_t i = 0; i < base_.ports.size(); ++i) {
      const PortSpec &p = next.ports[i], &was = base_.ports[i];
      if (p.addrs != was.addrs) throw OpError{ip_field(!p.addrs.empty() && p.addrs[0].addr.v6), kNoPath};
      if (p.lldp != was.lldp) throw OpError{"lldp", kNoPath};
      if (p.icmp_unreachable != was.icmp_unreachable) throw OpError{"icmp_unreachable", kNoPath};
    }
    if (!next.vlan_interfaces.empty()) throw OpError{"vlans", std::string(kNoPath) + " (a VLAN interface needs one)"};
  }
  // A next hop that group members name by IP stays in a subnet of its interface, and not ours.
  for (auto& [ip, iface] : via_next_hops()) {
    const std::vector<InterfaceAddress>* addrs = nullptr;
    if (!is_svi(iface)) addrs = iface < next.ports.size() ? &next.ports[iface].addrs : nullptr;
    for (auto& v : next.vlan_interfaces)
      if (is_svi(iface) && v.vlan == svi_vlan(iface)) addrs = &v.addrs;
    bool held = false, own = false;
    for (std::size_t i = 0; addrs && i < addrs->size(); ++i) {
      held |= (*addrs)[i].addr.v6 == ip.v6 && ip.in((*addrs)[i].addr, (*addrs)[i].depth);
      own |= (*addrs)[i].addr == ip;
    }
    if (!held || own)
      throw OpError{is_svi(iface) ? "vlans" : ip_field(ip.v6),
                    fmt::format("group members name next hop {} on {}, which would be {}: change those groups first", format_ip(ip),
                                is_svi(iface) ? fmt::format("Vlan{}", svi_vlan(iface)) : base_.ports[iface].name,
                                own ? "the switch's own address" : "in no subnet of it")};
  }
  interface_routes_set(op, next);
  txn_.undo.push_back([this, before = base_] { copy_host_settings(base_, before); });
  copy_host_settings(base_, next);
  txn_.host_dirty = true;
}

}  // namespace rs
