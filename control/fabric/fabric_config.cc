#include "control/fabric/fabric_config.h"

#include <fmt/core.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

#include "control/config/config_loader.h"
#include "control/config/config_reader.h"
#include "control/config/nic_config.h"
#include "control/config/routing_config.h"
#include "control/fabric/fabric_custom.h"
#include "control/fabric/fabric_topology.h"
#include "dataplane/nic/roce_wire.h"

namespace rs {

namespace {

// Every switch's settings and the two port templates (a host port, a cable port), read by the
// switch loader from `switch_defaults` with two ports added, so its checks and its errors (the
// fabric file's lines) are the switch config's.
SwitchConfig read_defaults(const YAML::Node& defaults, const std::string& source, double host_gbps, double link_gbps,
                           double cable_m) {
  YAML::Node root = defaults ? YAML::Clone(defaults) : YAML::Node(YAML::NodeType::Map);
  YAML::Node host, link;
  host["name"] = "host";
  host["kind"] = "emulated_host";
  host["speed_gbps"] = host_gbps;
  host["host"]["ip"] = "10.0.0.2";
  host["host"]["mac"] = "02:00:00:00:00:02";  // the template's; leaf_spine gives each host its own
  link["name"] = "cable";
  link["kind"] = "link";
  link["speed_gbps"] = link_gbps;
  link["cable_length_m"] = cable_m;
  root["ports"].push_back(host);
  root["ports"].push_back(link);
  return load_config_node(root, source, true);
}

// A random permutation of n hosts with no host sending to itself (Sattolo's shuffle: one cycle
// through every host), from a generator whose draws are the same everywhere for a seed.
std::vector<std::pair<std::size_t, std::size_t>> permutation(std::size_t n, uint64_t seed) {
  std::vector<std::size_t> to(n);
  for (std::size_t i = 0; i < n; ++i) to[i] = i;
  uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
  for (std::size_t i = n - 1; i > 0; --i) {
    x ^= x >> 12, x ^= x << 25, x ^= x >> 27;  // xorshift64*
    const std::size_t j = static_cast<std::size_t>((x * 0x2545f4914f6cdd1dull) % i);
    std::swap(to[i], to[j]);
  }
  std::vector<std::pair<std::size_t, std::size_t>> out;
  for (std::size_t i = 0; i < n; ++i) out.push_back({i, to[i]});
  return out;
}

// flows: [{from, to, rate_gbps, dscp, payload, qp, start_ms, stop_ms}] (constant-rate RoCE flows
// of emulated hosts) or [{pattern: permutation, rate_gbps, dscp, payload, seed, start_ms,
// stop_ms}] (every host one such flow to another).
void read_flows(const ConfigReader& rd, const YAML::Node& fl, const HostTable& hosts, uint64_t seed) {
  rd.seq(fl, "flows");
  for (std::size_t i = 0; i < fl.size(); ++i) {
    const std::string fp = fmt::format("flows[{}]", i);
    const YAML::Node f = fl[i];
    const bool perm = f.IsMap() && f["pattern"];
    if (perm) rd.keys(f, fp, {"pattern", "rate_gbps", "dscp", "payload", "seed", "start_ms", "stop_ms"});
    else rd.keys(f, fp, {"from", "to", "rate_gbps", "dscp", "payload", "qp", "start_ms", "stop_ms"});
    HostFlowSpec s;
    if (auto x = f["rate_gbps"]) s.rate_gbps = rd.real(x, fp + ".rate_gbps", 1e-6, 800);
    if (auto x = f["dscp"]) s.dscp = static_cast<uint8_t>(rd.integer(x, fp + ".dscp", 0, 63));
    if (auto x = f["payload"]) s.payload = static_cast<uint32_t>(rd.integer(x, fp + ".payload", 0, 1400));
    if (auto x = f["start_ms"]) s.start_ns = rd.nanoseconds(x, fp + ".start_ms", 0, 1e7, 1e6);
    if (auto x = f["stop_ms"]) s.stop_ns = rd.nanoseconds(x, fp + ".stop_ms", 0, 1e7, 1e6);
    if (perm) {
      if (rd.str(f["pattern"], fp + ".pattern") != "permutation") rd.fail(f["pattern"], fp + ".pattern", "expected 'permutation' (NIC patterns go under traffic)");
      const uint64_t pseed = f["seed"] ? static_cast<uint64_t>(rd.integer(f["seed"], fp + ".seed", 0, 0xFFFFFFFF)) : seed;
      if (hosts.names.size() < 2) rd.fail(f, fp, "a permutation needs two hosts at least");
      for (const auto& [from, to] : permutation(hosts.names.size(), pseed)) {
        HostFlowSpec x = s;
        x.dst_ip = hosts.ports[to]->host.ip;
        x.qp = static_cast<uint32_t>(0x2000 + i * 0x1000 + from);
        hosts.ports[from]->host.flows.push_back(x);
      }
      continue;
    }
    for (const char* k : {"from", "to"})
      if (!f[k]) rd.fail(f, fp + "." + k, "missing");
    const std::size_t from = read_host(rd, f["from"], fp + ".from", hosts), to = read_host(rd, f["to"], fp + ".to", hosts);
    if (from == to) rd.fail(f["to"], fp + ".to", "a host does not send to itself");
    s.dst_ip = hosts.ports[to]->host.ip;
    s.qp = f["qp"] ? static_cast<uint32_t>(rd.integer(f["qp"], fp + ".qp", 1, 0xFFFFFF)) : static_cast<uint32_t>(0x1000 + i);
    hosts.ports[from]->host.flows.push_back(s);
  }
}

FabricRunSpec load(const YAML::Node& root, const std::string& source) {
  ConfigReader rd(source);
  if (!root.IsMap()) rd.fail(root, "(top level)", "expected a map of sections (fabric, switch_defaults, flows)");
  rd.keys(root, "", {"fabric", "switch_defaults", "hosts", "flows", "traffic", "collectives"});
  const YAML::Node fab = root["fabric"];
  if (!fab) rd.fail(root, "fabric", "missing");
  rd.keys(fab, "fabric", {"leaf_spine", "fat_tree", "switches", "links", "defaults", "policy", "step_ns", "max_jump_us", "duration_ms", "seed", "threads", "cable_events", "convergence_ms"});
  FabricRunSpec out;
  out.source = source;
  if ((fab["leaf_spine"] ? 1 : 0) + (fab["fat_tree"] ? 1 : 0) + (fab["switches"] ? 1 : 0) != 1)
    rd.fail(fab, "fabric", "give exactly one topology: leaf_spine, fat_tree, or switches (and links)");
  if (fab["links"] && !fab["switches"]) rd.fail(fab["links"], "fabric.links", "links join the switches of fabric.switches");
  const bool custom = static_cast<bool>(fab["switches"]);
  const bool ft = static_cast<bool>(fab["fat_tree"]);
  const std::string tp = custom ? "fabric.defaults" : ft ? "fabric.fat_tree" : "fabric.leaf_spine";
  // A written-out fabric's defaults for its hosts and links are the generators' keys, in `fabric.defaults`.
  const YAML::Node topo = custom ? (fab["defaults"] ? fab["defaults"] : YAML::Node(YAML::NodeType::Map)) : fab[ft ? "fat_tree" : "leaf_spine"];
  if (custom) rd.keys(topo, "fabric.defaults", {"host_gbps", "link_gbps", "cable_m", "loss"});
  else if (ft) rd.keys(topo, tp, {"k", "host_gbps", "link_gbps", "cable_m", "loss"});
  else rd.keys(topo, tp, {"spines", "leaves", "hosts_per_leaf", "links_per_pair", "host_gbps", "uplink_gbps", "cable_m", "loss"});
  LeafSpineSpec ls;
  FatTreeSpec fts;
  double cable_m = 100, host_gbps = 100, link_gbps = 100, loss = 0;
  auto count = [&](const char* k, unsigned& v) {
    if (auto x = topo[k]) v = static_cast<unsigned>(rd.integer(x, fmt::format("{}.{}", tp, k), 1, 250));
  };
  count("spines", ls.spines);
  count("leaves", ls.leaves);
  count("hosts_per_leaf", ls.hosts_per_leaf);
  count("links_per_pair", ls.links_per_pair);
  count("k", fts.k);
  if (auto x = topo["host_gbps"]) host_gbps = rd.real(x, tp + ".host_gbps", 0.001, 800);
  const char* lk = ft || custom ? "link_gbps" : "uplink_gbps";
  if (auto x = topo[lk]) link_gbps = rd.real(x, tp + "." + lk, 0.001, 800);
  if (auto x = topo["cable_m"]) cable_m = rd.real(x, tp + ".cable_m", 0, 100000);
  if (auto x = topo["loss"]) loss = rd.real(x, tp + ".loss", 0, 1);
  uint64_t seed = 1;
  if (auto x = fab["seed"]) seed = static_cast<uint64_t>(rd.integer(x, "fabric.seed", 0, 0xFFFFFFFF));
  PolicySpec policy;
  if (auto x = fab["policy"]) policy = read_policy(rd, x, "fabric.policy");
  // The sections that are every switch's; ports, groups and routes are the fabric's to make.
  if (auto d = root["switch_defaults"])
    rd.keys(d, "switch_defaults", {"switch", "qos", "buffer", "wred_profiles", "queue_wred", "pfcwd", "load_view", "limits", "copp"});
  const SwitchConfig defaults = read_defaults(root["switch_defaults"], source, host_gbps, link_gbps, cable_m);
  PortSpec host_tmpl = defaults.ports[0], fabric_tmpl = defaults.ports[1];
  host_tmpl.host = HostSpec{};
  const uint64_t delay = static_cast<uint64_t>(cable_m * 5);  // light in fibre: 5 ns a metre
  try {
    if (custom) {
      FabricBuilder b{defaults, host_tmpl, fabric_tmpl, seed, host_gbps, link_gbps, delay, loss, {}};
      read_custom_topology(rd, fab, b, policy, source);
      out.fabric = std::move(b.f);
    } else if (ft) {
      fts.host_gbps = host_gbps, fts.link_gbps = link_gbps, fts.cable_delay_ns = delay, fts.cable_loss = loss, fts.seed = seed;
      fts.base = defaults, fts.host_port = host_tmpl, fts.fabric_port = fabric_tmpl, fts.policy = policy;
      out.fabric = fat_tree(fts);
    } else {
      ls.host_gbps = host_gbps, ls.uplink_gbps = link_gbps, ls.cable_delay_ns = delay, ls.cable_loss = loss, ls.seed = seed;
      ls.base = defaults, ls.host_port = host_tmpl, ls.fabric_port = fabric_tmpl, ls.policy = policy;
      out.fabric = leaf_spine(ls);
    }
  } catch (const std::invalid_argument& e) {
    rd.fail(topo, tp, e.what());
  }
  if (auto x = fab["step_ns"]) out.fabric.step_ns = static_cast<uint64_t>(rd.integer(x, "fabric.step_ns", 1, 1'000'000));
  if (auto x = fab["max_jump_us"]) out.fabric.max_jump_ns = rd.nanoseconds(x, "fabric.max_jump_us", 0, 1e6, 1e3);
  if (auto x = fab["threads"]) out.fabric.threads = static_cast<unsigned>(rd.integer(x, "fabric.threads", 1, 64));
  if (auto x = fab["duration_ms"]) out.duration_s = rd.real(x, "fabric.duration_ms", 0.001, 1e7) / 1e3;
  if (auto x = fab["convergence_ms"]) {
    double ms;
    if (x.IsScalar() && x.Scalar() == "never") out.convergence_ns.reset();
    else if (!x.IsScalar() || !YAML::convert<double>::decode(x, ms)) rd.fail(x, "fabric.convergence_ms", "expected milliseconds or 'never'");
    else out.convergence_ns = rd.nanoseconds(x, "fabric.convergence_ms", 0, 1e7, 1e6);
  }
  if (auto ev = fab["cable_events"]) {
    rd.seq(ev, "fabric.cable_events");
    for (std::size_t i = 0; i < ev.size(); ++i) {
      const std::string ep = fmt::format("fabric.cable_events[{}]", i);
      rd.keys(ev[i], ep, {"cable", "at_ms", "state"});
      for (const char* k : {"cable", "at_ms", "state"})
        if (!ev[i][k]) rd.fail(ev[i], ep + "." + k, "missing");
      // A cable by either end: leaf1.up2 or spine2.down1.
      const std::string end = rd.str(ev[i]["cable"], ep + ".cable");
      FabricCable* cable = nullptr;
      for (auto& c : out.fabric.cables) {
        const std::string a = out.fabric.switches[c.a_switch].name + "." + out.fabric.switches[c.a_switch].cfg.ports[c.a_port].name;
        const std::string b = out.fabric.switches[c.b_switch].name + "." + out.fabric.switches[c.b_switch].cfg.ports[c.b_port].name;
        if (end == a || end == b || end == c.name) cable = &c;
      }
      if (!cable) rd.fail(ev[i]["cable"], ep + ".cable", fmt::format("no cable '{}' (name one by an end: leaf1.up1)", end));
      const uint64_t at = rd.nanoseconds(ev[i]["at_ms"], ep + ".at_ms", 0, 1e7, 1e6);
      const std::string st = rd.str(ev[i]["state"], ep + ".state");
      if (st != "up" && st != "down") rd.fail(ev[i]["state"], ep + ".state", "expected 'up' or 'down'");
      if (!cable->events.empty() && cable->events.back().first > at)
        rd.fail(ev[i]["at_ms"], ep + ".at_ms", "before this cable's previous event: list a cable's events in time order");
      cable->events.push_back({at, st == "up"});
    }
  }
  // The hosts, by name, for flows, traffic and collectives.
  HostTable table;
  table.source = source;
  table.noun = "host";
  std::vector<uint16_t> all;
  for (std::size_t sw = 0; sw < out.fabric.switches.size(); ++sw) {
    auto& cfg = out.fabric.switches[sw].cfg;
    for (std::size_t pt = 0; pt < cfg.ports.size(); ++pt) {
      if (cfg.ports[pt].kind != PortKind::EmulatedHost) continue;
      const auto h = static_cast<uint16_t>(out.hosts.size());
      out.hosts.push_back({static_cast<uint16_t>(sw), static_cast<uint16_t>(pt)});
      out.host_names.push_back(out.fabric.switches[sw].name + "." + cfg.ports[pt].name);
      table.names.push_back(out.host_names.back());
      table.ports.push_back(&cfg.ports[pt]);
      table.groups[out.fabric.switches[sw].name].push_back(h);
      all.push_back(h);
    }
  }
  table.groups["all"] = all;
  if (auto hs = root["hosts"]) {
    rd.map(hs, "hosts");
    rd.keys(hs, "hosts", {"nic"});
    if (auto x = hs["nic"]) {
      nic::NicSpec n;
      read_nic(rd, x, "hosts.nic", n);
      for (PortSpec* p : table.ports) p->host.nic = n;
    }
  }
  if (auto fl = root["flows"]) read_flows(rd, fl, table, seed);
  if (auto x = root["collectives"]) read_collectives(rd, x, table, out.collectives);
  if (auto x = root["traffic"]) read_traffic(rd, x, table, out.traffic, seed);
  // Each queue pair's unloaded round trip to its peer, for its messages' FCT slowdown.
  std::map<uint32_t, uint16_t> switch_of;  // host address -> its switch
  double slowest = 1e9;
  for (const auto& [sw, pt] : out.hosts) {
    const PortSpec& p = out.fabric.switches[sw].cfg.ports[pt];
    switch_of[p.host.ip] = sw;
    slowest = std::min(slowest, p.egress.speed_gbps);
  }
  const auto paths = fabric_paths(out.fabric, nic::kHeaders + nic::kAethLen, slowest);
  for (const auto& [sw, pt] : out.hosts)
    for (auto& q : out.fabric.switches[sw].cfg.ports[pt].host.qps)
      if (auto it = switch_of.find(q.peer_ip); it != switch_of.end())
        q.base_rtt_ns = paths[sw][it->second].rtt_ns, q.path_links = static_cast<uint8_t>(paths[sw][it->second].links);
  return out;
}

}  // namespace

FabricRunSpec load_fabric_text(const std::string& text, const std::string& source) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw ConfigError(source, e.mark.line >= 0 ? e.mark.line + 1 : 0, "(syntax)", e.msg);
  }
  try {
    return load(root, source);
  } catch (const YAML::Exception& e) {
    ConfigError err(source, e.mark.line >= 0 ? e.mark.line + 1 : 0, "(structure)", e.msg);
    err.unguarded = true;
    throw err;
  }
}

FabricRunSpec load_fabric_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError(path, 0, "(file)", "cannot open");
  std::stringstream ss;
  ss << in.rdbuf();
  return load_fabric_text(ss.str(), path);
}

bool is_fabric_file(const std::string& path) {
  try {
    const YAML::Node root = YAML::LoadFile(path);
    return root.IsMap() && root["fabric"];
  } catch (const YAML::Exception&) {
    return false;
  }
}

}  // namespace rs
