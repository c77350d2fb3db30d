#include "tests/support/stage_harness.h"

#include <arpa/inet.h>

#include <stdexcept>


namespace rs::test {

rte_ether_addr mac(const std::string& s) {
  rte_ether_addr a{};
  if (rte_ether_unformat_addr(s.c_str(), &a) != 0) throw std::invalid_argument("bad MAC " + s);
  return a;
}

TestWorld::TestWorld(uint16_t ports) {
  for (uint16_t p = 0; p < kMaxPorts; ++p) {
    port_mac[p] = rte_ether_addr{{0x02, 0, 0, 0, 0, static_cast<uint8_t>(0x10 + p)}};
  }
  ctx.worker = 0;
  ctx.counters = &counters;
  ctx.load = &load;
  ctx.nexthop_counters = nexthop_counters.get();
  ctx.port_mac = port_mac;
  ctx.port_owner = port_owner;
  ctx.num_ports = ports;
  ctx.fib = fib.get();
}

uint32_t TestWorld::route(const std::string& prefix, uint16_t port, const std::string& nh_mac) {
  return route_group(prefix, {{port, nh_mac}});
}

uint32_t TestWorld::route_group(const std::string& prefix, const std::vector<std::pair<uint16_t, std::string>>& members,
                                const std::string& policy, uint32_t table_size) {
  return route_group(prefix, members, PolicySpec{policy, {}}, table_size);
}

uint32_t TestWorld::route_group(const std::string& prefix, const std::vector<std::pair<uint16_t, std::string>>& members,
                                const PolicySpec& policy, uint32_t table_size) {
  NextHopGroup g;
  g.name = prefix;
  g.choices = {resolve_policy(policy, "test group " + prefix)};
  for (auto& [port, m] : members) g.members.push_back(fib->add_nexthop({port, mac(m)}));
  g.table = Fib::build_table(g.members, table_size);
  return route_to(prefix, fib->add_group(std::move(g)));
}

uint32_t TestWorld::blackhole(const std::string& prefix) {
  NextHopGroup g;
  g.name = prefix;
  g.drop = true;
  return route_to(prefix, fib->add_group(std::move(g)));
}

uint32_t TestWorld::route_to(const std::string& prefix, uint32_t gid) {
  RouteSpec r;
  const auto slash = prefix.find('/');
  const std::string addr = prefix.substr(0, slash);
  r.ipv6 = addr.find(':') != std::string::npos;
  if (inet_pton(r.ipv6 ? AF_INET6 : AF_INET, addr.c_str(), r.addr) != 1) throw std::invalid_argument("bad prefix " + prefix);
  r.depth = static_cast<uint8_t>(slash == std::string::npos ? (r.ipv6 ? 128 : 32) : std::stoi(prefix.substr(slash + 1)));
  r.group = gid;
  fib->add_route(r);
  // Every group's policy instances anew (a test adds its groups before it sends).
  fib->attach_policies(1, 1);
  return gid;
}

StageOutput::~StageOutput() {
  for (auto& [e, v] : edge)
    for (auto* m : v) rte_pktmbuf_free(m);
}

}  // namespace rs::test
