// The switch's interfaces as the LocalAgent sees them: their addresses, their MACs, and where a
// frame the switch makes goes out. A port is one link; a VLAN's interface (SVI) is every member
// port of the VLAN, its hosts each on the port the bridge found its MAC on.
#include <fmt/core.h>

#include <algorithm>
#include <cstring>

#include "control/local/local_agent.h"
#include "dataplane/stages/vlan_tag.h"
#include "dataplane/tables/fdb.h"

namespace rs {

std::string LocalAgent::port_name(uint16_t iface) const {
  if (is_svi(iface)) return fmt::format("Vlan{}", svi_vlan(iface));
  return iface < sw_.num_ports() ? sw_.port(iface).name : std::to_string(iface);
}

void LocalAgent::refresh_host() {
  const SwitchConfig& cfg = sw_.config();
  host_generation_ = sw_.host_generation();
  addrs_.clear();
  for (std::size_t p = 0; p < cfg.ports.size(); ++p)
    for (auto& a : cfg.ports[p].addrs) addrs_.push_back({static_cast<uint16_t>(p), a});
  svis_ = cfg.vlan_interfaces;
  for (auto& v : svis_)
    for (auto& a : v.addrs) addrs_.push_back({svi_iface(v.vlan), a});
  table_.set_params(nud_params(cfg.neighbours));
  lldp_.restart();
  const auto vias = state_.via_next_hops();
  std::vector<NeighbourKey> gone;
  for (const Neighbour* n : table_.entries()) {
    const bool off_subnet = iface_of_subnet(n->key.ip) != n->key.iface &&
                            std::find(vias.begin(), vias.end(), std::pair{n->key.ip, n->key.iface}) == vias.end();
    // A VLAN's host programmed out of a port that has left the VLAN: resolved again on demand.
    const auto at = programmed_port_.find(n->key);
    const bool port_left = at != programmed_port_.end() && svi_port(svi_vlan(n->key.iface), n->mac) != at->second;
    if (off_subnet || port_left || is_ours(n->key.iface, n->key.ip)) gone.push_back(n->key);
  }
  for (auto& k : gone) apply(table_.remove(k));
  // Where the VLANs' hosts were last seen, on ports that left them.
  std::erase_if(seen_on_, [&](const auto& kv) {
    const VlanTable* vt = sw_.vlans();
    return !vt || !((vt->vlan[kv.first.first].members >> (kv.second & 63)) & 1);
  });
}

bool LocalAgent::is_ours(uint16_t iface, const IpAddr& a) const {
  for (auto& x : addrs_)
    if (x.iface == iface && x.a.addr == a) return true;
  return false;
}

const InterfaceAddress* LocalAgent::source_on(uint16_t iface, const IpAddr& peer) const {
  const InterfaceAddress* any = nullptr;
  for (auto& x : addrs_) {
    if (x.iface != iface || x.a.addr.v6 != peer.v6) continue;
    if (peer.in(x.a.addr, x.a.depth)) return &x.a;
    if (!any) any = &x.a;
  }
  if (any) return any;
  for (auto& x : addrs_)  // an unnumbered port answers from another interface's address
    if (x.a.addr.v6 == peer.v6) return &x.a;
  return nullptr;
}

bool LocalAgent::names_a_host(const IpAddr& a) const {
  for (auto& x : addrs_) {
    const uint8_t full = a.v6 ? 128 : 32;
    if (!a.in(x.a.addr, x.a.depth) || x.a.depth >= full - (a.v6 ? 0 : 1)) continue;  // /31, /32, /128 have neither
    bool zeros = true, ones = true;
    for (int b = x.a.depth; b < full; ++b) {
      const bool bit = (a.b[b / 8] >> (7 - b % 8)) & 1;
      zeros &= !bit;
      ones &= bit;
    }
    if (zeros || (!a.v6 && ones)) return false;
  }
  return true;
}

int LocalAgent::iface_of_subnet(const IpAddr& a) const {
  for (auto& x : addrs_)
    if (a.in(x.a.addr, x.a.depth)) return x.iface;
  return -1;
}

rte_ether_addr LocalAgent::mac_of(uint16_t iface) const {
  if (!is_svi(iface)) return sw_.config().ports[iface].mac;
  for (auto& v : svis_)
    if (v.vlan == svi_vlan(iface)) return v.mac;
  return rte_ether_addr{};
}

uint16_t LocalAgent::svi_port(uint16_t vlan, const rte_ether_addr& mac) const {
  uint16_t port = kInvalidPort;
  if (const Fdb* fdb = sw_.fdb())  // the control thread is the FDB's writer: its reads are current
    if (const Fdb::Entry* e = fdb->lookup(Fdb::key(vlan, mac.addr_bytes))) port = e->port.load(std::memory_order_relaxed);
  if (port == kInvalidPort)
    if (auto it = seen_on_.find({vlan, Fdb::key(0, mac.addr_bytes)}); it != seen_on_.end()) port = it->second;
  // A port that left the VLAN (control plane) no longer reaches the VLAN's hosts.
  const VlanTable* vt = sw_.vlans();
  return port < kMaxPorts && vt && ((vt->vlan[vlan].members >> (port & 63)) & 1) ? port : kInvalidPort;
}

void LocalAgent::send_on_port(const uint8_t* frame, uint32_t len, uint16_t port, uint16_t vlan, L3Type l3, uint8_t dscp) {
  rte_mbuf* m = path_.alloc();
  if (!m) {
    ++c_.no_mbuf;
    return;
  }
  char* d = rte_pktmbuf_append(m, static_cast<uint16_t>(len));
  if (!d) {
    rte_pktmbuf_free(m);
    ++c_.no_mbuf;
    return;
  }
  std::memcpy(d, frame, len);
  PacketMeta& pm = meta(m);
  std::memset(&pm, 0, sizeof pm);
  pm.l3 = l3;
  pm.l3_offset = RTE_ETHER_HDR_LEN;
  pm.dscp = dscp;
  const QosMaps& q = sw_.qos();
  pm.tc = q.dscp_to_tc[dscp & 63] & 7;
  if (vlan && retag_frame(m, pm, vlan, (sw_.vlans()->vlan[vlan].tagged >> port) & 1) == Retag::NoRoom) {
    rte_pktmbuf_free(m);
    ++c_.no_mbuf;
    return;
  }
  path_.send(m, port, q.tc_to_queue[pm.tc] & 7, true);
}

void LocalAgent::send_frame(const uint8_t* frame, uint32_t len, uint16_t iface, L3Type l3, uint8_t dscp, uint16_t port) {
  if (!is_svi(iface)) return send_on_port(frame, len, iface, 0, l3, dscp);
  const uint16_t vlan = svi_vlan(iface);
  rte_ether_addr dst;
  std::memcpy(&dst, frame, RTE_ETHER_ADDR_LEN);
  if (port == kInvalidPort && !(dst.addr_bytes[0] & 1)) port = svi_port(vlan, dst);
  if (port != kInvalidPort) return send_on_port(frame, len, port, vlan, l3, dscp);
  // Broadcast, multicast, or a host the bridge does not know yet: every member port that is up.
  const VlanTable& vt = *sw_.vlans();
  for (uint64_t ports = vt.vlan[vlan].members; ports; ports &= ports - 1) {
    const auto p = static_cast<uint16_t>(__builtin_ctzll(ports));
    if (sw_.load().link_up(p)) send_on_port(frame, len, p, vlan, l3, dscp);
  }
}

}  // namespace rs
