// Reads a fabric file (docs/fabric.md): `fabric:` (the topology from a few numbers, its cables'
// delay and loss, the routing policy of its groups, the clock's step, scheduled cable cuts),
// `switch_defaults:` (every switch's settings, as a roceswitch config without ports, groups or
// routes: qos, buffer, wred_profiles, queue_wred, pfcwd, load_view, limits, copp, switch),
// `flows:` (constant-rate RoCE flows between hosts named leafN.hM, or a permutation of them),
// `hosts:` (every host's RoCE NIC), `traffic:` and `collectives:` (over the NICs, as a switch
// config's, with hosts named leafN.hM, a switch's name for its hosts, or `all`). Errors name the
// file, the line, the key path and the reason, as the switch config's do.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dataplane/fabric/fabric.h"

namespace rs {

struct FabricRunSpec {
  FabricSpec fabric;
  // The fabric's hosts (leaf1.h1, ...): their (switch, port), the index traffic and collectives
  // name them by.
  std::vector<std::string> host_names;
  std::vector<std::pair<uint16_t, uint16_t>> hosts;
  std::vector<nic::TrafficSpec> traffic;
  std::vector<nic::CollectiveSpec> collectives;
  double duration_s = 0.01;
  // How long after a cable's cut or repair every switch has its converged routes (fabric_routing.h);
  // none: never (the switches' fast failover alone).
  std::optional<uint64_t> convergence_ns = 1'000'000;
  std::string source;
};

// Whether a YAML document is a fabric (it has a top-level `fabric:`); false when it does not
// parse (the switch loader then says why).
bool is_fabric_file(const std::string& path);
FabricRunSpec load_fabric_text(const std::string& text, const std::string& source);
FabricRunSpec load_fabric_file(const std::string& path);

}  // namespace rs
