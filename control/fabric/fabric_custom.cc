#include "control/fabric/fabric_custom.h"

#include <fmt/core.h>
#include <sys/stat.h>

#include <map>
#include <set>

#include "control/config/config_loader.h"

namespace rs {

namespace {

SwitchConfig load_switch_file(const ConfigReader& rd, const YAML::Node& n, const std::string& path, const std::string& source) {
  std::string file = rd.str(n, path);
  if (!file.empty() && file[0] != '/' && source.find('/') != std::string::npos) file = source.substr(0, source.rfind('/') + 1) + file;
  // A regular file of a sane size: not a device or a pipe that never ends.
  struct stat st{};
  if (::stat(file.c_str(), &st) != 0) rd.fail(n, path, fmt::format("cannot open '{}'", file));
  if (!S_ISREG(st.st_mode) || st.st_size > (16 << 20)) rd.fail(n, path, fmt::format("'{}' is not a config file (a regular file up to 16 MiB)", file));
  YAML::Node root;
  try {
    root = YAML::LoadFile(file);
  } catch (const YAML::BadFile&) {
    rd.fail(n, path, fmt::format("cannot open '{}'", file));
  } catch (const YAML::Exception& e) {
    throw ConfigError(file, e.mark.line >= 0 ? e.mark.line + 1 : 0, "(syntax)", e.msg);
  }
  // Its own errors name its own file and line.
  return load_config_node(root, file, true);
}

}  // namespace

void read_custom_topology(const ConfigReader& rd, const YAML::Node& fab, FabricBuilder& b, const PolicySpec& policy,
                          const std::string& source) {
  const YAML::Node sws = fab["switches"], links = fab["links"];
  rd.seq(sws, "fabric.switches");
  if (sws.size() == 0) rd.fail(sws, "fabric.switches", "a fabric needs a switch at least");
  if (sws.size() > kMaxFabricSwitches) rd.fail(sws, "fabric.switches", fmt::format("{} switches; a fabric has at most {}", sws.size(), kMaxFabricSwitches));
  std::map<std::string, unsigned> index;
  std::vector<bool> from_file;
  for (std::size_t i = 0; i < sws.size(); ++i) {
    const std::string sp = fmt::format("fabric.switches[{}]", i);
    rd.keys(sws[i], sp, {"name", "hosts", "host_gbps", "config"});
    if (!sws[i]["name"]) rd.fail(sws[i], sp + ".name", "missing");
    const std::string name = rd.str(sws[i]["name"], sp + ".name");
    if (name.empty() || name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") != std::string::npos)
      rd.fail(sws[i]["name"], sp + ".name", fmt::format("'{}': a name is letters, digits, _ and -", name));
    if (name == "all") rd.fail(sws[i]["name"], sp + ".name", "'all' names every host: choose another name");
    if (index.count(name)) rd.fail(sws[i]["name"], sp + ".name", fmt::format("'{}' is named twice", name));
    const unsigned s = b.add_switch(name);
    index[name] = s;
    from_file.push_back(static_cast<bool>(sws[i]["config"]));
    if (auto x = sws[i]["config"]) {
      SwitchConfig cfg = load_switch_file(rd, x, sp + ".config", source);
      cfg.seed = b.f.switches[s].cfg.seed;
      b.f.switches[s].cfg = std::move(cfg);
    }
    double gbps = b.host_gbps;
    if (auto x = sws[i]["host_gbps"]) gbps = rd.real(x, sp + ".host_gbps", 0.001, 800);
    if (auto x = sws[i]["hosts"]) {
      const auto n = static_cast<unsigned>(rd.integer(x, sp + ".hosts", 0, 250));
      if (b.f.switches[s].cfg.ports.size() + n > kMaxPorts)
        rd.fail(x, sp + ".hosts", fmt::format("{} ports; a switch has at most {}", b.f.switches[s].cfg.ports.size() + n, kMaxPorts));
      const double keep = b.host_gbps;
      b.host_gbps = gbps;
      for (unsigned h = 1; h <= n; ++h) b.add_host(s, s + 1, h);
      b.host_gbps = keep;
    }
  }
  // Hosts' addresses are the fabric's routes: one each.
  std::map<uint32_t, std::string> ips;
  for (std::size_t s = 0; s < b.f.switches.size(); ++s)
    for (const auto& p : b.f.switches[s].cfg.ports)
      if (p.kind == PortKind::EmulatedHost && p.host.ip) {
        const std::string who = b.f.switches[s].name + "." + p.name;
        if (auto [it, fresh] = ips.emplace(p.host.ip, who); !fresh)
          rd.fail(sws[s], fmt::format("fabric.switches[{}]", s), fmt::format("host {} has the address of {}", who, it->second));
      }
  if (links) rd.seq(links, "fabric.links");
  std::map<std::pair<unsigned, uint16_t>, std::size_t> linked;  // (switch, port) -> the link that took it
  for (std::size_t i = 0; links && i < links.size(); ++i) {
    const std::string lp = fmt::format("fabric.links[{}]", i);
    const YAML::Node l = links[i];
    rd.keys(l, lp, {"a", "b", "gbps", "cable_m", "loss"});
    double gbps = b.link_gbps, cable_m = static_cast<double>(b.delay_ns) / 5, loss = b.loss;
    if (auto x = l["gbps"]) gbps = rd.real(x, lp + ".gbps", 0.001, 800);
    if (auto x = l["cable_m"]) cable_m = rd.real(x, lp + ".cable_m", 0, 100000);
    if (auto x = l["loss"]) loss = rd.real(x, lp + ".loss", 0, 1);
    std::pair<unsigned, uint16_t> end[2];
    for (int e = 0; e < 2; ++e) {
      const char* k = e ? "b" : "a";
      const std::string ep = lp + "." + k;
      if (!l[k]) rd.fail(l, ep, "missing");
      const std::string text = rd.str(l[k], ep);
      const auto dot = text.find('.');
      const auto it = index.find(text.substr(0, dot));
      if (it == index.end()) rd.fail(l[k], ep, fmt::format("no switch '{}'", text.substr(0, dot)));
      const unsigned s = it->second;
      auto& ports = b.f.switches[s].cfg.ports;
      if (ports.size() >= kMaxPorts && dot == std::string::npos)
        rd.fail(l[k], ep, fmt::format("switch {} has {} ports already, the most a switch has", it->first, kMaxPorts));
      uint16_t p = 0;
      if (dot == std::string::npos) {
        auto taken = [&](unsigned n) {
          for (const auto& q : ports)
            if (q.name == fmt::format("p{}", n)) return true;
          return false;
        };
        unsigned n = static_cast<unsigned>(ports.size()) + 1;  // p{n}, a name not taken
        while (taken(n)) ++n;
        p = b.add(s, b.fabric_port, fmt::format("p{}", n), PortKind::Link, gbps);
      } else {
        const std::string pn = text.substr(dot + 1);
        std::size_t q = 0;
        while (q < ports.size() && ports[q].name != pn) ++q;
        if (q == ports.size()) {
          if (from_file[s]) rd.fail(l[k], ep, fmt::format("switch {} has no port '{}' (its config's link ports are the ones to name)", it->first, pn));
          if (ports.size() >= kMaxPorts) rd.fail(l[k], ep, fmt::format("switch {} has {} ports already, the most a switch has", it->first, kMaxPorts));
          q = b.add(s, b.fabric_port, pn, PortKind::Link, gbps);
        } else if (ports[q].kind != PortKind::Link) {
          rd.fail(l[k], ep, fmt::format("port {} is not a link port (kind: link)", text));
        }
        p = static_cast<uint16_t>(q);
      }
      if (auto [at, fresh] = linked.emplace(std::pair{s, p}, i); !fresh)
        rd.fail(l[k], ep, fmt::format("port {}.{} is already linked by fabric.links[{}]", it->first, ports[p].name, at->second));
      ports[p].egress.speed_gbps = gbps;
      end[e] = {s, p};
    }
    if (end[0].first == end[1].first) rd.fail(l, lp, "a link joins two switches, not a switch to itself");
    FabricCable& c = b.cable(end[0].first, end[0].second, end[1].first, end[1].second);
    c.params.gbps = gbps;
    c.params.delay_ns = static_cast<uint64_t>(cable_m * 5);
    c.params.loss = loss;
  }
  for (std::size_t s = 0; s < b.f.switches.size(); ++s)
    for (std::size_t p = 0; p < b.f.switches[s].cfg.ports.size(); ++p)
      if (b.f.switches[s].cfg.ports[p].kind == PortKind::Link && !linked.count({static_cast<unsigned>(s), static_cast<uint16_t>(p)}))
        rd.fail(sws[s], fmt::format("fabric.switches[{}].config", s),
                fmt::format("link port {}.{} is joined by no link", b.f.switches[s].name, b.f.switches[s].cfg.ports[p].name));
  try {
    fabric_routes(b.f, policy);
  } catch (const std::exception& e) {
    rd.fail(links ? links : sws, links ? "fabric.links" : "fabric.switches", fmt::format("{}: every switch must reach every host", e.what()));
  }
}

}  // namespace rs
