#include "dataplane/routing/policy_set.h"

#include <algorithm>

namespace rs {

PolicyGroup policy_group(const Fib& fib, uint32_t id) {
  const NextHopGroup& g = fib.group(id);
  PolicyGroup pg;
  pg.id = id;
  pg.nexthop = g.members;
  for (uint32_t nh : g.members) pg.port.push_back(fib.nexthop(nh).port);
  for (uint32_t nh : g.table)
    pg.slot.push_back(static_cast<uint16_t>(std::find(g.members.begin(), g.members.end(), nh) - g.members.begin()));
  pg.mask = g.mask;
  return pg;
}

PolicySet::PolicySet(const Fib& fib, uint16_t worker, uint64_t seed) {
  by_group_tc_.resize(fib.num_groups() * 8, nullptr);
  for (uint32_t gid = 0; gid < fib.num_groups(); ++gid) {
    const NextHopGroup& g = fib.group(gid);
    const PolicyGroup pg = policy_group(fib, gid);
    for (uint8_t c = 0; c < g.choices.size(); ++c) {
      const PolicyChoice& pc = g.choices[c];
      // Distinct per (worker, group, choice), and the same on every run for a seed.
      const uint64_t s = (seed + 1) * 0x9e3779b97f4a7c15ull ^ (uint64_t{worker} << 48) ^ (uint64_t{gid} << 8) ^ c;
      owned_.push_back(RoutingPolicyRegistry::at(pc.policy).make(PolicyInit{pg, pc.params, s, worker}));
      instances_.push_back({gid, c, owned_.back().get()});
      for (int tc = 0; tc < 8; ++tc)
        if (g.choice_of_tc[tc] == c) by_group_tc_[gid * 8 + tc] = owned_.back().get();
    }
  }
}

}  // namespace rs
