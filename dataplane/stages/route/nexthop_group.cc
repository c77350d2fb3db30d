#include "dataplane/stages/route/nexthop_group.h"

#include "dataplane/policies/routing/routing_policy.h"
#include "dataplane/tables/fib.h"

namespace rs {

void NexthopGroup::process(Burst& in, uint8_t* next, WorkerContext& ctx) {
  std::array<uint32_t, kCounters.size()> tally{};
  const Fib& fib = *ctx.fib;
  for (uint16_t i = 0; i < in.n; ++i) {
    PacketMeta& pm = meta(in.pkts[i]);
    const NextHopGroup& g = fib.group(pm.group);
    const uint32_t nh = ctx.policies[g.policy]->select(pm, g, *ctx.load, ctx.now_ns);
    // A policy is student code: never trust its answer with an out-of-range port.
    if (nh >= fib.num_nexthops() || fib.nexthop(nh).port >= ctx.num_ports) {
      pm.drop_reason = DropReason::BadNextHop;
      next[i] = kNextDrop;
      ++tally[BadNexthop];
      continue;
    }
    pm.nexthop = nh;
    pm.out_port = fib.nexthop(nh).port;
    next[i] = Rewrite;
    ++tally[Selected];
  }
  publish(tally);
}

REGISTER_STAGE(NexthopGroup);

}  // namespace rs
