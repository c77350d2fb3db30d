// The whole switch as plain data, already validated and with names resolved to indices. The
// YAML loader in control/ produces it; tests build it directly.
#pragma once
#include <rte_ether.h>

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <utility>
#include <string>
#include <vector>

#include "dataplane/emu/emulated_host.h"
#include "dataplane/nic/collective.h"
#include "dataplane/nic/traffic.h"
#include "dataplane/proto/ip_addr.h"
#include "dataplane/ports/fault_port.h"
#include "dataplane/tm/buffer/mmu_config.h"
#include "dataplane/tm/queue/load_view.h"
#include "dataplane/tm/queue/queue_config.h"
#include "dataplane/tables/fib.h"
#include "dataplane/tables/copp.h"
#include "dataplane/tables/vlan_table.h"
#include "dataplane/tables/qos_maps.h"

namespace rs {

// Nic: an emulated host whose NIC is on a DPDK ethdev (the host on a real link, not a switch port
// the pipeline forwards to). Link: one end of an emulated cable to another switch of a fabric
// (dataplane/fabric/), made by the fabric that owns the cable.
enum class PortKind : uint8_t { Ethdev, EmulatedHost, Nic, Link };

// A router interface's address (`ports[].ipv4: 10.0.1.1/24`): the switch answers ARP/ND and
// ping for `addr`, and the prefix it is in is a connected route out of the port.
struct InterfaceAddress {
  IpAddr addr;
  uint8_t depth = 0;
  bool operator==(const InterfaceAddress&) const = default;
};

struct PortSpec {
  std::string name;
  PortKind kind = PortKind::EmulatedHost;
  std::string devargs;
  rte_ether_addr mac{};
  EgressConfig egress;  // egress.speed_gbps is the port's link rate
  HostSpec host;        // for emulated hosts
  std::function<std::unique_ptr<Port>()> make_link;  // for Link: the cable's end
  PortLosslessConfig lossless;  // PGs, headroom, WRED/ECN per queue, PFC quanta
  int worker = -1;      // -1: spread round robin
  bool admin_up = true; // `admin: down` keeps the link down from the start
  FaultSpec faults;     // none by default (fault_port.h)
  std::vector<InterfaceAddress> addrs;  // router interface addresses, IPv4 and IPv6
  bool icmp_unreachable = false;        // answer a miss from this port with ICMP unreachable
  bool lldp = false;                    // send LLDP with DCBX TLVs out of this port
  // VLAN membership (802.1Q): untagged frames belong to `access` (0: none), tagged ones to their
  // VLAN when it is in `tagged`. A port in some VLAN is bridged: its frames are switched by MAC
  // within the VLAN (bridge stage), not routed.
  uint16_t access_vlan = 0;
  std::vector<uint16_t> tagged_vlans;
  bool bridged() const { return access_vlan != 0 || !tagged_vlans.empty(); }
};

// A VLAN's router interface (SVI, SONiC's VLAN_INTERFACE): the bridge hands the router the
// VLAN's frames sent to `mac`, and the addresses' subnets are connected routes into the VLAN,
// their hosts found on whichever member port the bridge learned them.
struct VlanInterface {
  uint16_t vlan = 0;
  rte_ether_addr mac{};
  std::vector<InterfaceAddress> addrs;
};

// Where a router interface is, as the neighbour table and the control plane's frames name it:
// a port (its index) or a VLAN's interface (kSviIface | the VLAN id).
inline constexpr uint16_t kSviIface = 0x8000;
inline bool is_svi(uint16_t iface) { return (iface & 0xF000) == kSviIface; }
inline uint16_t svi_iface(uint16_t vlan) { return static_cast<uint16_t>(kSviIface | vlan); }
inline uint16_t svi_vlan(uint16_t iface) { return iface & 0x0FFF; }


// What the switch says of itself in LLDP (every port that sends it).
struct LldpConfig {
  double interval_s = 30;  // 802.1AB msgTxInterval
  uint32_t hold = 4;       // msgTxHold: the TTL sent is interval x hold
  std::string system_name = "roceswitch";
  std::string system_description = "roceswitch RoCEv2 switch data plane";
  bool operator==(const LldpConfig&) const = default;
};

// How the control plane keeps its neighbours (ARP / ND cache), Linux's NUD settings by name.
struct NeighbourConfig {
  double base_reachable_s = 30;
  double delay_first_probe_s = 5;
  double retrans_s = 1;
  uint32_t ucast_probes = 3;
  uint32_t mcast_probes = 3;
  uint32_t hold_packets = 3;  // per neighbour while it is resolved (Linux's unres_qlen)
  double gc_stale_s = 60;
  uint32_t max_entries = 1024;
  bool operator==(const NeighbourConfig&) const = default;
};

// A member is a port and the next hop's MAC: given (static), or found by ARP / neighbour
// discovery for the next hop's address `via` (resolved once the control plane knows the MAC;
// until then it takes no traffic, and a group with no resolved member punts its packets).
// A next hop on a VLAN interface has its `vlan`: its frames are tagged as the port it was
// learned on (`port`, found by the control plane) carries the VLAN.
struct GroupMemberSpec {
  uint16_t port = 0;
  rte_ether_addr mac{};
  uint32_t weight = 1;
  std::optional<IpAddr> via;
  bool resolved = true;
  uint16_t vlan = 0;
};
// Where a member's next hop is: its port, or its VLAN's interface (svi_iface).
inline uint16_t member_iface(const GroupMemberSpec& m) { return m.vlan ? svi_iface(m.vlan) : m.port; }
// A member with its MAC given, weight 1.
inline GroupMemberSpec static_member(uint16_t port, const rte_ether_addr& mac) {
  GroupMemberSpec m;
  m.port = port;
  m.mac = mac;
  return m;
}

// A routing policy by name, with the parameters given (the rest take the policy's defaults).
struct PolicySpec {
  std::string name = "ecmp";
  std::vector<std::pair<std::string, double>> params;
};

// Who made a group: the config or the control plane (a route's own group counts as the
// config's); the others follow from the ports' addresses and the neighbours found, and are not
// written by `config dump`: Local takes packets for the switch's own addresses, Connected those
// for a port's subnet (resolved host by host), Neighbour is a resolved host's route.
enum class GroupOrigin : uint8_t { Config, Local, Connected, Neighbour };

struct GroupSpec {
  std::string name;
  GroupOrigin origin = GroupOrigin::Config;
  PolicySpec policy;
  std::array<std::optional<PolicySpec>, 8> policy_by_tc;  // a class's own policy, if any
  uint32_t table_size = 64;
  std::vector<GroupMemberSpec> members;
  // A blackhole (the P4 program's drop() action as a route's entry): no members and no policy;
  // what its routes match is dropped as no_route, as a route's miss is.
  bool drop = false;
  // A group changed at run time starts its redirection table from the one the switch has for
  // it, so flows of members it keeps stay where they were (Fib::rebalance_table). A new group
  // starts from the group named here, if any: the one its routes move from.
  std::string table_from;
};

// A blackhole group of that name: drop, and every other field at its default.
inline GroupSpec drop_group(std::string name) {
  GroupSpec g;
  g.name = std::move(name);
  g.drop = true;
  return g;
}

// A connected subnet's group (interface_routes): no members, its hosts resolved one by one.
inline GroupSpec connected_group(std::string name) {
  GroupSpec g;
  g.name = std::move(name);
  g.origin = GroupOrigin::Connected;
  return g;
}

// A scheduled link change (an emulated cable cut, a maintenance window): `at_ns` after start.
struct LinkEvent {
  uint16_t port = 0;
  uint64_t at_ns = 0;
  bool up = false;
};

// A mirror session (SONiC's MIRROR_SESSION of type SPAN; the P4 program's mirror sessions with
// their mirror_ingress / mirror_egress entries): copies of what the source ports receive
// (rx_ports) or send (tx_ports), cut to `truncate` bytes (0: whole), queued on dst_port.
struct MirrorSessionSpec {
  std::string name;
  uint16_t dst_port = 0;
  uint8_t queue = 0;
  uint32_t truncate = 0;
  std::vector<uint16_t> rx_ports, tx_ports;
};

struct SwitchConfig {
  std::string source = "<embedded>";
  uint16_t workers = 1;
  uint32_t seed = 1;
  uint32_t mbufs = 16384;
  std::string pipeline_text;    // YAML; empty means the built-in l3_roce pipeline
  std::string pipeline_source;
  QosMaps qos = QosMaps::sonic_default();
  MmuConfig mmu;                // shared buffer, pfc_enable, PFC watchdog
  std::vector<PortSpec> ports;
  std::vector<GroupSpec> groups;
  std::vector<RouteSpec> routes;  // RouteSpec::group indexes `groups`
  std::vector<LinkEvent> link_events;  // sorted by at_ns
  std::vector<MirrorSessionSpec> mirror_sessions;
  LoadViewConfig load_view;
  RouteLimits route_limits;       // what each route table holds at most (run-time changes too)
  CoppConfig copp;                // what each port may punt to the control plane
  NeighbourConfig neighbours;
  LldpConfig lldp;
  std::vector<uint16_t> vlans;  // the VLANs the bridge has (1..4094)
  std::vector<VlanInterface> vlan_interfaces;
  BridgeConfig bridge;
  // Collectives over emulated NICs (dataplane/nic/collective.h): their queue pairs are in the
  // ranks' hosts, tagged with the collective's index + 1.
  std::vector<nic::CollectiveSpec> collectives;
  // Traffic patterns (dataplane/nic/traffic.h): their queue pairs are in the hosts, marked with
  // the pattern's index + 1.
  std::vector<nic::TrafficSpec> traffic;
  bool has_bridge() const { return !vlans.empty(); }
  // Whether some port has an address: then the switch runs its control plane's packet path
  // (ARP, ND, ICMP, neighbours).
  // (or sends LLDP, which the same path carries).
  bool has_addresses() const {
    for (auto& p : ports)
      if (!p.addrs.empty() || p.lldp) return true;
    return !vlan_interfaces.empty();
  }
  double duration_s = 0;          // demo runs set one; 0 = until signalled
};

// The first port pinned to a worker the switch does not have: its index, or -1. The loader,
// --workers and a core list can each change the count; all three ask this.
inline int port_on_missing_worker(const SwitchConfig& cfg) {
  for (std::size_t i = 0; i < cfg.ports.size(); ++i)
    if (cfg.ports[i].worker >= cfg.workers) return static_cast<int>(i);
  return -1;
}

// The routes the ports' addresses make (appended to cfg.groups and cfg.routes; the loader calls
// it once the ports and routes are read): each address as a /32 or /128 to the `local` group,
// the subnet it is in to a Connected group of its port, and ff02::/16 (neighbour discovery's
// multicast) to `local` when some port has an IPv6 address. Throws when a route of the config
// has the same prefix. The group names start with these (reserved, as kRouteGroupPrefix is).
inline constexpr const char* kLocalGroup = "local";
inline constexpr const char* kConnectedGroupPrefix = "connected:";
inline constexpr const char* kNeighbourGroupPrefix = "neighbour:";
void add_interface_routes(SwitchConfig& cfg);
// Those routes, in that order, each with the name of the group it leads to (kLocalGroup, or
// its subnet's Connected group) and what makes it ("port p0's address 10.0.1.1/24"); `group`
// of the RouteSpec is 0. The control plane changes them when an interface's addresses do.
struct InterfaceRoute {
  RouteSpec route;
  std::string group;
  std::string why;
};
std::vector<InterfaceRoute> interface_routes(const SwitchConfig& cfg);

// The switch's settings as a host on its links, which the control plane changes at run time
// (RunningState::host_set, Switch::set_host_settings): the ports' addresses, icmp_unreachable,
// lldp and VLAN membership; the VLANs and their interfaces; lldp, neighbours, copp, bridge.
inline void copy_host_settings(SwitchConfig& to, const SwitchConfig& from) {
  for (std::size_t p = 0; p < to.ports.size() && p < from.ports.size(); ++p) {
    PortSpec& ps = to.ports[p];
    ps.addrs = from.ports[p].addrs;
    ps.icmp_unreachable = from.ports[p].icmp_unreachable;
    ps.lldp = from.ports[p].lldp;
    ps.access_vlan = from.ports[p].access_vlan;
    ps.tagged_vlans = from.ports[p].tagged_vlans;
  }
  to.vlans = from.vlans;
  to.vlan_interfaces = from.vlan_interfaces;
  to.lldp = from.lldp;
  to.neighbours = from.neighbours;
  to.copp = from.copp;
  to.bridge = from.bridge;
}

// Builds the FIB (next hops, groups with their redirection tables, routes). Throws on error.
std::unique_ptr<Fib> build_fib(const SwitchConfig& cfg);

// A group as the control plane hands it to the FIB: its spec and each member's next-hop id
// (an id stays with its member while the member exists, and so do its counters). A null spec
// is a deleted group's slot.
struct GroupSlot {
  const GroupSpec* spec = nullptr;
  std::vector<uint32_t> nexthop;
};
// The configuration's groups, their members numbered in order.
std::vector<GroupSlot> group_slots(const SwitchConfig& cfg);
// Next hops, groups and each worker's policy instances; `previous` lends its instances to the
// groups marked in `same` (Fib::attach_policies). Throws with the reason.
std::shared_ptr<FibGroups> build_groups(const std::vector<GroupSlot>& slots, std::size_t num_nexthops, uint16_t workers,
                                        uint64_t seed, const FibGroups* previous, const std::vector<bool>& same);
// A policy spec as the FIB holds it: registry id and every parameter's value. Throws with
// `where` and the reason (unknown policy or parameter, value out of range).
PolicyChoice resolve_policy(const PolicySpec& spec, const std::string& where);

}  // namespace rs
