// The topology of the whole-switch tests: one emulated host per switch port, host h at
// 10.0.h.2 behind port h, each reached by a /24 route through its own one-member group.
#pragma once
#include <arpa/inet.h>
#include <fmt/core.h>
#include <rte_byteorder.h>
#include <rte_ip.h>

#include <stdexcept>
#include <string>

#include "dataplane/switch/switch_config.h"
#include "tests/support/constants.h"

namespace rs::test {

inline rte_ether_addr mac_of(uint8_t host, bool switch_side) {
  return rte_ether_addr{{0x02, 0x00, 0x00, 0x00, static_cast<uint8_t>(switch_side ? 0x00 : 0xaa), host}};
}
inline uint32_t host_ip(uint8_t host) { return rte_cpu_to_be_32(RTE_IPV4(10, 0, host, 2)); }

// Adds port h (= the next index) with its host, group and route; returns the port to finish.
inline PortSpec& add_host_port(SwitchConfig& cfg, double gbps, QueueLimits limits) {
  const uint8_t h = static_cast<uint8_t>(cfg.ports.size());
  PortSpec p;
  p.name = fmt::format("h{}", h);  // not "h" + to_string: GCC 12 warns (-Wrestrict) falsely
  p.kind = PortKind::EmulatedHost;
  p.mac = mac_of(h, true);
  p.egress.speed_gbps = gbps;
  for (auto& l : p.egress.limits) l = limits;
  p.host.ip = host_ip(h);
  p.host.mac = mac_of(h, false);
  cfg.ports.push_back(p);
  GroupSpec g;
  g.name = "to_" + p.name;
  g.members.push_back({.port = h, .mac = p.host.mac, .weight = 1});
  cfg.groups.push_back(g);
  RouteSpec r;
  r.addr[0] = 10;
  r.addr[2] = h;
  r.depth = 24;
  r.group = static_cast<uint32_t>(cfg.groups.size() - 1);
  cfg.routes.push_back(r);
  return cfg.ports.back();
}

// Routes `prefix` ("10.9.0.0/16", "2001:db8::/48", "0.0.0.0/0") to group `group` of cfg.
inline void add_route(SwitchConfig& cfg, const std::string& prefix, uint32_t group) {
  RouteSpec r;
  const auto slash = prefix.find('/');
  const std::string addr = prefix.substr(0, slash);
  r.ipv6 = addr.find(':') != std::string::npos;
  if (inet_pton(r.ipv6 ? AF_INET6 : AF_INET, addr.c_str(), r.addr) != 1) throw std::invalid_argument("bad prefix " + prefix);
  r.depth = static_cast<uint8_t>(std::stoi(prefix.substr(slash + 1)));
  r.group = group;
  cfg.routes.push_back(r);
}
// Adds `group` and routes `prefix` to it; returns the group's index.
inline uint32_t add_group_route(SwitchConfig& cfg, GroupSpec group, const std::string& prefix) {
  cfg.groups.push_back(std::move(group));
  const auto id = static_cast<uint32_t>(cfg.groups.size() - 1);
  add_route(cfg, prefix, id);
  return id;
}

// A RoCE flow from host `from` to host `to`.
inline HostFlowSpec& add_host_flow(SwitchConfig& cfg, uint8_t from, uint8_t to, double gbps, uint32_t qp,
                                   uint32_t payload, uint8_t dscp = kRoceDscp) {
  HostFlowSpec f;
  f.dst_ip = host_ip(to);
  f.rate_gbps = gbps;
  f.payload = payload;
  f.qp = qp;
  f.dscp = dscp;
  cfg.ports[from].host.flows.push_back(f);
  return cfg.ports[from].host.flows.back();
}

}  // namespace rs::test
