// Fabrics from a few numbers, and the routes a Clos fabric's BGP would install in them.
//   - leaf_spine: `spines` x `leaves`, every leaf cabled to every spine (`links_per_pair` cables
//     each), `hosts_per_leaf` emulated hosts on each leaf;
//   - fabric_routes: for any fabric, each host's /32 on every switch, through a group of every
//     cable on a shortest path towards the host's switch (all equal-cost next hops, as BGP
//     multipath installs them; groups with the same members are one group).
// Names: switches spine1.., leaf1..; a leaf's ports h1.. (hosts) then up1.. (to the spines, in
// spine order); a spine's down1.. (in leaf order). Host h of leaf l is 10.l.h.2 (l, h from 1).
// Port MACs 02:53:ss:ss:pp:pp (switch, port), host MACs 02:48:ll:ll:hh:hh.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "dataplane/fabric/fabric.h"

namespace rs {

// Each switch holds its own mbuf pool and tables: this many fit the memory a test machine has.
inline constexpr unsigned kMaxFabricSwitches = 64;

struct LeafSpineSpec {
  unsigned spines = 2, leaves = 2, hosts_per_leaf = 2, links_per_pair = 1;
  double host_gbps = 100, uplink_gbps = 100;
  uint64_t cable_delay_ns = 500;  // 100 m of fibre
  double cable_loss = 0;
  uint64_t seed = 1;
  // Every switch starts as this config (workers, QoS, MMU, load view...) without ports, groups
  // or routes; every port starts as the matching template (egress limits, lossless PGs, WRED),
  // given its name, MAC, kind, rate and host.
  SwitchConfig base;
  PortSpec host_port, fabric_port;
  PolicySpec policy;  // of the groups towards the spines (and, on a spine, towards a leaf)
};

// A k-ary fat tree (Al-Fares et al.): k pods of k/2 edge and k/2 aggregation switches, (k/2)^2
// cores, k/2 hosts on each edge; every edge cabled to every aggregation of its pod, aggregation
// j of each pod to cores j*k/2 .. j*k/2 + k/2 - 1. Names: core1.., agg1.., edge1.. (pod by pod);
// an edge's ports h1.. then up1.. (its pod's aggregations), an aggregation's down1.. (its
// edges) then up1.. (its cores), a core's down1.. (one a pod). Host h of edge e is 10.e.h.2.
struct FatTreeSpec {
  unsigned k = 4;
  double host_gbps = 100, link_gbps = 100;
  uint64_t cable_delay_ns = 500;
  double cable_loss = 0;
  uint64_t seed = 1;
  SwitchConfig base;
  PortSpec host_port, fabric_port;
  PolicySpec policy;
};
// Throws std::invalid_argument for k odd, below 2 or above 8 (more switches than a fabric holds).
FabricSpec fat_tree(const FatTreeSpec& spec);

// Throws std::invalid_argument for sizes the addressing cannot hold (0, or above 250), a switch
// with more than kMaxPorts ports, or more than kMaxFabricSwitches switches.
FabricSpec leaf_spine(const LeafSpineSpec& spec);

// Adds the routes (and groups) to every switch of `f`; cables must be in place. Throws when
// some switch cannot reach some host.
void fabric_routes(FabricSpec& f, const PolicySpec& policy);

uint32_t fabric_host_ip(unsigned leaf, unsigned host);  // network order; leaf and host from 1

// Every switch's next hops towards every host of the fabric over the cables that are up
// (`up[c]` for cable c; empty: all of them): per switch, in the order fabric_routes installs
// them, each host's address, its switch, and the members of the group towards it (every cable
// port on a shortest path; on the host's own switch, its port). No members: no path.
struct HostNextHops {
  uint32_t ip = 0;  // network order
  std::size_t to_switch = 0;
  bool local = false;
  std::vector<GroupMemberSpec> members;
};
std::vector<std::vector<HostNextHops>> fabric_next_hops(const FabricSpec& f, const std::vector<bool>& up);
std::vector<uint16_t> member_ports(const std::vector<GroupMemberSpec>& members);

// The unloaded path between hosts of switches a and b over `f`'s shortest path: `links` (the
// cables and the two hosts' own), and the round trip of an empty frame: each cable's propagation
// both ways (the longest cable's), an acknowledgement of `ack_bytes` at every link at the slowest
// link's rate, each hop rounded up to two clock steps. [a][b] for all pairs.
struct FabricPath {
  uint64_t rtt_ns = 0;
  unsigned links = 2;
};
std::vector<std::vector<FabricPath>> fabric_paths(const FabricSpec& f, uint32_t ack_bytes, double host_gbps);

// Every topology is built by the same few moves: a switch (the base config without ports, groups
// or routes, its own seed), a port from a template (its MAC from the switch and port numbers), a
// host port h{h} (10.nth.h.2), a cable between two ports (the builder's rate, delay and loss; the
// caller may change them).
struct FabricBuilder {
  const SwitchConfig& base;
  const PortSpec &host_port, &fabric_port;
  uint64_t seed;
  double host_gbps, link_gbps;
  uint64_t delay_ns;
  double loss;
  FabricSpec f;

  unsigned add_switch(std::string name);
  uint16_t add(unsigned sw, const PortSpec& tmpl, std::string name, PortKind kind, double gbps);
  uint16_t add_port(unsigned sw, std::string name) { return add(sw, fabric_port, std::move(name), PortKind::Link, link_gbps); }
  void add_host(unsigned sw, unsigned nth, unsigned h);
  FabricCable& cable(unsigned a, uint16_t ap, unsigned b, uint16_t bp);
};

}  // namespace rs
