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
  if (next.bridge.fdb_size != base_.bridge.fdb_size) throw OpError{"bridge.fdb_size", "set at start-up (the FDB's table is made with it)"};
  // What the switch was made with: a bridge (its FDB) when it started with VLANs, a path to its
  // control plane when some port had an address or LLDP.
  if (!sw_.fdb() && !next.vlans.empty())
    throw OpError{"vlans", "the switch started with no VLAN, so without a bridge (its FDB is made at start-up): declare a VLAN in the configuration"};
  if (!group_id(kLocalGroup)) {
    for (auto& p : next.ports)
      if (!p.addrs.empty() || p.lldp || p.icmp_unreachable)
        throw OpError{!p.addrs.empty() ? ip_field(p.addrs[0].addr.v6) : p.lldp ? "lldp" : "icmp_unreachable",
                      "the switch started with no address and no LLDP on any port, so without a path to its control plane "
                      "(made at start-up): give some port an address in the configuration"};
    if (!next.vlan_interfaces.empty())
      throw OpError{"vlans", "the switch started with no address and no LLDP on any port, so without a path to its control plane "
                             "(made at start-up): a VLAN interface needs one"};
  }
  interface_routes_set(op, next);
  // What host_set changes, taken from a configuration (the undo takes it from the one before).
  auto take = [this](const SwitchConfig& from) {
    for (std::size_t p = 0; p < base_.ports.size(); ++p) {
      PortSpec& ps = base_.ports[p];
      ps.addrs = from.ports[p].addrs;
      ps.icmp_unreachable = from.ports[p].icmp_unreachable;
      ps.lldp = from.ports[p].lldp;
      ps.access_vlan = from.ports[p].access_vlan;
      ps.tagged_vlans = from.ports[p].tagged_vlans;
    }
    base_.vlans = from.vlans;
    base_.vlan_interfaces = from.vlan_interfaces;
    base_.lldp = from.lldp;
    base_.neighbours = from.neighbours;
    base_.copp = from.copp;
    base_.bridge = from.bridge;
  };
  txn_.undo.push_back([this, take, before = base_] { take(before); });
  take(next);
  txn_.host_dirty = true;
}

}  // namespace rs
