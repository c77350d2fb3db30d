#include "dataplane/stages/route/nexthop_group.h"

#include "dataplane/policies/routing/routing_policy.h"
#include "dataplane/tables/fib.h"

namespace rs {

void NexthopGroup::process(Burst& in, uint8_t* next, WorkerContext& ctx) {
  const Fib& fib = *ctx.fib;
  const uint16_t n = in.n;
  PacketMeta* pm[kBurst];
  uint32_t nh[kBurst];
  for (uint16_t i = 0; i < n; ++i) pm[i] = &meta(in.pkts[i]);
  // One policy for every group (the usual configuration): one call for the whole burst.
  if (const int p = fib.uniform_policy(); p >= 0) {
    ctx.policies[p]->select_burst(pm, n, fib, *ctx.load, ctx.now_ns, nh);
  } else {
    for (uint16_t i = 0; i < n; ++i) {
      const NextHopGroup& g = fib.group(pm[i]->group);
      nh[i] = ctx.policies[g.policy]->select(*pm[i], g, *ctx.load, ctx.now_ns);
    }
  }
  const uint32_t num_nexthops = static_cast<uint32_t>(fib.num_nexthops());
  const uint16_t num_ports = ctx.num_ports;
  uint32_t bad = 0;
  for (uint16_t i = 0; i < n; ++i) {
    // A policy is student code: never trust its answer with an out-of-range port.
    const uint16_t port = nh[i] < num_nexthops ? fib.nexthop(nh[i]).port : kInvalidPort;
    if (port >= num_ports) [[unlikely]] {
      pm[i]->drop_reason = DropReason::BadNextHop;
      next[i] = kNextDrop;
      ++bad;
      continue;
    }
    pm[i]->nexthop = nh[i];
    pm[i]->out_port = port;
    next[i] = Rewrite;
  }
  std::array<uint32_t, kCounters.size()> tally{};
  tally[Selected] = n - bad;
  tally[BadNexthop] = bad;
  publish(tally);
}

REGISTER_STAGE(NexthopGroup);

}  // namespace rs
