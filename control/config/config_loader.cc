#include "control/config/config_loader.h"

#include <arpa/inet.h>
#include <fmt/core.h>
#include <yaml-cpp/yaml.h>

#include <array>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>

#include "control/config/config_reader.h"
#include "control/config/lossless_config.h"
#include "control/config/bridge_config.h"
#include "control/config/fault_config.h"
#include "control/config/interface_config.h"
#include "control/config/nic_config.h"
#include "control/config/mirror_config.h"
#include "control/config/routing_config.h"
#include "dataplane/routing/routing_policy.h"

namespace rs {

ConfigError::ConfigError(const std::string& f, int l, const std::string& p, const std::string& r)
    : std::runtime_error(l > 0 ? fmt::format("{}:{}: {}: {}", f, l, p, r) : fmt::format("{}: {}: {}", f, p, r)),
      file(f), path(p), reason(r), line(l) {}

namespace {

void read_qos(const ConfigReader& rd, const YAML::Node& n, QosMaps& qos) {
  // The PFC keys (pfc_enable, tc_to_pg, pfc_to_queue, pfc_quanta) are read by read_lossless.
  rd.keys(n, "qos", {"trust", "dscp_to_tc", "pcp_to_tc", "tc_to_queue", "cnp_queue", "pfc_enable", "tc_to_pg",
                     "pfc_to_queue", "pfc_quanta"});
  if (auto t = n["trust"]) {
    auto s = rd.str(t, "qos.trust");
    if (s == "dscp") qos.trust = QosTrust::Dscp;
    else if (s == "pcp") qos.trust = QosTrust::Pcp;
    else rd.fail(t, "qos.trust", "expected 'dscp' or 'pcp'");
  }
  if (auto m = n["dscp_to_tc"]) rd.index_map(m, "qos.dscp_to_tc", 63, 7, qos.dscp_to_tc);
  if (auto m = n["pcp_to_tc"]) rd.index_map(m, "qos.pcp_to_tc", 7, 7, qos.pcp_to_tc);
  if (auto m = n["tc_to_queue"]) rd.index_map(m, "qos.tc_to_queue", 7, 7, qos.tc_to_queue);
  if (auto x = n["cnp_queue"]) qos.cnp_queue = static_cast<int8_t>(rd.integer(x, "qos.cnp_queue", 0, 7));
}

void read_queues(const ConfigReader& rd, const YAML::Node& n, const std::string& path, EgressConfig& e) {
  rd.keys(n, path, {"limit_packets", "limit_bytes", "scheduler", "weights"});
  if (auto v = n["limit_packets"])
    rd.per_queue(v, path + ".limit_packets", [&](int q, const YAML::Node& x, const std::string& p) {
      e.limits[q].packets = static_cast<uint32_t>(rd.integer(x, p, 1, 1 << 20));
    });
  if (auto v = n["limit_bytes"])
    rd.per_queue(v, path + ".limit_bytes", [&](int q, const YAML::Node& x, const std::string& p) {
      e.limits[q].bytes = static_cast<uint64_t>(rd.integer(x, p, 64, int64_t{1} << 34));
    });
  if (auto v = n["scheduler"])
    rd.per_queue(v, path + ".scheduler", [&](int q, const YAML::Node& x, const std::string& p) {
      auto s = rd.str(x, p);
      if (s == "strict") e.sched[q] = QueueSched::Strict;
      else if (s == "dwrr") e.sched[q] = QueueSched::Dwrr;
      else rd.fail(x, p, "expected 'strict' or 'dwrr'");
    });
  if (auto v = n["weights"])
    rd.per_queue(v, path + ".weights", [&](int q, const YAML::Node& x, const std::string& p) {
      e.weights[q] = static_cast<uint32_t>(rd.integer(x, p, 1, 100));
    });
}

void read_host(const ConfigReader& rd, const YAML::Node& n, const std::string& path, HostSpec& h) {
  rd.keys(n, path, {"ip", "mac", "flows", "pfc_storm", "receiver", "nic", "qps", "gateway"});
  if (!n["ip"]) rd.fail(n, path + ".ip", "missing");
  if (!n["mac"]) rd.fail(n, path + ".mac", "missing");
  h.ip = rd.ipv4(n["ip"], path + ".ip");
  h.mac = rd.mac(n["mac"], path + ".mac");
  if (auto x = n["gateway"]) h.gateway = rd.mac(x, path + ".gateway");
  // Hosts naming one receiver are one remote host reached over several links (one tracker).
  if (auto x = n["receiver"]) {
    h.receiver = rd.str(x, path + ".receiver");
    if (h.receiver.empty()) rd.fail(x, path + ".receiver", "empty name");
  }
  if (auto fl = n["flows"]) {
    rd.seq(fl, path + ".flows");
    for (std::size_t i = 0; i < fl.size(); ++i) {
      const auto f = fl[i];
      const std::string fp = fmt::format("{}.flows[{}]", path, i);
      rd.keys(f, fp, {"dst", "rate_gbps", "dscp", "ecn", "payload", "qp", "opcode", "priority", "start_s", "stop_s"});
      HostFlowSpec s;
      if (!f["dst"]) rd.fail(f, fp + ".dst", "missing");
      s.dst_ip = rd.ipv4(f["dst"], fp + ".dst");
      if (auto x = f["rate_gbps"]) s.rate_gbps = rd.real(x, fp + ".rate_gbps", 1e-6, 800);
      if (auto x = f["dscp"]) s.dscp = static_cast<uint8_t>(rd.integer(x, fp + ".dscp", 0, 63));
      if (auto x = f["ecn"]) s.ecn = static_cast<uint8_t>(rd.integer(x, fp + ".ecn", 0, 3));
      if (auto x = f["payload"]) s.payload = static_cast<uint32_t>(rd.integer(x, fp + ".payload", 0, 1400));
      if (auto x = f["qp"]) s.qp = static_cast<uint32_t>(rd.integer(x, fp + ".qp", 1, 0xFFFFFF));
      else s.qp = static_cast<uint32_t>(0x1000 + i);
      if (auto x = f["opcode"]) s.opcode = static_cast<uint8_t>(rd.integer(x, fp + ".opcode", 0, 255));
      if (auto x = f["priority"]) s.priority = static_cast<int8_t>(rd.integer(x, fp + ".priority", 0, 7));
      if (auto x = f["start_s"]) s.start_ns = rd.nanoseconds(x, fp + ".start_s", 0, 1e6, 1e9);
      if (auto x = f["stop_s"]) s.stop_ns = rd.nanoseconds(x, fp + ".stop_s", 0, 1e6, 1e9);
      h.flows.push_back(s);
    }
  }
  // The RoCE NIC: given, or made with its defaults for the host's queue pairs.
  if (auto x = n["nic"]) read_nic(rd, x, path + ".nic", h.nic);
  if (auto x = n["qps"]) {
    read_qps(rd, x, path + ".qps", h.ip, h.qps);
    h.nic.enabled = true;
  }
  // A stuck receiver for PFC watchdog experiments: XOFF on one priority, refreshed for ever.
  if (auto st = n["pfc_storm"]) {
    const std::string sp = path + ".pfc_storm";
    rd.keys(st, sp, {"priority", "start_s", "stop_s", "quanta"});
    if (!st["priority"]) rd.fail(st, sp + ".priority", "missing");
    h.storm.priority = static_cast<int8_t>(rd.integer(st["priority"], sp + ".priority", 0, 7));
    if (auto x = st["start_s"]) h.storm.start_ns = rd.nanoseconds(x, sp + ".start_s", 0, 1e6, 1e9);
    if (auto x = st["stop_s"]) h.storm.stop_ns = rd.nanoseconds(x, sp + ".stop_s", 0, 1e6, 1e9);
    if (auto x = st["quanta"]) h.storm.quanta = static_cast<uint16_t>(rd.integer(x, sp + ".quanta", 1, 0xFFFF));
    if (h.storm.stop_ns <= h.storm.start_ns) rd.fail(st, sp + ".stop_s", "must be after start_s");
  }
}

}  // namespace

namespace {

SwitchConfig load_root(const YAML::Node& root, const std::string& source, bool fabric) {
  ConfigReader rd(source);
  SwitchConfig cfg;
  cfg.source = source;
  // An empty file or a lone scalar: the message needs a place to name, as every other one has.
  if (!root.IsMap()) rd.fail(root, "(top level)", "expected a map of sections (switch, ports, routes, ...)");
  rd.keys(root, "", {"switch", "qos", "ports", "nexthop_groups", "routes", "buffer", "wred_profiles", "queue_wred", "pfcwd",
                     "load_view", "link_events", "limits", "mirror_sessions", "copp", "neighbours", "lldp", "vlans", "bridge",
                     "collectives", "traffic"});
  if (auto sw = root["switch"]) {
    rd.keys(sw, "switch", {"workers", "seed", "mbufs", "pipeline", "duration_s"});
    if (auto x = sw["workers"]) cfg.workers = static_cast<uint16_t>(rd.integer(x, "switch.workers", 1, kMaxWorkers));
    if (auto x = sw["seed"]) cfg.seed = static_cast<uint32_t>(rd.integer(x, "switch.seed", 0, 0xFFFFFFFF));
    if (auto x = sw["mbufs"]) cfg.mbufs = static_cast<uint32_t>(rd.integer(x, "switch.mbufs", 1024, 1 << 22));
    if (auto x = sw["duration_s"]) cfg.duration_s = rd.real(x, "switch.duration_s", 0, 1e7);
    if (auto x = sw["pipeline"]) {
      std::string p = rd.str(x, "switch.pipeline");
      if (!p.empty() && p[0] != '/' && source.find('/') != std::string::npos) p = source.substr(0, source.rfind('/') + 1) + p;
      // A file, and a pipeline's size: a device (/dev/zero) or a directory would never end.
      std::error_code ec;
      if (!std::filesystem::is_regular_file(p, ec)) rd.fail(x, "switch.pipeline", fmt::format("'{}' is not a file", p));
      if (std::filesystem::file_size(p, ec) > (1u << 20)) rd.fail(x, "switch.pipeline", fmt::format("'{}' is over 1 MiB", p));
      std::ifstream in(p);
      if (!in) rd.fail(x, "switch.pipeline", fmt::format("cannot read '{}'", p));
      std::stringstream ss;
      ss << in.rdbuf();
      cfg.pipeline_text = ss.str();
      cfg.pipeline_source = p;
    }
  }
  if (auto q = root["qos"]) read_qos(rd, q, cfg.qos);

  if (auto x = root["vlans"]) read_vlans(rd, x, cfg);  // before the ports, which name them
  if (auto x = root["bridge"]) read_bridge(rd, x, cfg.bridge);
  auto ports = root["ports"];
  if (!ports) rd.fail(root, "ports", "missing: a switch needs at least one port");
  rd.seq(ports, "ports");
  if (ports.size() == 0 || ports.size() > kMaxPorts) rd.fail(ports, "ports", fmt::format("expected 1..{} ports", kMaxPorts));
  std::map<std::string, uint16_t> port_index;
  int ethdevs = 0;
  for (std::size_t i = 0; i < ports.size(); ++i) {
    const auto p = ports[i];
    const std::string pp = fmt::format("ports[{}]", i);
    rd.keys(p, pp, {"name", "kind", "devargs", "mac", "speed_gbps", "queues", "host", "worker", "cable_length_m", "admin", "faults",
                   "ipv4", "ipv6", "icmp_unreachable", "lldp", "vlan"});
    PortSpec ps;
    if (!p["name"]) rd.fail(p, pp + ".name", "missing");
    ps.name = rd.str(p["name"], pp + ".name");
    if (!port_index.emplace(ps.name, static_cast<uint16_t>(i)).second) rd.fail(p["name"], pp + ".name", fmt::format("duplicate port name '{}'", ps.name));
    const std::string kind = p["kind"] ? rd.str(p["kind"], pp + ".kind") : (p["devargs"] ? "ethdev" : "emulated_host");
    if (kind == "ethdev") ps.kind = PortKind::Ethdev;
    else if (kind == "emulated_host") ps.kind = PortKind::EmulatedHost;
    else if (kind == "nic") ps.kind = PortKind::Nic;
    else if (kind == "link" && fabric) ps.kind = PortKind::Link;
    else rd.fail(p["kind"], pp + ".kind", fabric ? "expected 'ethdev', 'emulated_host', 'nic' or 'link'" : "expected 'ethdev', 'emulated_host' or 'nic'");
    if (ps.kind == PortKind::Link) {
      // A cable to another switch of the fabric, which joins it.
      if (p["devargs"] || p["host"]) rd.fail(p["devargs"] ? p["devargs"] : p["host"], pp, "a link port takes neither devargs nor host");
    } else if (ps.kind == PortKind::Ethdev) {
      if (!p["devargs"]) rd.fail(p, pp + ".devargs", "missing: an ethdev port needs DPDK devargs (e.g. net_pcap0,rx_pcap=in.pcap)");
      ps.devargs = rd.str(p["devargs"], pp + ".devargs");
      if (p["host"]) rd.fail(p["host"], pp + ".host", "only emulated_host ports have a host");
      ++ethdevs;
    } else if (ps.kind == PortKind::Nic) {
      // An emulated host whose NIC is on a DPDK port: devargs, and the host with its next hop.
      if (!p["devargs"]) rd.fail(p, pp + ".devargs", "missing: a nic port is an emulated host on a DPDK ethdev (e.g. net_af_packet0,iface=veth0)");
      ps.devargs = rd.str(p["devargs"], pp + ".devargs");
      if (!p["host"]) rd.fail(p, pp + ".host", "missing: a nic port needs host: {ip, mac, gateway, nic, qps}");
      read_host(rd, p["host"], pp + ".host", ps.host);
      if (!p["host"]["gateway"]) rd.fail(p["host"], pp + ".host.gateway", "missing: the MAC of the next hop on the link (the switch port it is cabled to)");
      ps.host.nic.enabled = true;
      ++ethdevs;
    } else {
      if (p["devargs"]) rd.fail(p["devargs"], pp + ".devargs", "emulated_host ports take no devargs");
      if (!p["host"]) rd.fail(p, pp + ".host", "missing: an emulated_host port needs host: {ip, mac}");
      read_host(rd, p["host"], pp + ".host", ps.host);
      if (p["host"]["gateway"]) rd.fail(p["host"]["gateway"], pp + ".host.gateway", "only a nic port's host has a gateway (an emulated host's is its switch port)");
    }
    if (p["mac"]) ps.mac = rd.mac(p["mac"], pp + ".mac");
    else ps.mac = rte_ether_addr{{0x02, 0x52, 0x53, 0x00, 0x00, static_cast<uint8_t>(i)}};
    if (auto x = p["speed_gbps"]) ps.egress.speed_gbps = rd.real(x, pp + ".speed_gbps", 0.001, 800);
    if (auto x = p["queues"]) read_queues(rd, x, pp + ".queues", ps.egress);
    if (auto x = p["worker"]) ps.worker = static_cast<int>(rd.integer(x, pp + ".worker", 0, kMaxWorkers - 1));
    if (auto x = p["admin"]) {
      const std::string a = rd.str(x, pp + ".admin");
      if (a != "up" && a != "down") rd.fail(x, pp + ".admin", "expected 'up' or 'down'");
      ps.admin_up = a == "up";
    }
    if (auto x = p["faults"]) ps.faults = read_faults(rd, x, pp + ".faults");
    read_port_addresses(rd, p, pp, ps);
    if (auto x = p["vlan"]) read_port_vlans(rd, x, pp + ".vlan", cfg, ps);
    cfg.ports.push_back(std::move(ps));
  }
  check_interface_overlap(rd, ports, root["vlans"], cfg);
  if (auto x = root["copp"]) read_copp(rd, x, cfg.copp);
  if (auto x = root["neighbours"]) read_neighbours(rd, x, cfg.neighbours);
  if (auto x = root["lldp"]) read_lldp(rd, x, cfg.lldp);
  if (ethdevs > RTE_MAX_ETHPORTS) rd.fail(ports, "ports", fmt::format("{} ethdev ports; this DPDK allows {}", ethdevs, RTE_MAX_ETHPORTS));
  if (const int i = port_on_missing_worker(cfg); i >= 0)
    rd.fail(ports[i]["worker"], fmt::format("ports[{}].worker", i), fmt::format("worker {} but switch.workers is {}", cfg.ports[i].worker, cfg.workers));
  // A receiver group shares one single-writer tracker: one worker polls all its ports. The
  // group's worker is its first pinned port's (every member is pinned to it, and a member pinned
  // elsewhere is refused), else its first port's (the Switch's choice: port i on worker i %
  // workers).
  {
    std::map<std::string, std::size_t> group_worker;  // receiver -> the port that decided its worker
    for (std::size_t i = 0; i < cfg.ports.size(); ++i) {
      const PortSpec& ps = cfg.ports[i];
      if (ps.kind != PortKind::EmulatedHost || ps.host.receiver.empty() || ps.worker < 0) continue;
      auto [it, fresh] = group_worker.emplace(ps.host.receiver, i);
      if (!fresh && cfg.ports[it->second].worker != ps.worker)
        rd.fail(ports[i]["worker"], fmt::format("ports[{}].worker", i),
                fmt::format("worker {}, but receiver '{}' is on worker {} (ports[{}] '{}'): a receiver's ports share one worker",
                            ps.worker, ps.host.receiver, cfg.ports[it->second].worker, it->second, cfg.ports[it->second].name));
    }
    for (std::size_t i = 0; i < cfg.ports.size(); ++i) {
      PortSpec& ps = cfg.ports[i];
      if (ps.kind != PortKind::EmulatedHost || ps.host.receiver.empty()) continue;
      // Unpinned groups stay unpinned: the Switch puts them on their first port's worker, so
      // --workers or a core list can still change the count.
      const auto d = group_worker.find(ps.host.receiver);
      if (d != group_worker.end()) ps.worker = cfg.ports[d->second].worker;
    }
  }
  // After the ports: headroom depends on each port's speed and cable length.
  read_lossless(rd, root, cfg);

  auto member = [&](const YAML::Node& m, const std::string& mp, bool inline_in_route = false) {
    return read_member(rd, m, mp, port_index, inline_in_route);
  };

  std::map<std::string, uint32_t> group_index;
  if (auto gs = root["nexthop_groups"]) {
    rd.seq(gs, "nexthop_groups");
    for (std::size_t i = 0; i < gs.size(); ++i) {
      const auto g = gs[i];
      const std::string gp = fmt::format("nexthop_groups[{}]", i);
      GroupSpec spec = read_group(rd, g, gp, port_index);
      if (!group_index.emplace(spec.name, static_cast<uint32_t>(cfg.groups.size())).second)
        rd.fail(g["name"], gp + ".name", fmt::format("duplicate group name '{}'", spec.name));
      cfg.groups.push_back(std::move(spec));
    }
  }

  if (auto x = root["load_view"]) read_load_view(rd, x, cfg.load_view);
  if (auto x = root["link_events"]) read_link_events(rd, x, port_index, cfg);
  if (auto x = root["mirror_sessions"]) read_mirror_sessions(rd, x, port_index, cfg);
  if (root["collectives"] || root["traffic"]) {
    const HostTable hosts = switch_hosts(cfg);
    if (auto x = root["collectives"]) read_collectives(rd, x, hosts, cfg.collectives);
    if (auto x = root["traffic"]) read_traffic(rd, x, hosts, cfg.traffic);
  }

  if (auto x = root["limits"]) read_limits(rd, x, cfg.route_limits);

  const YAML::Node rs_ = root["routes"];
  if (rs_) {
    rd.seq(rs_, "routes");
    // Routes are one when their prefixes are, however written: 10.0.0.0/24 and 10.0.0.0/024,
    // 2001:db8::/32 and 2001:0db8::/32. Host bits are refused (route_prefix), so the address
    // as read is the prefix.
    std::map<std::tuple<bool, std::array<uint8_t, 16>, uint8_t>, std::size_t> seen;
    for (std::size_t i = 0; i < rs_.size(); ++i) {
      const auto r = rs_[i];
      const std::string rp = fmt::format("routes[{}]", i);
      rd.keys(r, rp, {"prefix", "group", "port", "mac", "nexthops", "via", "drop"});
      if (!r["prefix"]) rd.fail(r, rp + ".prefix", "missing");
      RouteSpec spec = rd.route_prefix(r["prefix"], rp + ".prefix");
      const std::string key = r["prefix"].as<std::string>();
      std::array<uint8_t, 16> addr;
      std::memcpy(addr.data(), spec.addr, addr.size());
      if (auto [it, fresh] = seen.emplace(std::tuple{spec.ipv6, addr, spec.depth}, i); !fresh)
        rd.fail(r["prefix"], rp + ".prefix",
                fmt::format("duplicate route {}: the prefix of routes[{}] ({})", key, it->second, rs_[it->second]["prefix"].as<std::string>()));
      const int forms = (r["group"] ? 1 : 0) + (r["port"] && !r["via"] ? 1 : 0) + (r["nexthops"] ? 1 : 0) + (r["via"] ? 1 : 0) +
                        (r["drop"] ? 1 : 0);
      if (forms != 1) rd.fail(r, rp, "give exactly one of: group, port (+ mac), nexthops, via, drop");
      if (r["drop"]) read_drop(rd, r["drop"], rp + ".drop");
      if (r["via"] && r["mac"]) rd.fail(r["mac"], rp + ".mac", "a next hop by IP has its MAC found by ARP / neighbour discovery");
      if (r["group"]) {
        const std::string g = rd.str(r["group"], rp + ".group");
        auto it = group_index.find(g);
        if (it == group_index.end()) rd.fail(r["group"], rp + ".group", fmt::format("group '{}' is referenced but not defined in nexthop_groups", g));
        spec.group = it->second;
      } else {
        // The route's own group, named after its prefix (no named group may take such a name).
        GroupSpec g;
        g.name = kRouteGroupPrefix + key;
        if (r["drop"]) {
          g.drop = true;
        } else if (r["via"]) {
          g.members.push_back(read_via_member(rd, r["via"], r["port"], rp + ".via", rp + ".port", port_index, cfg));
        } else if (r["port"]) {
          g.members.push_back(member(r, rp, true));
        } else {
          const YAML::Node nh = r["nexthops"];
          rd.seq(nh, rp + ".nexthops");
          if (nh.size() == 0) rd.fail(nh, rp + ".nexthops", "empty");
          if (nh.size() > kMaxGroupMembers)
            rd.fail(nh, rp + ".nexthops", fmt::format("{} next hops; a route has at most {}, as a group has members", nh.size(), kMaxGroupMembers));
          for (std::size_t k = 0; k < nh.size(); ++k) {
            const std::string np = fmt::format("{}.nexthops[{}]", rp, k);
            if (nh[k].IsMap() && nh[k]["ip"]) {
              rd.keys(nh[k], np, {"ip", "port", "weight"});
              GroupMemberSpec m = read_via_member(rd, nh[k]["ip"], nh[k]["port"], np + ".ip", np + ".port", port_index, cfg);
              if (auto w = nh[k]["weight"]) m.weight = static_cast<uint32_t>(rd.integer(w, np + ".weight", 1, 64));
              g.members.push_back(m);
            } else {
              g.members.push_back(member(nh[k], np));
            }
          }
        }
        uint32_t w = 0;
        for (auto& m : g.members) w += m.weight;
        while (g.table_size < w) g.table_size <<= 1;
        spec.group = static_cast<uint32_t>(cfg.groups.size());
        cfg.groups.push_back(std::move(g));
      }
      if (r["mac"] && !r["port"]) rd.fail(r["mac"], rp + ".mac", "mac goes with port");
      cfg.routes.push_back(spec);
    }
  }
  // The ports' addresses make their own routes (the switch's host routes, connected subnets).
  try {
    add_interface_routes(cfg);
  } catch (const std::runtime_error& e) {
    rd.fail(rs_ ? rs_ : ports, "routes", e.what());
  }
  // The routes must fit the tables they start in (limits: given, or the defaults).
  if (auto p = check_limits(cfg.route_limits, route_table_needs(cfg.routes))) {
    const YAML::Node limits = root["limits"];
    const YAML::Node given = limits ? limits[p->key] : YAML::Node();
    rd.fail(given ? given : rs_, "limits." + p->key, given ? p->reason : p->reason + " (the default)");
  }
  return cfg;
}

}  // namespace

SwitchConfig load_config_node(const YAML::Node& root, const std::string& source, bool fabric) {
  try {
    return load_root(root, source, fabric);
  } catch (const YAML::Exception& e) {
    // A read the checks above did not guard (a node of the wrong kind subscripted or converted):
    // still a refusal with the line, never an escaping exception. fuzz_config reports these
    // ("(structure)") so that the missing check gets written.
    ConfigError err(source, e.mark.line >= 0 ? e.mark.line + 1 : 0, "(structure)", e.msg);
    err.unguarded = true;
    throw err;
  }
}

SwitchConfig load_config_text(const std::string& text, const std::string& source) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    throw ConfigError(source, e.mark.line + 1, "(syntax)", e.msg);
  } catch (const YAML::Exception& e) {
    throw ConfigError(source, e.mark.line >= 0 ? e.mark.line + 1 : 0, "(syntax)", e.msg);
  }
  return load_config_node(root, source, false);
}

SwitchConfig load_config_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError(path, 0, "(file)", "cannot open");
  std::stringstream ss;
  ss << in.rdbuf();
  return load_config_text(ss.str(), path);
}

}  // namespace rs
