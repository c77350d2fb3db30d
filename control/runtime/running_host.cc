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
    if (auto at = routes_.find(k.first); at != routes_.end())
      throw OpError{ip_field(k.first.ipv6), fmt::format("{} makes route {}, which exists (group '{}'): delete it first", r->why,
                                                        format_prefix(k.first), groups_[at->second] ? groups_[at->second]->name : "?")};
    if (!group_id(k.second)) {
      GroupSpec g;
      g.name = k.second;
      g.origin = GroupOrigin::Connected;
      group_add(op, std::move(g));
    }
    route_add(op, r->route, k.second, false);
  }
}

void RunningState::host_set(std::size_t op, const SwitchConfig& next) {
  require_txn();
  // What the bridge and the control path were built from.
  bool vlans_same = next.vlans == base_.vlans && next.vlan_interfaces.size() == base_.vlan_interfaces.size();
  for (std::size_t v = 0; vlans_same && v < next.vlan_interfaces.size(); ++v)
    vlans_same = next.vlan_interfaces[v].vlan == base_.vlan_interfaces[v].vlan &&
                 rte_is_same_ether_addr(&next.vlan_interfaces[v].mac, &base_.vlan_interfaces[v].mac);
  for (std::size_t p = 0; vlans_same && p < base_.ports.size(); ++p)
    vlans_same = next.ports[p].access_vlan == base_.ports[p].access_vlan && next.ports[p].tagged_vlans == base_.ports[p].tagged_vlans;
  if (!vlans_same) throw OpError{"vlans", "the VLANs, their members and their interfaces are set at start-up"};
  for (auto [same, key] : {std::pair{next.bridge.flood_pps == base_.bridge.flood_pps, "flood_pps"},
                           std::pair{next.bridge.flood_burst == base_.bridge.flood_burst, "flood_burst"},
                           std::pair{next.bridge.fdb_size == base_.bridge.fdb_size, "fdb_size"}})
    if (!same) throw OpError{std::string("bridge.") + key, "set at start-up (the bridge stage's limiter and the FDB are made with it)"};
  if (!group_id(kLocalGroup)) {
    for (auto& p : next.ports)
      if (!p.addrs.empty() || p.lldp)
        throw OpError{!p.addrs.empty() ? ip_field(p.addrs[0].addr.v6) : "lldp",
                      "the switch started with no address and no LLDP on any port, so without a path to its control plane "
                      "(made at start-up): give some port an address in the configuration"};
  }
  interface_routes_set(op, next);
  struct Saved {
    std::vector<PortSpec> ports;
    std::vector<VlanInterface> svis;
    LldpConfig lldp;
    NeighbourConfig neighbours;
    CoppConfig copp;
    double ageing_s;
  };
  txn_.undo.push_back([this, s = Saved{base_.ports, base_.vlan_interfaces, base_.lldp, base_.neighbours, base_.copp, base_.bridge.ageing_s}] {
    for (std::size_t p = 0; p < base_.ports.size(); ++p) {
      base_.ports[p].addrs = s.ports[p].addrs;
      base_.ports[p].icmp_unreachable = s.ports[p].icmp_unreachable;
      base_.ports[p].lldp = s.ports[p].lldp;
    }
    base_.vlan_interfaces = s.svis;
    base_.lldp = s.lldp;
    base_.neighbours = s.neighbours;
    base_.copp = s.copp;
    base_.bridge.ageing_s = s.ageing_s;
  });
  for (std::size_t p = 0; p < base_.ports.size(); ++p) {
    base_.ports[p].addrs = next.ports[p].addrs;
    base_.ports[p].icmp_unreachable = next.ports[p].icmp_unreachable;
    base_.ports[p].lldp = next.ports[p].lldp;
  }
  for (std::size_t v = 0; v < base_.vlan_interfaces.size(); ++v) base_.vlan_interfaces[v].addrs = next.vlan_interfaces[v].addrs;
  base_.lldp = next.lldp;
  base_.neighbours = next.neighbours;
  base_.copp = next.copp;
  base_.bridge.ageing_s = next.bridge.ageing_s;
  txn_.host_dirty = true;
}

}  // namespace rs
