#include "control/local/local_agent.h"

#include <fmt/core.h>
#include <rte_ip.h>

#include <cstring>

#include "dataplane/core/log.h"
#include "dataplane/proto/arp.h"
#include "dataplane/proto/icmp.h"
#include "dataplane/proto/nd.h"
#include "dataplane/stages/rewrite.h"
#include "dataplane/stages/vlan_tag.h"
#include "dataplane/tables/fdb.h"

namespace rs {

namespace {
constexpr unsigned kTakeMax = 256;
// Frames the switch makes go in the network-control class (CS6), as a router's protocol
// traffic does.
constexpr uint8_t kNetworkControlDscp = 48;
constexpr uint32_t kFrameCap = 1600;
constexpr uint64_t kUseCheckNs = 1'000'000'000;

}  // namespace

NudParams nud_params(const NeighbourConfig& n) {
  NudParams p;
  p.base_reachable_ns = static_cast<uint64_t>(n.base_reachable_s * 1e9);
  p.delay_first_probe_ns = static_cast<uint64_t>(n.delay_first_probe_s * 1e9);
  p.retrans_ns = static_cast<uint64_t>(n.retrans_s * 1e9);
  p.ucast_probes = n.ucast_probes;
  p.mcast_probes = n.mcast_probes;
  p.gc_stale_ns = static_cast<uint64_t>(n.gc_stale_s * 1e9);
  p.failed_ns = p.retrans_ns;
  p.hold_packets = n.hold_packets;
  p.max_entries = n.max_entries;
  return p;
}

namespace {

rte_ether_addr frame_src(const uint8_t* p) {
  rte_ether_addr a;
  std::memcpy(&a, p + RTE_ETHER_ADDR_LEN, RTE_ETHER_ADDR_LEN);
  return a;
}

DropReason reason_of(DropWhy w) { return w == DropWhy::Failed ? DropReason::NeighborFailed : DropReason::NeighborHoldFull; }
}  // namespace

LocalAgent::LocalAgent(Switch& sw, RunningState& state, std::function<void()> wait)
    : sw_(sw), state_(state), wait_(std::move(wait)), path_(*sw.local()),
      table_(nud_params(sw.config().neighbours), sw.config().seed), lldp_(sw) {
  refresh_host();
}

LocalAgent::~LocalAgent() {
  // Packets still held were never sent: they end with the switch.
  std::vector<NeighbourKey> keys;
  for (const Neighbour* n : table_.entries()) keys.push_back(n->key);
  for (auto& k : keys)
    for (const NudAction& a : table_.remove(k))
      if (a.kind == NudAction::Drop || a.kind == NudAction::Send) {
        path_.drop(static_cast<rte_mbuf*>(a.pkt), DropReason::Shutdown);
        path_.held(-1);
      }
}

void LocalAgent::poll(uint64_t now) {
  if (!started_) {
    // Routes that name their next hops by IP start resolving them at once.
    started_ = true;
    for (auto& [ip, port] : state_.via_next_hops()) apply(table_.resolve(NeighbourKey{port, ip}, nullptr, now));
  }
  if (sw_.host_generation() != host_generation_) refresh_host();
  rte_mbuf* pkts[kTakeMax];
  const unsigned n = path_.take(pkts, kTakeMax);
  for (unsigned i = 0; i < n; ++i) on_packet(pkts[i], now);
  if (table_.next_timer() <= now) apply(table_.tick(now));
  for (auto& [port, frame] : lldp_.due(now))
    send_frame(frame.data(), static_cast<uint32_t>(frame.size()), port, L3Type::None, kNetworkControlDscp);
  lldp_.expire(now);
  if (now >= next_use_check_) {
    note_use(now);
    next_use_check_ = now + kUseCheckNs;
  }
  commit_fib();
}

void LocalAgent::on_packet(rte_mbuf* m, uint64_t now) {
  if (const PacketMeta& pm = meta(m); pm.vlan) {
    const uint8_t* p = rte_pktmbuf_mtod(m, const uint8_t*);
    if (!(p[6] & 1)) seen_on_[{pm.vlan, Fdb::key(0, p + 6)}] = pm.in_port;
  }
  switch (meta(m).punt) {
    case PuntReason::Arp:
      return on_arp(m, now);
    case PuntReason::Local:
      return on_local(m, now);
    case PuntReason::TtlExpired:
      return on_error(m, true);
    case PuntReason::NoRoute:
      return on_error(m, false);
    case PuntReason::Glean:
      return on_glean(m, now);
    case PuntReason::Lldp: {
      const PacketMeta& pm = meta(m);
      const bool ok = lldp_.receive(pm.in_port, rte_pktmbuf_mtod(m, const uint8_t*), m->data_len, pm.l3_offset, now);
      return path_.drop(m, ok ? DropReason::LocalDelivered : DropReason::MalformedLldp);
    }
    default:
      path_.drop(m, DropReason::LocalDelivered);
  }
}

void LocalAgent::on_arp(rte_mbuf* m, uint64_t now) {
  const PacketMeta& pm = meta(m);
  const uint8_t* p = rte_pktmbuf_mtod(m, const uint8_t*);
  proto::ArpPacket a;
  if (proto::parse_arp(p, m->data_len, pm.l3_offset, a) != proto::ArpError::Ok) return path_.drop(m, DropReason::MalformedArp);
  const uint16_t port = iface_of(pm);
  const IpAddr spa = IpAddr::v4(a.spa), tpa = IpAddr::v4(a.tpa);
  const bool for_us = is_ours(port, tpa);
  const InterfaceAddress* src = source_on(port, spa);
  const bool on_link = a.spa != 0 && src && spa.in(src->addr, src->depth) && !is_ours(port, spa);
  const bool gratuitous = proto::arp_is_gratuitous(a);
  if (on_link) {
    // As arp_process: a reply to us confirms the neighbour; a request for us creates its entry
    // (we are about to talk to it); anything else only updates an entry that exists.
    const bool solicited = a.op == proto::kArpOpReply && for_us;
    c_.arp_replies_received += solicited;
    c_.arp_gratuitous += gratuitous;
    apply(table_.learn(NeighbourKey{port, spa}, a.sha, solicited ? NeighbourTable::Learn::SolicitedReply : NeighbourTable::Learn::Unsolicited,
                       true, for_us && a.op == proto::kArpOpRequest, now));
  }
  if (a.op == proto::kArpOpRequest && for_us) {
    ++c_.arp_requests;
    const rte_ether_addr me = mac_of(port);
    proto::ArpPacket r{proto::kArpOpReply, me, a.tpa, a.sha, a.spa};
    uint8_t buf[kFrameCap];
    if (const uint32_t len = proto::build_arp(buf, sizeof buf, a.sha, me, r)) {
      send_frame(buf, len, port, L3Type::None, kNetworkControlDscp, pm.in_port);
      ++c_.arp_replies_sent;
    }
  } else if (!for_us && !gratuitous) {
    ++c_.arp_ignored;
  }
  path_.drop(m, DropReason::LocalDelivered);
}

void LocalAgent::on_local(rte_mbuf* m, uint64_t now) {
  const PacketMeta& pm = meta(m);
  const uint8_t* p = rte_pktmbuf_mtod(m, const uint8_t*);
  const uint32_t len = m->data_len;
  const uint8_t* l3 = p + pm.l3_offset;
  const uint32_t l3_len = len > pm.l3_offset ? len - pm.l3_offset : 0;
  const uint16_t port = iface_of(pm);
  const rte_ether_addr me = mac_of(port);
  uint8_t buf[kFrameCap];
  uint32_t out = 0;
  if (pm.l3 == L3Type::Ipv6 && pm.ip_proto == IPPROTO_ICMPV6 && l3_len > sizeof(rte_ipv6_hdr)) {
    const uint8_t type = l3[sizeof(rte_ipv6_hdr)];
    if (type >= 133 && type <= 137) return on_nd(m, now);
    if (proto::icmp6_echo_request(l3, l3_len)) out = proto::build_icmp6_echo_reply(buf, sizeof buf, frame_src(p), me, l3, l3_len);
  } else if (pm.l3 == L3Type::Ipv4 && pm.ip_proto == IPPROTO_ICMP && proto::icmp4_echo_request(l3, l3_len)) {
    out = proto::build_icmp4_echo_reply(buf, sizeof buf, frame_src(p), me, l3, l3_len);
  }
  if (out) {
    send_frame(buf, out, port, pm.l3, 0, pm.in_port);
    ++c_.echo_replies;
  } else {
    ++c_.other_local;
  }
  path_.drop(m, DropReason::LocalDelivered);
}

void LocalAgent::on_nd(rte_mbuf* m, uint64_t now) {
  const PacketMeta& pm = meta(m);
  const uint8_t* p = rte_pktmbuf_mtod(m, const uint8_t*);
  proto::NdPacket nd;
  if (proto::parse_nd(p, m->data_len, pm.l3_offset, nd) != proto::NdError::Ok) return path_.drop(m, DropReason::MalformedNd);
  const uint16_t port = iface_of(pm);
  const IpAddr src = IpAddr::v6_of(nd.src), target = IpAddr::v6_of(nd.target);
  const int home = iface_of_subnet(src);
  if (nd.type == 135) {
    if (!is_ours(port, target)) {
      ++c_.nd_ignored;
      return path_.drop(m, DropReason::LocalDelivered);
    }
    ++c_.nd_solicitations;
    const bool dad = proto::ipv6_is_unspecified(nd.src);
    if (!dad && nd.has_lladdr && home == port)
      apply(table_.learn(NeighbourKey{port, src}, nd.lladdr, NeighbourTable::Learn::Unsolicited, true, true, now));
    // A router's answer: R, S (unless answering duplicate address detection, to all nodes), O.
    uint8_t all_nodes[16] = {0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    rte_ether_addr dst_mac = nd.has_lladdr ? nd.lladdr : frame_src(p);
    if (dad) proto::multicast_mac(all_nodes, dst_mac);
    const rte_ether_addr me = mac_of(port);
    uint8_t buf[kFrameCap];
    if (const uint32_t len = proto::build_na(buf, sizeof buf, dst_mac, me, nd.target, dad ? all_nodes : nd.src, nd.target,
                                             dad ? 0xA0 : 0xE0)) {
      send_frame(buf, len, port, L3Type::Ipv6, kNetworkControlDscp, dad ? kInvalidPort : pm.in_port);
      ++c_.nd_adverts_sent;
    }
  } else if (nd.type == 136) {
    ++c_.nd_adverts_received;
    if (iface_of_subnet(target) == port && !is_ours(port, target)) {
      const bool solicited = nd.flags & 0x40, override_mac = nd.flags & 0x20;
      apply(table_.learn(NeighbourKey{port, target}, nd.has_lladdr ? nd.lladdr : frame_src(p),
                         solicited ? NeighbourTable::Learn::SolicitedReply : NeighbourTable::Learn::Unsolicited, override_mac, false, now));
    }
  } else {
    ++c_.nd_ignored;  // router solicitations and adverts, redirects: a router that sends no RAs ignores them
  }
  path_.drop(m, DropReason::LocalDelivered);
}

void LocalAgent::on_error(rte_mbuf* m, bool ttl) {
  const PacketMeta& pm = meta(m);
  const uint8_t* p = rte_pktmbuf_mtod(m, const uint8_t*);
  const uint8_t* l3 = p + pm.l3_offset;
  const uint32_t l3_len = m->data_len > pm.l3_offset ? m->data_len - pm.l3_offset : 0;
  const uint16_t port = iface_of(pm);
  const rte_ether_addr me = mac_of(port);
  uint8_t buf[kFrameCap];
  uint32_t len = 0;
  // Never about a packet that came in a link-layer broadcast or multicast frame (RFC 1812
  // 4.3.2.7, RFC 4443 2.4 e.3).
  if (p[0] & 1) {
    ++c_.icmp_not_sent;
    return path_.drop(m, ttl ? DropReason::TtlExpired : DropReason::NoRoute);
  }
  if (pm.l3 == L3Type::Ipv4 && l3_len >= sizeof(rte_ipv4_hdr)) {
    uint32_t s;
    std::memcpy(&s, l3 + offsetof(rte_ipv4_hdr, src_addr), 4);
    if (const InterfaceAddress* a = source_on(port, IpAddr::v4(s)))
      len = proto::build_icmp4_error(buf, sizeof buf, frame_src(p), me, a->addr.v4_be(), ttl ? 11 : 3, 0, l3, l3_len);
  } else if (pm.l3 == L3Type::Ipv6 && l3_len >= sizeof(rte_ipv6_hdr)) {
    if (const InterfaceAddress* a = source_on(port, IpAddr::v6_of(l3 + offsetof(rte_ipv6_hdr, src_addr))))
      len = proto::build_icmp6_error(buf, sizeof buf, frame_src(p), me, a->addr.b.data(), ttl ? 3 : 1, 0, l3, l3_len);
  }
  if (len) {
    send_frame(buf, len, port, pm.l3, kNetworkControlDscp, pm.in_port);
    ++(ttl ? c_.ttl_exceeded_sent : c_.unreachable_sent);
  } else {
    ++c_.icmp_not_sent;
  }
  path_.drop(m, ttl ? DropReason::TtlExpired : DropReason::NoRoute);
}

void LocalAgent::on_glean(rte_mbuf* m, uint64_t now) {
  const PacketMeta& pm = meta(m);
  const auto& g = pm.group < state_.group_slots() ? state_.group(pm.group) : std::optional<GroupSpec>{};
  if (!g) return path_.drop(m, DropReason::BadNextHop);
  NeighbourKey k;
  if (g->origin == GroupOrigin::Connected) {
    const uint8_t* l3 = rte_pktmbuf_mtod(m, const uint8_t*) + pm.l3_offset;
    IpAddr dst;
    if (pm.l3 == L3Type::Ipv4) {
      uint32_t d;
      std::memcpy(&d, l3 + offsetof(rte_ipv4_hdr, dst_addr), 4);
      dst = IpAddr::v4(d);
    } else {
      dst = IpAddr::v6_of(l3 + offsetof(rte_ipv6_hdr, dst_addr));
    }
    const int port = iface_of_subnet(dst);
    // A subnet's own address and its broadcast name no host: a router never resolves them
    // (RFC 1812 5.3.5.2; the IPv6 subnet-router anycast likewise).
    if (port < 0 || is_ours(static_cast<uint16_t>(port), dst) || !names_a_host(dst)) return path_.drop(m, DropReason::NoRoute);
    k = NeighbourKey{static_cast<uint16_t>(port), dst};
  } else {
    // Next hops by IP, none resolved yet: the flow's choice among them waits for its MAC.
    std::vector<const GroupMemberSpec*> via;
    for (auto& mm : g->members)
      if (mm.via) via.push_back(&mm);
    if (via.empty()) return path_.drop(m, DropReason::BadNextHop);
    const GroupMemberSpec& pick = *via[pm.flow_hash % via.size()];
    k = NeighbourKey{member_iface(pick), *pick.via};
  }
  ++c_.gleaned;
  path_.held(1);
  apply(table_.resolve(k, m, now));
}

void LocalAgent::release(rte_mbuf* m, uint16_t iface, const rte_ether_addr& mac) {
  PacketMeta& pm = meta(m);
  const uint16_t vlan = is_svi(iface) ? svi_vlan(iface) : 0;
  const uint16_t port = vlan ? svi_port(vlan, mac) : iface;
  if (port == kInvalidPort) return path_.drop(m, DropReason::NeighborFailed);  // answered, then gone from the VLAN
  uint8_t* p = rte_pktmbuf_mtod(m, uint8_t*);
  std::memcpy(p, &mac, RTE_ETHER_ADDR_LEN);
  const rte_ether_addr me = mac_of(iface);
  std::memcpy(p + RTE_ETHER_ADDR_LEN, &me, RTE_ETHER_ADDR_LEN);
  // The route stage let it through with a TTL of at least 2; this is its rewrite.
  if (pm.l3 == L3Type::Ipv4) decrement_ttl_ipv4(p + pm.l3_offset);
  else reinterpret_cast<rte_ipv6_hdr*>(p + pm.l3_offset)->hop_limits--;
  if (vlan && retag_frame(m, pm, vlan, (sw_.vlans()->vlan[vlan].tagged >> port) & 1) == Retag::NoRoom)
    return path_.drop(m, DropReason::MalformedVlan);
  path_.send(m, port, pm.queue, false);
}

void LocalAgent::probe(const NeighbourKey& k, const rte_ether_addr* unicast) {
  const InterfaceAddress* src = source_on(k.iface, k.ip);
  if (!src) return;
  const rte_ether_addr me = mac_of(k.iface);
  uint8_t buf[kFrameCap];
  uint32_t len;
  if (!k.ip.v6) {
    rte_ether_addr bcast;
    std::memset(&bcast, 0xFF, sizeof bcast);
    proto::ArpPacket a{proto::kArpOpRequest, me, src->addr.v4_be(), unicast ? *unicast : rte_ether_addr{}, k.ip.v4_be()};
    len = proto::build_arp(buf, sizeof buf, unicast ? *unicast : bcast, me, a);
  } else {
    len = proto::build_ns(buf, sizeof buf, me, src->addr.b.data(), k.ip.b.data(), unicast != nullptr, unicast ? *unicast : rte_ether_addr{});
  }
  if (!len) return;
  send_frame(buf, len, k.iface, k.ip.v6 ? L3Type::Ipv6 : L3Type::None, kNetworkControlDscp);
  ++c_.probes_sent;
}

void LocalAgent::apply(const NudActions& actions) {
  for (const NudAction& a : actions) {
    switch (a.kind) {
      case NudAction::ProbeMulticast:
        probe(a.key, nullptr);
        break;
      case NudAction::ProbeUnicast:
        probe(a.key, &a.mac);
        break;
      case NudAction::Resolved:
        pending_[a.key] = a.mac;
        break;
      case NudAction::Unresolved:
        pending_[a.key] = std::nullopt;
        break;
      case NudAction::Send:
        path_.held(-1);
        release(static_cast<rte_mbuf*>(a.pkt), a.key.iface, a.mac);
        break;
      case NudAction::Drop:
        path_.held(-1);
        path_.drop(static_cast<rte_mbuf*>(a.pkt), reason_of(a.why));
        break;
    }
  }
}

void LocalAgent::note_use(uint64_t now) {
  // What went to each neighbour since the last look (its host route's next hop, and every
  // member naming it): traffic keeps an entry alive as a Linux host's own traffic does.
  std::map<NeighbourKey, uint64_t> seen;
  for (std::size_t g = 0; g < state_.group_slots(); ++g) {
    const auto& spec = state_.group(static_cast<uint32_t>(g));
    if (!spec) continue;
    const auto& nhs = state_.member_nexthops(static_cast<uint32_t>(g));
    for (std::size_t i = 0; i < spec->members.size() && i < nhs.size(); ++i) {
      const GroupMemberSpec& mm = spec->members[i];
      std::optional<IpAddr> ip = mm.via;
      if (!ip && spec->origin == GroupOrigin::Neighbour) ip = parse_ip(spec->name.substr(std::strlen(kNeighbourGroupPrefix)));
      if (ip) seen[NeighbourKey{member_iface(mm), *ip}] += sw_.nexthop_packets(nhs[i]);
    }
  }
  for (auto& [k, n] : seen) {
    uint64_t& last = last_packets_[k];
    if (n > last) apply(table_.used(k, now));
    last = n;
  }
  // A VLAN interface's neighbour the bridge found on another port: its next hop moves there.
  for (const Neighbour* nb : table_.entries()) {
    auto it = programmed_port_.find(nb->key);
    if (it == programmed_port_.end() || !nb->has_mac) continue;
    const uint16_t port = svi_port(svi_vlan(nb->key.iface), nb->mac);
    if (port != kInvalidPort && port != it->second) pending_.emplace(nb->key, nb->mac);
  }
}

void LocalAgent::commit_fib() {
  if (pending_.empty()) return;
  state_.begin();
  try {
    for (auto& [k, mac] : pending_) {
      // On a VLAN's interface the next hop goes out of the port the neighbour was found on.
      const uint16_t vlan = is_svi(k.iface) ? svi_vlan(k.iface) : 0;
      const uint16_t port = vlan && mac ? svi_port(vlan, *mac) : k.iface;
      if (mac && port != kInvalidPort) {
        state_.neighbour_route_set(0, k.ip, port, *mac, vlan);
        if (vlan) programmed_port_[k] = port;
      } else {
        state_.neighbour_route_del(0, k.ip);
        programmed_port_.erase(k);
      }
      state_.via_resolve(0, k.ip, k.iface, port, port == kInvalidPort ? std::nullopt : mac);
    }
  } catch (const OpError& e) {
    state_.abort();
    ++c_.fib_errors;
    log(LogLevel::Warn, "neighbours: {}: {}", e.field, e.reason);
    pending_.clear();
    return;
  }
  if (auto err = state_.commit(wait_)) {
    ++c_.fib_errors;
    log(LogLevel::Warn, "neighbours: {}", err->second.reason);
  } else {
    ++c_.fib_commits;
  }
  pending_.clear();
}

}  // namespace rs
