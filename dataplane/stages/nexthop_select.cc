#include "dataplane/stages/nexthop_select.h"

#include <fmt/core.h>

#include "dataplane/routing/policy_set.h"
#include "dataplane/stages/ip_route.h"

namespace rs {

uint8_t NexthopSelect::process(Burst& in, uint8_t* next, WorkerContext& ctx) {
  const Fib& fib = *ctx.fib;
  PolicySet& set = fib.policies(ctx.worker);
  const uint64_t port_up = ctx.load->up_mask();
  const uint16_t n = in.n;
  PacketMeta* pm[kBurst];
  RoutingPolicy* pol[kBurst];
  for (uint16_t i = 0; i < n; ++i) {
    pm[i] = &meta(in.pkts[i]);
    pol[i] = set.at(pm[i]->group, pm[i]->tc);
  }
  // Each instance present gets its packets in one call, in arrival order. Usually one
  // instance serves the whole burst, and it goes as it is.
  uint16_t member[kBurst];
  uint64_t live[kBurst];  // the members that were up for the packet's call (0: none was)
  uint32_t calls = 0;
  bool done[kBurst] = {};
  for (uint16_t first = 0; first < n; ++first) {
    if (done[first]) continue;
    RoutingPolicy* p = pol[first];
    PacketMeta* sel[kBurst];
    uint16_t at[kBurst];
    uint16_t k = 0;
    for (uint16_t i = first; i < n; ++i)
      if (!done[i] && pol[i] == p) {
        sel[k] = pm[i];
        at[k++] = i;
        done[i] = true;
      }
    const PolicyGroup& g = p->group();
    uint64_t up = 0;
    for (uint16_t m = 0; m < g.size(); ++m) up |= ((port_up >> (g.port[m] & 63)) & 1) << m;
    uint16_t got[kBurst];
    if (up) {
      p->select(sel, k, SelectEnv{*ctx.load, ctx.now_ns, up}, got);
      ++calls;
    }
    for (uint16_t j = 0; j < k; ++j) {
      member[at[j]] = up ? got[j] : 0;
      live[at[j]] = up;
    }
  }
  uint32_t bad = 0, dead = 0;
  for (uint16_t i = 0; i < n; ++i) {
    const PolicyGroup& g = pol[i]->group();
    const uint16_t m = member[i];
    uint8_t e = Rewrite;
    uint32_t nh = 0;
    if (live[i] == 0) [[unlikely]] {
      pm[i]->drop_reason = DropReason::NoLiveMember;
      e = kNextDrop;
      ++dead;
    } else if (m >= g.size() || !((live[i] >> m) & 1) ||
               nexthop_port(fib.nexthop_table(), fib.num_nexthops(), g.nexthop[m], ctx.num_ports) == kInvalidPort)
        [[unlikely]] {
      // A policy is student code: an answer outside the group's live members is dropped.
      pm[i]->drop_reason = DropReason::BadNextHop;
      e = kNextDrop;
      ++bad;
    } else {
      nh = g.nexthop[m];
      pm[i]->nexthop = nh;
      pm[i]->out_port = g.port[m];
    }
    next[i] = e;
    if (ctx.tracing) [[unlikely]]
      ctx.trace(*pm[i], e, pm[i]->group, e == Rewrite ? nh : UINT64_MAX);
  }
  std::array<uint32_t, kCounters.size()> tally{};
  tally[Selected] = n - bad - dead;
  tally[BadNexthop] = bad;
  tally[NoLiveMember] = dead;
  tally[PolicyCalls] = calls;
  publish(tally);
  return bad + dead == 0 ? uint8_t{Rewrite} : kNextMixed;
}

std::string NexthopSelect::format_trace(const TraceRecord& r) const {
  if (r.b == UINT64_MAX) return fmt::format("group {}: no member chosen", r.a);
  return fmt::format("group {} policy chose nexthop {}", r.a, r.b);
}

REGISTER_STAGE(NexthopSelect);

}  // namespace rs
