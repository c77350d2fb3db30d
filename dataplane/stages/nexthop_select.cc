#include "dataplane/stages/nexthop_select.h"

#include <fmt/core.h>

#include "dataplane/routing/routing_policy.h"
#include "dataplane/stages/ip_route.h"

namespace rs {

uint8_t NexthopSelect::process(Burst& in, uint8_t* next, WorkerContext& ctx) {
  const Fib& fib = *ctx.fib;
  const uint16_t n = in.n;
  PacketMeta* pm[kBurst];
  uint16_t policy[kBurst];
  for (uint16_t i = 0; i < n; ++i) {
    pm[i] = &meta(in.pkts[i]);
    policy[i] = fib.group(pm[i]->group).policy;
  }
  // Each policy present gets its packets in one call, in arrival order. Usually one policy
  // serves every group, and the burst goes to it as it is.
  uint32_t nh[kBurst];
  uint32_t calls = 0;
  bool done[kBurst] = {};
  for (uint16_t first = 0; first < n; ++first) {
    if (done[first]) continue;
    const uint16_t p = policy[first];
    PacketMeta* sel[kBurst];
    uint16_t at[kBurst];
    uint16_t k = 0;
    for (uint16_t i = first; i < n; ++i)
      if (!done[i] && policy[i] == p) {
        sel[k] = pm[i];
        at[k++] = i;
        done[i] = true;
      }
    uint32_t got[kBurst];
    ctx.policies[p]->select_burst(sel, k, fib, *ctx.load, ctx.now_ns, got);
    for (uint16_t j = 0; j < k; ++j) nh[at[j]] = got[j];
    ++calls;
  }
  uint32_t bad = 0;
  for (uint16_t i = 0; i < n; ++i) {
    const uint16_t port = nexthop_port(fib.nexthop_table(), fib.num_nexthops(), nh[i], ctx.num_ports);
    uint8_t e = Rewrite;
    if (port == kInvalidPort) [[unlikely]] {
      pm[i]->drop_reason = DropReason::BadNextHop;
      e = kNextDrop;
      ++bad;
    } else {
      pm[i]->nexthop = nh[i];
      pm[i]->out_port = port;
    }
    next[i] = e;
    if (ctx.tracing) [[unlikely]]
      ctx.trace(*pm[i], e, pm[i]->group, nh[i]);
  }
  std::array<uint32_t, kCounters.size()> tally{};
  tally[Selected] = n - bad;
  tally[BadNexthop] = bad;
  tally[PolicyCalls] = calls;
  publish(tally);
  return bad == 0 ? uint8_t{Rewrite} : kNextMixed;
}

std::string NexthopSelect::format_trace(const TraceRecord& r) const {
  return fmt::format("group {} policy chose nexthop {}", r.a, r.b);
}

REGISTER_STAGE(NexthopSelect);

}  // namespace rs
