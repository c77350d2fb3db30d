#include "dataplane/tables/fib.h"

#include "dataplane/core/object_name.h"
#include "dataplane/routing/policy_set.h"
#include "dataplane/routing/routing_policy.h"

#include <fmt/core.h>
#include <rte_byteorder.h>
#include <rte_errno.h>
#include <rte_lpm.h>
#include <rte_lpm6.h>

#include <stdexcept>

namespace rs {
Fib::Fib() = default;

void Fib::attach_policies(uint16_t workers, uint64_t seed) {
  policy_sets_.clear();
  for (uint16_t w = 0; w < workers; ++w) policy_sets_.push_back(std::make_unique<PolicySet>(*this, w, seed));
}

Fib::~Fib() {
  if (v4_) rte_lpm_free(v4_);
  if (v6_) rte_lpm6_free(v6_);
}

uint32_t Fib::add_nexthop(const NextHop& nh) {
  if (nexthops_.size() >= kMaxNexthops) throw std::runtime_error(fmt::format("more than {} next hops", kMaxNexthops));
  nexthops_.push_back(nh);
  return static_cast<uint32_t>(nexthops_.size() - 1);
}

std::vector<uint32_t> Fib::build_table(const std::vector<uint32_t>& members, uint32_t size) {
  std::vector<uint32_t> t(size);
  for (uint32_t i = 0; i < size; ++i) t[i] = members[i % members.size()];
  return t;
}

uint32_t Fib::add_group(NextHopGroup g) {
  if (g.members.empty()) throw std::runtime_error(fmt::format("group '{}' has no members", g.name));
  for (uint32_t m : g.members)
    if (m >= nexthops_.size()) throw std::runtime_error(fmt::format("group '{}': bad next hop {}", g.name, m));
  if (g.table.empty()) {
    uint32_t size = 1;
    while (size < g.members.size()) size <<= 1;
    if (size < 64) size = 64;
    g.table = build_table(g.members, size);
  }
  if ((g.table.size() & (g.table.size() - 1)) != 0)
    throw std::runtime_error(fmt::format("group '{}': table size {} is not a power of two", g.name, g.table.size()));
  // The route stages trust a slot as a next-hop index when they take the member inline.
  for (uint32_t t : g.table)
    if (t >= nexthops_.size()) throw std::runtime_error(fmt::format("group '{}': bad next hop {} in its table", g.name, t));
  g.mask = static_cast<uint32_t>(g.table.size() - 1);
  if (g.members.size() > kMaxGroupMembers)
    throw std::runtime_error(fmt::format("group '{}': {} members, at most {}", g.name, g.members.size(), kMaxGroupMembers));
  if (g.choices.empty()) {
    const int ecmp = RoutingPolicyRegistry::find("ecmp");
    if (ecmp < 0) throw std::runtime_error(fmt::format("group '{}': no routing policy, and ecmp is not registered", g.name));
    g.choices.push_back({static_cast<uint16_t>(ecmp), default_params(RoutingPolicyRegistry::at(static_cast<std::size_t>(ecmp)).params)});
  }
  g.inline_member = true;
  for (uint8_t c : g.choice_of_tc) {
    if (c >= g.choices.size()) throw std::runtime_error(fmt::format("group '{}': bad policy choice {}", g.name, c));
    const PolicyChoice& pc = g.choices[c];
    if (pc.policy >= RoutingPolicyRegistry::all().size())
      throw std::runtime_error(fmt::format("group '{}': unknown routing policy {}", g.name, pc.policy));
    const auto by_hash = RoutingPolicyRegistry::at(pc.policy).table_by_flow_hash;
    g.inline_member &= by_hash != nullptr && by_hash(pc.params);
  }
  groups_.push_back(std::move(g));
  return static_cast<uint32_t>(groups_.size() - 1);
}

void Fib::ensure_v4(uint32_t max_routes) {
  if (v4_) return;
  rte_lpm_config cfg{};
  cfg.max_rules = max_routes;
  cfg.number_tbl8s = 1u << 12;
  v4_ = rte_lpm_create(unique_object_name("fib4_").c_str(), SOCKET_ID_ANY, &cfg);
  if (!v4_) throw std::runtime_error(fmt::format("rte_lpm_create failed: {}", rte_strerror(rte_errno)));
}

void Fib::ensure_v6(uint32_t max_routes) {
  if (v6_) return;
  rte_lpm6_config cfg{};
  cfg.max_rules = max_routes;
  cfg.number_tbl8s = 1u << 12;
  v6_ = rte_lpm6_create(unique_object_name("fib6_").c_str(), SOCKET_ID_ANY, &cfg);
  if (!v6_) throw std::runtime_error(fmt::format("rte_lpm6_create failed: {}", rte_strerror(rte_errno)));
}

void Fib::add_route(const RouteSpec& r, uint32_t max_routes_hint) {
  if (r.group >= groups_.size()) throw std::runtime_error(fmt::format("route to unknown group {}", r.group));
  int rc;
  if (r.depth == 0) {
    (r.ipv6 ? default_v6_ : default_v4_) = r.group;
    rc = 0;
  } else if (r.ipv6) {
    ensure_v6(max_routes_hint);
    rc = rte_lpm6_add(v6_, r.addr, r.depth, r.group);
  } else {
    ensure_v4(max_routes_hint);
    uint32_t a = static_cast<uint32_t>(r.addr[0]) << 24 | static_cast<uint32_t>(r.addr[1]) << 16 |
                 static_cast<uint32_t>(r.addr[2]) << 8 | r.addr[3];
    rc = rte_lpm_add(v4_, a, r.depth, r.group);
  }
  if (rc < 0) throw std::runtime_error(fmt::format("route add failed: {}", rte_strerror(-rc)));
}

}  // namespace rs
