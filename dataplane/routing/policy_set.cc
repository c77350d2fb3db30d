#include "dataplane/routing/policy_set.h"

#include <algorithm>
#include <atomic>

namespace rs {

PolicyGroup policy_group(const FibGroups& fib, uint32_t id) {
  const NextHopGroup& g = fib.groups[id];
  PolicyGroup pg;
  pg.id = id;
  pg.nexthop = g.members;
  for (uint32_t nh : g.members) pg.port.push_back(fib.nexthops[nh].port);
  for (uint32_t nh : g.table)
    pg.slot.push_back(static_cast<uint16_t>(std::find(g.members.begin(), g.members.end(), nh) - g.members.begin()));
  pg.mask = g.mask;
  return pg;
}

PolicySet::PolicySet(const FibGroups& fib, uint16_t worker, uint64_t seed, const PolicySet* previous,
                     const std::vector<bool>* same) {
  static std::atomic<uint64_t> sets{0};
  serial_ = sets.fetch_add(1, std::memory_order_relaxed) + 1;
  by_group_tc_.resize(fib.groups.size() * 8, nullptr);
  std::size_t prev_at = 0;  // previous->instances_ are in group order too
  for (uint32_t gid = 0; gid < fib.groups.size(); ++gid) {
    const NextHopGroup& g = fib.groups[gid];
    const bool reuse = previous && same && gid < same->size() && (*same)[gid];
    while (reuse && prev_at < previous->instances_.size() && previous->instances_[prev_at].group < gid) ++prev_at;
    const PolicyGroup pg = reuse || g.choices.empty() ? PolicyGroup{} : policy_group(fib, gid);
    for (uint8_t c = 0; c < g.choices.size(); ++c) {
      const PolicyChoice& pc = g.choices[c];
      if (reuse && prev_at < previous->instances_.size() && previous->instances_[prev_at].group == gid &&
          previous->instances_[prev_at].choice == c) {
        owned_.push_back(previous->owned_[prev_at++]);
      } else {
        // Distinct per (worker, group, choice), and the same on every run for a seed.
        const uint64_t s = (seed + 1) * 0x9e3779b97f4a7c15ull ^ (uint64_t{worker} << 48) ^ (uint64_t{gid} << 8) ^ c;
        owned_.push_back(RoutingPolicyRegistry::at(pc.policy).make(PolicyInit{reuse ? policy_group(fib, gid) : pg, pc.params, s, worker, seed}));
      }
      instances_.push_back({gid, c, owned_.back().get()});
      for (int tc = 0; tc < 8; ++tc)
        if (g.choice_of_tc[tc] == c) by_group_tc_[gid * 8 + tc] = owned_.back().get();
    }
  }
}

}  // namespace rs
