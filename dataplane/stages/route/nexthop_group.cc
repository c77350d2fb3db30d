#include "dataplane/stages/route/nexthop_group.h"

namespace rs {

void NexthopGroup::process(Burst& in, uint8_t* next, WorkerContext& ctx) {
  const Fib& fib = *ctx.fib;
  const uint16_t n = in.n;
  PacketMeta* pm[kBurst];
  uint32_t nh[kBurst];
  for (uint16_t i = 0; i < n; ++i) pm[i] = &meta(in.pkts[i]);
  select_nexthops(pm, n, ctx, nh);
  uint32_t bad = 0;
  for (uint16_t i = 0; i < n; ++i) {
    const uint16_t port = nexthop_port(fib, nh[i], ctx.num_ports);
    if (port == kInvalidPort) [[unlikely]] {
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
