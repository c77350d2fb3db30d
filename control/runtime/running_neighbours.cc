// What the switch's control plane changes in the running state by itself, as it resolves
// neighbours: each resolved host's route (/32 or /128 to a group of its own, "neighbour:IP",
// as an ASIC's neighbour entry is a host route), and the members that name a next hop by IP.
#include <fmt/core.h>

#include <cstring>

#include "control/runtime/running_state.h"

namespace rs {

namespace {
RouteSpec host_route(const IpAddr& ip) {
  RouteSpec r;
  r.ipv6 = ip.v6;
  std::memcpy(r.addr, ip.b.data(), 16);
  r.depth = ip.v6 ? 128 : 32;
  return r;
}
std::string neighbour_group(const IpAddr& ip) { return kNeighbourGroupPrefix + format_ip(ip); }
}  // namespace

void RunningState::neighbour_route_set(std::size_t op, const IpAddr& ip, uint16_t port, const rte_ether_addr& mac, uint16_t vlan) {
  require_txn();
  const RouteKey k = route_key(host_route(ip));
  // A host route the config or an operator set stays theirs.
  if (auto at = routes_.find(k); at != routes_.end() && groups_[at->second] && groups_[at->second]->origin != GroupOrigin::Neighbour &&
                                 groups_[at->second]->name != neighbour_group(ip))
    return;
  Internal in(internal_);
  GroupSpec g;
  g.name = neighbour_group(ip);
  g.origin = GroupOrigin::Neighbour;
  g.members.push_back(static_member(port, mac));
  g.members.back().vlan = vlan;
  if (group_id(g.name)) group_set(op, std::move(g));
  else group_add(op, std::move(g));
  route_add(op, host_route(ip), neighbour_group(ip), true);
}

void RunningState::neighbour_route_del(std::size_t op, const IpAddr& ip) {
  require_txn();
  const auto id = group_id(neighbour_group(ip));
  if (!id) return;
  Internal in(internal_);
  const RouteKey k = route_key(host_route(ip));
  if (auto at = routes_.find(k); at != routes_.end() && at->second == *id) route_del(op, host_route(ip));
  if (refs_[*id] == 0) group_del(op, neighbour_group(ip));
}

void RunningState::via_resolve(std::size_t op, const IpAddr& ip, uint16_t iface, uint16_t port, std::optional<rte_ether_addr> mac) {
  require_txn();
  Internal in(internal_);
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    if (!groups_[g]) continue;
    GroupSpec next = *groups_[g];
    bool changed = false;
    for (auto& m : next.members) {
      if (!m.via || *m.via != ip || member_iface(m) != iface) continue;
      const bool resolved = mac.has_value();
      const rte_ether_addr want = mac.value_or(rte_ether_addr{});
      // A VLAN interface's next hop goes out of the port its MAC was found on.
      const uint16_t want_port = m.vlan ? (resolved ? port : kInvalidPort) : m.port;
      if (m.resolved == resolved && m.port == want_port && std::memcmp(&m.mac, &want, sizeof want) == 0) continue;
      m.resolved = resolved;
      m.mac = want;
      m.port = want_port;
      changed = true;
    }
    if (changed) group_set(op, std::move(next));
  }
}

std::vector<std::pair<IpAddr, uint16_t>> RunningState::via_next_hops() const {
  std::vector<std::pair<IpAddr, uint16_t>> out;
  for (auto& g : groups_)
    if (g)
      for (auto& m : g->members)
        if (m.via && std::find(out.begin(), out.end(), std::pair{*m.via, member_iface(m)}) == out.end()) out.emplace_back(*m.via, member_iface(m));
  return out;
}

}  // namespace rs
