#include "dataplane/stages/egress/egress_rewrite.h"

namespace rs {

void EgressRewrite::process(Burst& in, uint8_t* next, WorkerContext& ctx) {
  const NextHop* nexthops = ctx.fib->nexthop_table();
  const rte_ether_addr* port_mac = ctx.port_mac;
  const uint16_t n = in.n;
  uint32_t v4 = 0;
  for (uint16_t i = 0; i < n; ++i) {
    v4 += rewrite_one(in.pkts[i], nexthops, port_mac);
    next[i] = Enqueue;
  }
  std::array<uint32_t, kCounters.size()> tally{};
  tally[Ipv4] = v4;
  tally[Ipv6] = n - v4;
  publish(tally);
}

REGISTER_STAGE(EgressRewrite);

}  // namespace rs
