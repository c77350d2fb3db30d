// libFuzzer target: the fabric file loader (control/fabric/fabric_config.h), on any text. A file
// either loads or is refused with a ConfigError naming a key path ("(structure)", the loader's
// last resort, is a missing check); one that loads must make a fabric the Fabric accepts: every
// cable joins two link ports once, every switch routes every host, and traffic, collectives and
// queue pairs name only the fabric's hosts.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>

#include "control/config/config_loader.h"
#include "control/fabric/fabric_config.h"

namespace {
[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "fuzz_fabric_config: %s\n", what.c_str());
  std::abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  rs::FabricRunSpec spec;
  try {
    spec = rs::load_fabric_text(text, "fuzz.yaml");
  } catch (const rs::ConfigError& e) {
    if (e.path.empty() || e.reason.empty() || e.unguarded) fail(std::string("refused without a key path: ") + e.what());
    return 0;
  }
  const rs::FabricSpec& f = spec.fabric;
  std::set<std::pair<uint16_t, uint16_t>> ends;
  for (const rs::FabricCable& c : f.cables)
    for (auto [s, p] : {std::pair{c.a_switch, c.a_port}, std::pair{c.b_switch, c.b_port}}) {
      if (s >= f.switches.size() || p >= f.switches[s].cfg.ports.size()) fail("a cable to a port that does not exist");
      if (f.switches[s].cfg.ports[p].kind != rs::PortKind::Link) fail("a cable to a port that is not a link");
      if (!ends.insert({s, p}).second) fail("a port with two cables");
    }
  std::size_t hosts = 0;
  for (auto& s : f.switches)
    for (auto& p : s.cfg.ports) hosts += p.kind == rs::PortKind::EmulatedHost;
  for (auto& s : f.switches)
    if (s.cfg.routes.size() != hosts) fail("switch " + s.name + " does not route every host");
  // Traffic and collectives name the fabric's hosts, and every queue pair goes to one of them.
  if (spec.hosts.size() != hosts || spec.host_names.size() != hosts) fail("the host table misses hosts");
  std::set<uint32_t> ips;
  for (auto [s, p] : spec.hosts) ips.insert(f.switches[s].cfg.ports[p].host.ip);
  for (const auto& t : spec.traffic)
    for (uint16_t h : t.hosts)
      if (h >= hosts) fail("a traffic pattern names a host that does not exist");
  for (const auto& c : spec.collectives)
    for (uint16_t h : c.ports)
      if (h >= hosts) fail("a collective names a host that does not exist");
  for (auto& s : f.switches)
    for (auto& p : s.cfg.ports)
      for (const auto& q : p.host.qps)
        if (!ips.count(q.peer_ip) || q.peer_ip == p.host.ip) fail("a queue pair to no host of the fabric, or to itself");
  return 0;
}
