#include "dataplane/tables/fib.h"

#include <algorithm>

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

FibGroups::FibGroups() = default;
FibGroups::~FibGroups() = default;

Fib::Fib() {
  auto g = std::make_shared<FibGroups>();
  own_g_ = g.get();
  g_ = std::move(g);
}

Fib::Fib(std::shared_ptr<const RouteBank> bank, std::shared_ptr<const FibGroups> groups)
    : g_(std::move(groups)), bank_(std::move(bank)) {
  refresh_bank();
}

Fib::~Fib() = default;

void Fib::refresh_bank() {
  if (!bank_) return;
  v4_ = bank_->v4();
  v6_ = bank_->v6();
  default_v4_ = bank_->default_v4();
  default_v6_ = bank_->default_v6();
}

FibGroups& Fib::own_groups() {
  if (!own_g_) throw std::logic_error("a shared FIB snapshot is not built in place");
  return *own_g_;
}

void Fib::attach_policies(uint16_t workers, uint64_t seed) { attach_policies(own_groups(), workers, seed, nullptr, {}); }

void Fib::attach_policies(FibGroups& g, uint16_t workers, uint64_t seed, const FibGroups* previous,
                          const std::vector<bool>& same) {
  g.policy_sets.clear();
  for (uint16_t w = 0; w < workers; ++w) {
    const PolicySet* prev = previous && w < previous->policy_sets.size() ? previous->policy_sets[w].get() : nullptr;
    g.policy_sets.push_back(std::make_unique<PolicySet>(g, w, seed, prev, &same));
  }
}

uint32_t Fib::add_nexthop(const NextHop& nh) {
  auto& nexthops = own_groups().nexthops;
  if (nexthops.size() >= kMaxNexthops) throw std::runtime_error(fmt::format("more than {} next hops", kMaxNexthops));
  nexthops.push_back(nh);
  own_groups().nexthop_vlan.push_back(0);
  return static_cast<uint32_t>(nexthops.size() - 1);
}

std::vector<uint32_t> Fib::build_table(const std::vector<uint32_t>& members, uint32_t size) {
  std::vector<uint32_t> t(size);
  for (uint32_t i = 0; i < size; ++i) t[i] = members[i % members.size()];
  return t;
}

std::vector<uint32_t> Fib::rebalance_table(const std::vector<uint32_t>& old, const std::vector<uint32_t>& members,
                                           uint32_t size) {
  if (old.size() != size || members.empty()) return build_table(members, size);
  // Each distinct member's weight (its copies in `members`), in first-seen order.
  std::vector<uint32_t> ids, weight;
  for (uint32_t m : members) {
    const auto it = std::find(ids.begin(), ids.end(), m);
    if (it == ids.end()) {
      ids.push_back(m);
      weight.push_back(1);
    } else {
      ++weight[static_cast<std::size_t>(it - ids.begin())];
    }
  }
  const std::size_t n = ids.size();
  auto index = [&](uint32_t nh) -> std::size_t {
    return static_cast<std::size_t>(std::find(ids.begin(), ids.end(), nh) - ids.begin());
  };
  std::vector<uint32_t> share(n), have(n, 0), kept(n, 0);
  uint32_t given = 0;
  for (std::size_t i = 0; i < n; ++i) given += share[i] = static_cast<uint32_t>(uint64_t{size} * weight[i] / members.size());
  for (uint32_t nh : old)
    if (const std::size_t i = index(nh); i < n) ++have[i];
  // The buckets the floor shares leave over go to the members holding most beyond their share,
  // so that a table already balanced stays exactly as it is.
  std::vector<std::size_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return int64_t{have[a]} - share[a] > int64_t{have[b]} - share[b];
  });
  for (std::size_t k = 0; given < size; ++k, ++given) ++share[order[k % n]];
  std::vector<uint32_t> t(size, kNoMember);
  for (uint32_t b = 0; b < size; ++b)
    if (const std::size_t i = index(old[b]); i < n && kept[i] < share[i]) {
      t[b] = old[b];
      ++kept[i];
    }
  // The freed buckets, in turn to each member still below its share.
  std::size_t next = 0;
  for (uint32_t b = 0; b < size; ++b) {
    if (t[b] != kNoMember) continue;
    while (kept[next % n] >= share[next % n]) ++next;
    const std::size_t i = next++ % n;
    t[b] = ids[i];
    ++kept[i];
  }
  return t;
}

uint32_t Fib::add_group(NextHopGroup g) {
  auto& groups = own_groups();
  complete_group(g, groups.nexthops.size());
  groups.groups.push_back(std::move(g));
  return static_cast<uint32_t>(groups.groups.size() - 1);
}

void Fib::complete_group(NextHopGroup& g, std::size_t nexthops) {
  if (g.drop) {  // a blackhole: nothing to choose from, no policy
    if (!g.members.empty() || !g.choices.empty()) throw std::runtime_error(fmt::format("group '{}': a drop group with members or a policy", g.name));
    g.table.clear(), g.mask = 0, g.inline_member = false;
    return;
  }
  if (g.members.empty()) throw std::runtime_error(fmt::format("group '{}' has no members", g.name));
  for (uint32_t m : g.members)
    if (m >= nexthops) throw std::runtime_error(fmt::format("group '{}': bad next hop {}", g.name, m));
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
    if (t >= nexthops) throw std::runtime_error(fmt::format("group '{}': bad next hop {} in its table", g.name, t));
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
}

void Fib::add_route(const RouteSpec& r, uint32_t max_routes_hint) {
  if (r.group >= num_groups()) throw std::runtime_error(fmt::format("route to unknown group {}", r.group));
  if (!bank_) {
    if (!own_g_) throw std::logic_error("a shared FIB snapshot is not built in place");
    RouteLimits limits;
    limits.v4 = limits.v6 = max_routes_hint;
    auto bank = std::make_shared<RouteBank>(limits);
    own_bank_ = bank.get();
    bank_ = std::move(bank);
  }
  if (!own_bank_) throw std::logic_error("a shared FIB snapshot is not built in place");
  const int rc = own_bank_->add(r);
  if (rc < 0) throw std::runtime_error(fmt::format("route add failed: {}", rte_strerror(-rc)));
  refresh_bank();
}

}  // namespace rs
