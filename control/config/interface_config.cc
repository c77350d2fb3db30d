#include "control/config/interface_config.h"

#include <fmt/core.h>

namespace rs {

namespace {
bool overlap(const InterfaceAddress& a, const InterfaceAddress& b) {
  const uint8_t d = std::min(a.depth, b.depth);
  return a.addr.v6 == b.addr.v6 && a.addr.in(b.addr, d);
}
}  // namespace

void read_addresses(const ConfigReader& rd, const YAML::Node& p, const std::string& path, std::vector<InterfaceAddress>& out) {
  for (const bool v6 : {false, true}) {
    const char* key = v6 ? "ipv6" : "ipv4";
    const YAML::Node n = p[key];
    if (!n) continue;
    std::vector<YAML::Node> items;
    if (n.IsSequence()) {
      for (std::size_t i = 0; i < n.size(); ++i) items.push_back(n[i]);
    } else {
      items.push_back(n);
    }
    for (std::size_t i = 0; i < items.size(); ++i) {
      const std::string ip = n.IsSequence() ? fmt::format("{}.{}[{}]", path, key, i) : fmt::format("{}.{}", path, key);
      const std::string text = rd.str(items[i], ip);
      if (text.find('/') == std::string::npos) rd.fail(items[i], ip, fmt::format("'{}': give the prefix length too (10.0.1.1/24)", text));
      const RouteSpec r = rd.prefix(items[i], ip);
      if (r.ipv6 != v6) rd.fail(items[i], ip, fmt::format("'{}' is not an IPv{} address", text, v6 ? 6 : 4));
      InterfaceAddress a;
      a.addr.v6 = v6;
      std::copy(r.addr, r.addr + 16, a.addr.b.begin());
      a.depth = r.depth;
      const uint8_t full = v6 ? 128 : 32;
      if (a.depth == 0) rd.fail(items[i], ip, "a /0 subnet would take every destination");
      // The subnet's own address (all host bits 0) and, for IPv4, its broadcast (all 1) name no
      // host; /31 and /32 (RFC 3021) have neither.
      if (a.depth < full - (v6 ? 0 : 1)) {
        const RouteSpec m = ConfigReader::masked(r);
        bool all_ones = true;
        for (int b = a.depth; b < full; ++b) all_ones &= (r.addr[b / 8] >> (7 - b % 8)) & 1;
        if (std::equal(r.addr, r.addr + 16, m.addr)) rd.fail(items[i], ip, fmt::format("{} is the subnet's own address, not a host's", text));
        if (!v6 && all_ones) rd.fail(items[i], ip, fmt::format("{} is the subnet's broadcast address", text));
      }
      for (auto& o : out)
        if (o.addr == a.addr) rd.fail(items[i], ip, fmt::format("{} is given twice", format_ip(a.addr)));
      out.push_back(a);
    }
  }
}

void read_port_addresses(const ConfigReader& rd, const YAML::Node& p, const std::string& path, PortSpec& ps) {
  read_addresses(rd, p, path, ps.addrs);
  if (auto x = p["icmp_unreachable"]) ps.icmp_unreachable = rd.boolean(x, path + ".icmp_unreachable");
  if (auto x = p["lldp"]) ps.lldp = rd.boolean(x, path + ".lldp");
}

void check_interface_overlap(const ConfigReader& rd, const YAML::Node& ports, const YAML::Node& vlans, const SwitchConfig& cfg) {
  struct Iface {
    std::string name, path;
    YAML::Node node;
    const std::vector<InterfaceAddress>* addrs;
  };
  std::vector<Iface> all;
  for (std::size_t i = 0; i < cfg.ports.size(); ++i)
    all.push_back({"port " + cfg.ports[i].name, fmt::format("ports[{}]", i), ports[i], &cfg.ports[i].addrs});
  for (auto& v : cfg.vlan_interfaces)
    for (std::size_t i = 0; vlans && i < vlans.size(); ++i)
      if (vlans[i].IsMap() && vlans[i]["id"] && vlans[i]["id"].as<int>(-1) == v.vlan)
        all.push_back({fmt::format("VLAN {}", v.vlan), fmt::format("vlans[{}]", i), vlans[i], &v.addrs});
  for (std::size_t i = 0; i < all.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      for (auto& a : *all[i].addrs)
        for (auto& b : *all[j].addrs)
          if (overlap(a, b)) {
            const char* key = a.addr.v6 ? "ipv6" : "ipv4";
            rd.fail(all[i].node[key], fmt::format("{}.{}", all[i].path, key),
                    fmt::format("{}/{} overlaps {}'s {}/{}", format_ip(a.addr), a.depth, all[j].name, format_ip(b.addr), b.depth));
          }
}

GroupMemberSpec read_via_member(const ConfigReader& rd, const YAML::Node& ip, const YAML::Node& port, const std::string& path,
                                const std::string& port_path,
                                const std::map<std::string, uint16_t>& ports, const SwitchConfig& cfg) {
  const std::string text = rd.str(ip, path);
  const auto addr = parse_ip(text);
  if (!addr) rd.fail(ip, path, fmt::format("not an IPv4 or IPv6 address: '{}'", text));
  GroupMemberSpec m;
  m.via = *addr;
  m.resolved = false;
  int found = -1;
  for (std::size_t p = 0; p < cfg.ports.size() && found < 0; ++p)
    for (auto& a : cfg.ports[p].addrs) {
      if (!addr->in(a.addr, a.depth)) continue;
      if (a.addr == *addr) rd.fail(ip, path, fmt::format("{} is port {}'s own address", text, cfg.ports[p].name));
      found = static_cast<int>(p);
      break;
    }
  for (auto& v : cfg.vlan_interfaces)
    for (auto& a : v.addrs) {
      if (found >= 0 || !addr->in(a.addr, a.depth)) continue;
      if (a.addr == *addr) rd.fail(ip, path, fmt::format("{} is VLAN {}'s own address", text, v.vlan));
      if (port) rd.fail(port, port_path, fmt::format("{} is in VLAN {}'s subnet: its port is where the bridge finds it, give none", text, v.vlan));
      m.vlan = v.vlan;
      m.port = kInvalidPort;
      return m;
    }
  if (port) {
    const std::string name = rd.str(port, port_path);
    auto it = ports.find(name);
    if (it == ports.end()) rd.fail(port, port_path, fmt::format("port '{}' is referenced but not defined in ports", name));
    if (found >= 0 && found != it->second)
      rd.fail(port, port_path, fmt::format("{} is in port {}'s subnet, not port {}'s", text, cfg.ports[found].name, name));
    found = it->second;
  }
  if (found < 0) rd.fail(ip, path, fmt::format("no port's subnet holds {}: give the port an address in its subnet (ports[].ipv4 / ipv6)", text));
  m.port = static_cast<uint16_t>(found);
  return m;
}

void read_copp(const ConfigReader& rd, const YAML::Node& n, CoppConfig& c) {
  rd.map(n, "copp");
  rd.keys(n, "copp", {"arp", "ip2me", "icmp_error", "neigh_miss", "lldp"});
  for (std::size_t k = 0; k < kCoppClasses; ++k) {
    const std::string name(kCoppClassNames[k]);
    const YAML::Node x = n[name];
    if (!x) continue;
    const std::string path = "copp." + name;
    CoppPolicer& p = c.policer[k];
    if (x.IsMap()) {
      rd.keys(x, path, {"pps", "burst"});
      if (!x["pps"]) rd.fail(x, path + ".pps", "missing");
      p.pps = static_cast<uint32_t>(rd.integer(x["pps"], path + ".pps", 0, 10'000'000));
      p.burst = x["burst"] ? static_cast<uint32_t>(rd.integer(x["burst"], path + ".burst", 1, 10'000'000)) : std::max<uint32_t>(p.pps, 1);
    } else {
      p.pps = static_cast<uint32_t>(rd.integer(x, path, 0, 10'000'000));
      p.burst = std::max<uint32_t>(p.pps, 1);  // SONiC's cbs = cir
    }
  }
}

void read_neighbours(const ConfigReader& rd, const YAML::Node& n, NeighbourConfig& c) {
  rd.map(n, "neighbours");
  rd.keys(n, "neighbours", {"base_reachable_s", "delay_first_probe_s", "retrans_s", "ucast_probes", "mcast_probes", "hold_packets",
                            "gc_stale_s", "max_entries"});
  if (auto x = n["base_reachable_s"]) c.base_reachable_s = rd.real(x, "neighbours.base_reachable_s", 0.01, 86400);
  if (auto x = n["delay_first_probe_s"]) c.delay_first_probe_s = rd.real(x, "neighbours.delay_first_probe_s", 0.001, 3600);
  if (auto x = n["retrans_s"]) c.retrans_s = rd.real(x, "neighbours.retrans_s", 0.001, 3600);
  if (auto x = n["ucast_probes"]) c.ucast_probes = static_cast<uint32_t>(rd.integer(x, "neighbours.ucast_probes", 0, 100));
  if (auto x = n["mcast_probes"]) c.mcast_probes = static_cast<uint32_t>(rd.integer(x, "neighbours.mcast_probes", 1, 100));
  if (auto x = n["hold_packets"]) c.hold_packets = static_cast<uint32_t>(rd.integer(x, "neighbours.hold_packets", 0, 256));
  if (auto x = n["gc_stale_s"]) c.gc_stale_s = rd.real(x, "neighbours.gc_stale_s", 0.01, 86400);
  if (auto x = n["max_entries"]) c.max_entries = static_cast<uint32_t>(rd.integer(x, "neighbours.max_entries", 1, 1 << 16));
}

void read_lldp(const ConfigReader& rd, const YAML::Node& n, LldpConfig& c) {
  rd.map(n, "lldp");
  rd.keys(n, "lldp", {"interval_s", "hold", "system_name", "system_description"});
  if (auto x = n["interval_s"]) c.interval_s = rd.real(x, "lldp.interval_s", 0.01, 3600);  // 802.1AB allows 1..3600; tests go faster
  if (auto x = n["hold"]) c.hold = static_cast<uint32_t>(rd.integer(x, "lldp.hold", 1, 100));
  if (c.interval_s * c.hold > 65535) rd.fail(n, "lldp.hold", "interval_s x hold is the TTL sent: at most 65535 s");
  for (auto [key, field] : {std::pair{"system_name", &c.system_name}, std::pair{"system_description", &c.system_description}})
    if (auto x = n[key]) {
      *field = rd.str(x, std::string("lldp.") + key);
      if (field->size() > 255) rd.fail(x, std::string("lldp.") + key, "at most 255 bytes (an LLDP string)");
    }
}

}  // namespace rs
