// Compiles the configuration's groups and routes into a FIB: next hops, redirection tables
// (weights by replication), each group's routing policy (and whether the route stages choose
// its member inline), then the LPM routes.
#include <fmt/core.h>

#include <stdexcept>

#include "dataplane/routing/routing_policy.h"
#include "dataplane/switch/switch_config.h"

namespace rs {

std::unique_ptr<Fib> build_fib(const SwitchConfig& cfg) {
  auto fib = std::make_unique<Fib>();
  for (auto& g : cfg.groups) {
    NextHopGroup ng;
    ng.name = g.name;
    const int pol = RoutingPolicyRegistry::find(g.policy);
    if (pol < 0) throw std::runtime_error(fmt::format("group '{}': unknown routing policy '{}'", g.name, g.policy));
    use_policy(ng, pol);
    std::vector<uint32_t> weighted;
    for (auto& m : g.members) {
      const uint32_t nh = fib->add_nexthop({m.port, m.mac});
      ng.members.push_back(nh);
      for (uint32_t k = 0; k < m.weight; ++k) weighted.push_back(nh);
    }
    // SwitchConfig is also built without the YAML loader: check what build_table divides by.
    if (weighted.empty()) throw std::runtime_error(fmt::format("group '{}': no member with a weight above 0", g.name));
    ng.table = Fib::build_table(weighted, g.table_size);
    fib->add_group(std::move(ng));
  }
  for (auto& r : cfg.routes) fib->add_route(r, static_cast<uint32_t>(cfg.routes.size() + 16));
  return fib;
}

}  // namespace rs
