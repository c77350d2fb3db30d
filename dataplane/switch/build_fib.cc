// Compiles the configuration's groups and routes into a FIB: next hops, redirection tables
// (weights by replication), each group's routing policies with their parameters (and whether
// the route stages choose its member inline), the LPM routes, then each worker's policy
// instances.
#include <fmt/core.h>

#include <stdexcept>

#include "dataplane/routing/routing_policy.h"
#include "dataplane/switch/switch_config.h"

namespace rs {

PolicyChoice resolve_policy(const PolicySpec& spec, const std::string& where) {
  const int id = RoutingPolicyRegistry::find(spec.name);
  if (id < 0)
    throw std::runtime_error(fmt::format("{}: unknown routing policy '{}' (known: {})", where, spec.name, RoutingPolicyRegistry::names()));
  const RoutingPolicyEntry& e = RoutingPolicyRegistry::at(static_cast<std::size_t>(id));
  PolicyChoice c{static_cast<uint16_t>(id), default_params(e.params)};
  for (auto& [name, value] : spec.params) {
    const int k = param_index(e.params, name);
    if (k < 0) throw std::runtime_error(fmt::format("{}: policy '{}' has no parameter '{}'", where, spec.name, name));
    const ParamSpec& p = e.params[static_cast<std::size_t>(k)];
    if ((p.type == ParamType::Int || p.type == ParamType::Real) && (value < p.min || value > p.max))
      throw std::runtime_error(fmt::format("{}: {} = {} is out of range [{}, {}]", where, name, value, p.min, p.max));
    c.params.v[static_cast<std::size_t>(k)] = value;
  }
  return c;
}

std::unique_ptr<Fib> build_fib(const SwitchConfig& cfg) {
  auto fib = std::make_unique<Fib>();
  for (auto& g : cfg.groups) {
    NextHopGroup ng;
    ng.name = g.name;
    ng.choices = {resolve_policy(g.policy, fmt::format("group '{}'", g.name))};
    for (uint8_t tc = 0; tc < 8; ++tc) {
      if (!g.policy_by_tc[tc]) continue;
      ng.choice_of_tc[tc] = static_cast<uint8_t>(ng.choices.size());
      ng.choices.push_back(resolve_policy(*g.policy_by_tc[tc], fmt::format("group '{}' class {}", g.name, tc)));
    }
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
  fib->attach_policies(cfg.workers, cfg.seed);
  return fib;
}

}  // namespace rs
