// Compiles the configuration's groups and routes into a FIB: next hops, redirection tables
// (weights by replication), each group's routing policies with their parameters (and whether
// the route stages choose its member inline), the LPM routes, then each worker's policy
// instances.
#include <fmt/core.h>

#include <rte_errno.h>

#include <algorithm>
#include <cstring>
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

std::vector<GroupSlot> group_slots(const SwitchConfig& cfg) {
  std::vector<GroupSlot> slots;
  uint32_t next = 0;
  for (auto& g : cfg.groups) {
    GroupSlot s{&g, {}};
    for (std::size_t m = 0; m < g.members.size(); ++m) s.nexthop.push_back(next++);
    slots.push_back(std::move(s));
  }
  return slots;
}

namespace {

// The redirection table the running FIB has for the group `name`, in the new next-hop ids (a
// next hop is the same one if its port and MAC are): Fib::kNoMember where a bucket's member
// is not among `members`. Empty when there is no such group.
std::vector<uint32_t> earlier_table(const FibGroups* previous, const std::string& name, const FibGroups& next,
                                    const std::vector<uint32_t>& members) {
  if (!previous) return {};
  const auto g = std::find_if(previous->groups.begin(), previous->groups.end(),
                              [&](const NextHopGroup& x) { return x.name == name && !x.table.empty(); });
  if (g == previous->groups.end()) return {};
  std::vector<uint32_t> t(g->table.size(), Fib::kNoMember);
  for (std::size_t b = 0; b < t.size(); ++b) {
    const NextHop& was = previous->nexthops[g->table[b]];
    for (uint32_t m : members)
      if (next.nexthops[m].port == was.port && std::memcmp(&next.nexthops[m].mac, &was.mac, sizeof was.mac) == 0) {
        t[b] = m;
        break;
      }
  }
  return t;
}

}  // namespace

std::shared_ptr<FibGroups> build_groups(const std::vector<GroupSlot>& slots, std::size_t num_nexthops, uint16_t workers,
                                        uint64_t seed, const FibGroups* previous, const std::vector<bool>& same) {
  if (num_nexthops > kMaxNexthops) throw std::runtime_error(fmt::format("more than {} next hops", kMaxNexthops));
  auto out = std::make_shared<FibGroups>();
  out->nexthops.assign(num_nexthops, NextHop{kInvalidPort, {}});  // unused ids lead nowhere
  out->nexthop_vlan.assign(num_nexthops, 0);
  for (auto& s : slots) {
    NextHopGroup ng;
    if (!s.spec) {  // a deleted group's slot: no route names it
      out->groups.push_back(std::move(ng));
      continue;
    }
    const GroupSpec& g = *s.spec;
    ng.name = g.name;
    if (g.drop) {
      ng.drop = true;
      out->groups.push_back(std::move(ng));
      continue;
    }
    ng.choices = {resolve_policy(g.policy, fmt::format("group '{}'", g.name))};
    for (uint8_t tc = 0; tc < 8; ++tc) {
      if (!g.policy_by_tc[tc]) continue;
      ng.choice_of_tc[tc] = static_cast<uint8_t>(ng.choices.size());
      ng.choices.push_back(resolve_policy(*g.policy_by_tc[tc], fmt::format("group '{}' class {}", g.name, tc)));
    }
    std::vector<uint32_t> weighted;
    for (std::size_t i = 0; i < g.members.size(); ++i) {
      const uint32_t nh = s.nexthop.at(i);
      if (nh >= num_nexthops) throw std::runtime_error(fmt::format("group '{}': bad next hop {}", g.name, nh));
      out->nexthops[nh] = {g.members[i].port, g.members[i].mac};
      out->nexthop_vlan[nh] = g.members[i].vlan;
      // Next hops still being resolved carry nothing until they are (as an ASIC's group holds
      // only resolved neighbours); the control plane republishes the group when they are.
      if (!g.members[i].resolved) continue;
      ng.members.push_back(nh);
      for (uint32_t k = 0; k < g.members[i].weight; ++k) weighted.push_back(nh);
    }
    if (g.origin == GroupOrigin::Local || g.origin == GroupOrigin::Connected || (ng.members.empty() && !g.members.empty())) {
      // The control plane's: the switch's addresses, a subnet's hosts, or no next hop resolved.
      ng.punt = g.origin == GroupOrigin::Local ? PuntReason::Local : PuntReason::Glean;
      ng.members.clear();
      ng.choices.clear();
      ng.choice_of_tc = {};
      out->groups.push_back(std::move(ng));
      continue;
    }
    // SwitchConfig is also built without the YAML loader: check what build_table divides by.
    if (weighted.empty()) throw std::runtime_error(fmt::format("group '{}': no member with a weight above 0", g.name));
    std::vector<uint32_t> earlier = earlier_table(previous, g.name, *out, weighted);
    if (earlier.empty() && !g.table_from.empty()) earlier = earlier_table(previous, g.table_from, *out, weighted);
    ng.table = Fib::rebalance_table(earlier, weighted, g.table_size);
    Fib::complete_group(ng, num_nexthops);
    out->groups.push_back(std::move(ng));
  }
  Fib::attach_policies(*out, workers, seed, previous, same);
  return out;
}

std::unique_ptr<Fib> build_fib(const SwitchConfig& cfg) {
  const auto slots = group_slots(cfg);
  std::size_t n = 0;
  for (auto& s : slots) n += s.nexthop.size();
  RouteLimits limits;
  limits.v4 = limits.v6 = static_cast<uint32_t>(cfg.routes.size() + 16);
  auto bank = std::make_shared<RouteBank>(limits);
  auto groups = build_groups(slots, n, cfg.workers, cfg.seed, nullptr, {});
  for (auto& r : cfg.routes) {
    if (r.group >= groups->groups.size()) throw std::runtime_error(fmt::format("route to unknown group {}", r.group));
    const int rc = bank->add(r);
    if (rc < 0) throw std::runtime_error(fmt::format("route add failed: {}", rte_strerror(-rc)));
  }
  return std::make_unique<Fib>(std::move(bank), std::move(groups));
}

}  // namespace rs
