#include "control/fabric/fabric_topology.h"

#include <arpa/inet.h>
#include <fmt/core.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <map>
#include <optional>
#include <stdexcept>

#include "dataplane/tm/queue/shaper.h"

namespace rs {

namespace {

rte_ether_addr mac(uint8_t kind, unsigned a, unsigned b) {
  return rte_ether_addr{{0x02, kind, static_cast<uint8_t>(a >> 8), static_cast<uint8_t>(a), static_cast<uint8_t>(b >> 8),
                         static_cast<uint8_t>(b)}};
}

}  // namespace

unsigned FabricBuilder::add_switch(std::string name) {
  FabricSwitch sw{std::move(name), base};
  sw.cfg.ports.clear(), sw.cfg.groups.clear(), sw.cfg.routes.clear();
  sw.cfg.seed = static_cast<uint32_t>(seed * 1000 + f.switches.size());
  f.switches.push_back(std::move(sw));
  return static_cast<unsigned>(f.switches.size() - 1);
}

uint16_t FabricBuilder::add(unsigned sw, const PortSpec& tmpl, std::string name, PortKind kind, double gbps) {
  auto& ports = f.switches[sw].cfg.ports;
  PortSpec p = tmpl;
  p.name = std::move(name);
  p.kind = kind;
  p.mac = mac(0x53, sw, static_cast<unsigned>(ports.size()));
  p.egress.speed_gbps = gbps;
  ports.push_back(std::move(p));
  return static_cast<uint16_t>(ports.size() - 1);
}

void FabricBuilder::add_host(unsigned sw, unsigned nth, unsigned h) {
  const uint16_t i = add(sw, host_port, fmt::format("h{}", h), PortKind::EmulatedHost, host_gbps);
  PortSpec& p = f.switches[sw].cfg.ports[i];
  p.host.ip = fabric_host_ip(nth, h);
  p.host.mac = mac(0x48, nth, h);
}

FabricCable& FabricBuilder::cable(unsigned a, uint16_t ap, unsigned b, uint16_t bp) {
  FabricCable c;
  c.name = fmt::format("{}.{}-{}.{}", f.switches[a].name, f.switches[a].cfg.ports[ap].name, f.switches[b].name,
                       f.switches[b].cfg.ports[bp].name);
  c.a_switch = static_cast<uint16_t>(a), c.a_port = ap, c.b_switch = static_cast<uint16_t>(b), c.b_port = bp;
  c.params.gbps = link_gbps;
  c.params.delay_ns = delay_ns;
  c.params.loss = loss;
  c.params.seed = seed * 7919 + f.cables.size();
  f.cables.push_back(std::move(c));
  return f.cables.back();
}

uint32_t fabric_host_ip(unsigned leaf, unsigned host) {
  return htonl(10u << 24 | (leaf & 255) << 16 | (host & 255) << 8 | 2);
}

FabricSpec leaf_spine(const LeafSpineSpec& s) {
  for (auto [what, n] : {std::pair{"spines", s.spines}, {"leaves", s.leaves}, {"hosts_per_leaf", s.hosts_per_leaf},
                         {"links_per_pair", s.links_per_pair}})
    if (n == 0 || n > 250) throw std::invalid_argument(fmt::format("{}: {} is out of range [1, 250]", what, n));
  // Every switch's ports within a switch's (a leaf: its hosts and uplinks; a spine: a cable to
  // each leaf), and a fabric one machine can hold.
  if (s.hosts_per_leaf + s.spines * s.links_per_pair > kMaxPorts)
    throw std::invalid_argument(fmt::format("a leaf would have {} ports (hosts_per_leaf + spines x links_per_pair); a switch has at most {}",
                                            s.hosts_per_leaf + s.spines * s.links_per_pair, kMaxPorts));
  if (s.leaves * s.links_per_pair > kMaxPorts)
    throw std::invalid_argument(fmt::format("a spine would have {} ports (leaves x links_per_pair); a switch has at most {}",
                                            s.leaves * s.links_per_pair, kMaxPorts));
  if (s.spines + s.leaves > kMaxFabricSwitches)
    throw std::invalid_argument(fmt::format("{} switches; a fabric has at most {}", s.spines + s.leaves, kMaxFabricSwitches));
  FabricBuilder b{s.base, s.host_port, s.fabric_port, s.seed, s.host_gbps, s.uplink_gbps, s.cable_delay_ns, s.cable_loss, {}};
  std::vector<unsigned> spine(s.spines);
  for (unsigned i = 0; i < s.spines; ++i) {
    spine[i] = b.add_switch(fmt::format("spine{}", i + 1));
    for (unsigned k = 0; k < s.leaves * s.links_per_pair; ++k) b.add_port(spine[i], fmt::format("down{}", k + 1));
  }
  for (unsigned l = 1; l <= s.leaves; ++l) {
    const unsigned leaf = b.add_switch(fmt::format("leaf{}", l));
    for (unsigned h = 1; h <= s.hosts_per_leaf; ++h) b.add_host(leaf, l, h);
    unsigned up = 0;
    for (unsigned i = 0; i < s.spines; ++i)
      for (unsigned k = 0; k < s.links_per_pair; ++k) {
        const uint16_t p = b.add_port(leaf, fmt::format("up{}", ++up));
        b.cable(leaf, p, spine[i], static_cast<uint16_t>((l - 1) * s.links_per_pair + k));
      }
  }
  fabric_routes(b.f, s.policy);
  return std::move(b.f);
}

FabricSpec fat_tree(const FatTreeSpec& s) {
  if (s.k < 2 || s.k % 2 || s.k > 8) throw std::invalid_argument(fmt::format("k: {} is not an even number in [2, 8]", s.k));
  const unsigned half = s.k / 2, pods = s.k, cores = half * half;
  if (pods * s.k + cores > kMaxFabricSwitches)
    throw std::invalid_argument(fmt::format("{} switches; a fabric has at most {}", pods * s.k + cores, kMaxFabricSwitches));
  FabricBuilder b{s.base, s.host_port, s.fabric_port, s.seed, s.host_gbps, s.link_gbps, s.cable_delay_ns, s.cable_loss, {}};
  std::vector<unsigned> core(cores), agg(pods * half), edge(pods * half);
  for (unsigned c = 0; c < cores; ++c) core[c] = b.add_switch(fmt::format("core{}", c + 1));
  for (unsigned a = 0; a < pods * half; ++a) agg[a] = b.add_switch(fmt::format("agg{}", a + 1));
  for (unsigned e = 0; e < pods * half; ++e) {
    edge[e] = b.add_switch(fmt::format("edge{}", e + 1));
    for (unsigned h = 1; h <= half; ++h) b.add_host(edge[e], e + 1, h);
  }
  // Pod p: its edges and aggregations fully meshed; aggregation j of each pod to cores j*half..
  for (unsigned p = 0; p < pods; ++p)
    for (unsigned j = 0; j < half; ++j) {
      const unsigned a = agg[p * half + j];
      for (unsigned i = 0; i < half; ++i) {
        const unsigned e = edge[p * half + i];
        const uint16_t up = b.add_port(e, fmt::format("up{}", j + 1));
        b.cable(e, up, a, b.add_port(a, fmt::format("down{}", i + 1)));
      }
    }
  for (unsigned p = 0; p < pods; ++p)
    for (unsigned j = 0; j < half; ++j) {
      const unsigned a = agg[p * half + j];
      for (unsigned m = 0; m < half; ++m) {
        const unsigned c = core[j * half + m];
        const uint16_t up = b.add_port(a, fmt::format("up{}", m + 1));
        b.cable(a, up, c, b.add_port(c, fmt::format("down{}", p + 1)));
      }
    }
  fabric_routes(b.f, s.policy);
  return std::move(b.f);
}

namespace {

// Hops from `from` to every switch over `next` (a switch's neighbours); -1: unreachable.
std::vector<int> hop_counts(const std::vector<std::vector<std::size_t>>& next, std::size_t from) {
  std::vector<int> dist(next.size(), -1);
  std::deque<std::size_t> todo{from};
  dist[from] = 0;
  while (!todo.empty()) {
    const std::size_t s = todo.front();
    todo.pop_front();
    for (std::size_t t : next[s])
      if (dist[t] < 0) dist[t] = dist[s] + 1, todo.push_back(t);
  }
  return dist;
}

}  // namespace

std::vector<std::vector<HostNextHops>> fabric_next_hops(const FabricSpec& f, const std::vector<bool>& up) {
  const std::size_t n = f.switches.size();
  // Each switch's cable ports that are up: (port, far switch, far port's MAC), in port order.
  struct Hop {
    uint16_t port;
    std::size_t to;
    rte_ether_addr mac;
  };
  std::vector<std::vector<Hop>> hops(n);
  for (std::size_t c = 0; c < f.cables.size(); ++c) {
    if (!up.empty() && !up[c]) continue;
    const FabricCable& k = f.cables[c];
    hops[k.a_switch].push_back({k.a_port, k.b_switch, f.switches[k.b_switch].cfg.ports[k.b_port].mac});
    hops[k.b_switch].push_back({k.b_port, k.a_switch, f.switches[k.a_switch].cfg.ports[k.a_port].mac});
  }
  std::vector<std::vector<std::size_t>> next(n);
  for (std::size_t s = 0; s < n; ++s) {
    std::sort(hops[s].begin(), hops[s].end(), [](const Hop& a, const Hop& b) { return a.port < b.port; });
    for (const Hop& h : hops[s]) next[s].push_back(h.to);
  }
  std::vector<std::vector<HostNextHops>> out(n);
  for (std::size_t t = 0; t < n; ++t) {
    const auto& ports = f.switches[t].cfg.ports;
    bool has_hosts = false;
    for (auto& p : ports) has_hosts |= p.kind == PortKind::EmulatedHost && p.host.ip;
    if (!has_hosts) continue;
    const std::vector<int> dist = hop_counts(next, t);
    for (std::size_t s = 0; s < n; ++s) {
      std::vector<GroupMemberSpec> members;
      if (s != t)
        for (const Hop& h : hops[s])
          if (dist[s] > 0 && dist[h.to] == dist[s] - 1) members.push_back(static_member(h.port, h.mac));
      for (std::size_t p = 0; p < ports.size(); ++p) {
        if (ports[p].kind != PortKind::EmulatedHost || !ports[p].host.ip) continue;
        HostNextHops h{ports[p].host.ip, t, s == t, s == t ? std::vector{static_member(static_cast<uint16_t>(p), ports[p].host.mac)} : members};
        out[s].push_back(std::move(h));
      }
    }
  }
  return out;
}

void fabric_routes(FabricSpec& f, const PolicySpec& policy) {
  // Route tables sized for the fabric's hosts unless the config sized them: a switch's default
  // tables (rte_lpm6's tbl8 groups above all) times many switches would not fit a test machine.
  uint32_t hosts = 0;
  for (auto& s : f.switches)
    for (auto& p : s.cfg.ports) hosts += p.kind == PortKind::EmulatedHost;
  for (auto& s : f.switches) {
    RouteLimits& l = s.cfg.route_limits;
    const RouteLimits d;
    // Nor are their IPv4 tables made resident up front (limits.prefault): a fabric's routes are
    // few and mostly set at start-up, and 64 MiB a bank times many switches is not.
    if (l.v4 == d.v4 && l.v6 == d.v6 && l.v4_tbl8 == d.v4_tbl8 && l.v6_tbl8 == d.v6_tbl8 && l.prefault == d.prefault)
      l = RouteLimits{.v4 = std::max<uint32_t>(1024, 2 * hosts), .v6 = 256, .v4_tbl8 = std::max<uint32_t>(256, hosts + 64), .v6_tbl8 = 256,
                      .prefault = false};
  }
  const auto all = fabric_next_hops(f, {});
  // A switch that cannot reach a host's switch: the first by (host's switch, switch).
  std::optional<std::pair<std::size_t, std::size_t>> cut;
  for (std::size_t s = 0; s < f.switches.size(); ++s)
    for (const HostNextHops& h : all[s])
      if (h.members.empty() && (!cut || std::pair{h.to_switch, s} < *cut)) cut = std::pair{h.to_switch, s};
  if (cut) throw std::runtime_error(fmt::format("{} cannot reach {}", f.switches[cut->second].name, f.switches[cut->first].name));
  for (std::size_t s = 0; s < f.switches.size(); ++s) {
    SwitchConfig& cfg = f.switches[s].cfg;
    std::map<std::vector<uint16_t>, uint32_t> groups;  // by member ports (a host's own: not shared)
    for (const HostNextHops& h : all[s]) {
      uint32_t gid = static_cast<uint32_t>(cfg.groups.size());
      if (h.local) {
        GroupSpec g;
        g.name = "to_" + cfg.ports[h.members[0].port].name;
        g.members = h.members;
        cfg.groups.push_back(std::move(g));
      } else {
        auto [it, fresh] = groups.emplace(member_ports(h.members), gid);
        if (fresh) {
          GroupSpec g;
          g.name = fmt::format("to_{}", f.switches[h.to_switch].name);
          g.policy = policy;
          g.members = h.members;
          cfg.groups.push_back(std::move(g));
        }
        gid = it->second;
      }
      RouteSpec r;
      std::memcpy(r.addr, &h.ip, 4);
      r.depth = 32;
      r.group = gid;
      cfg.routes.push_back(r);
    }
  }
}

std::vector<uint16_t> member_ports(const std::vector<GroupMemberSpec>& members) {
  std::vector<uint16_t> ports;
  for (auto& m : members) ports.push_back(m.port);
  return ports;
}

std::vector<std::vector<FabricPath>> fabric_paths(const FabricSpec& f, uint32_t ack_bytes, double host_gbps) {
  const std::size_t n = f.switches.size();
  std::vector<std::vector<std::size_t>> next(n);
  uint64_t delay = 0;
  double gbps = host_gbps;
  for (const FabricCable& c : f.cables) {
    next[c.a_switch].push_back(c.b_switch);
    next[c.b_switch].push_back(c.a_switch);
    delay = std::max(delay, c.params.delay_ns);
    gbps = std::min(gbps, c.params.gbps);
  }
  const double hop = wire_bytes(ack_bytes) * 8 / gbps + 2.0 * static_cast<double>(f.step_ns);
  std::vector<std::vector<FabricPath>> out(n, std::vector<FabricPath>(n));
  for (std::size_t a = 0; a < n; ++a) {
    const std::vector<int> dist = hop_counts(next, a);
    for (std::size_t b = 0; b < n; ++b) {
      const unsigned cables = dist[b] < 0 ? 0 : static_cast<unsigned>(dist[b]);
      out[a][b] = {static_cast<uint64_t>(2.0 * cables * static_cast<double>(delay) + (cables + 2) * hop), cables + 2};
    }
  }
  return out;
}

}  // namespace rs
