#include "dataplane/stages/nexthop_select.h"

#include <fmt/core.h>

#include <algorithm>

#include "dataplane/routing/policy_set.h"
#include "dataplane/stages/ip_route.h"

namespace rs {

void NexthopSelect::prepare(const Burst& in, WorkerContext& ctx, Pass& t) const {
  const Fib& fib = *ctx.fib;
  const PolicySet& set = fib.policies(ctx.worker);
  const uint64_t port_up = ctx.load->up_mask();
  const uint16_t n = in.n;
  // The instances present, in order of first packet, and each packet's instance: a counting
  // sort, so that each instance gets its packets in arrival order in one call without a scan
  // of the burst per instance (a burst often spans many groups).
  PacketMeta* pm[kBurst];
  uint8_t slot[kBurst];
  RoutingPolicy* inst[kBurst];
  uint16_t start[kBurst + 1] = {};
  uint16_t k = 0;
  for (uint16_t i = 0; i < n; ++i) {
    pm[i] = &meta(in.pkts[i]);
    RoutingPolicy* p = set.at(pm[i]->group, pm[i]->tc);
    RoutingPolicy::Routing& r = p->routing_;
    if (r.slot == RoutingPolicy::Routing::kNotInBurst) {
      r.slot = static_cast<uint8_t>(k);
      inst[k++] = p;
    }
    slot[i] = r.slot;
    ++start[r.slot + 1];
  }
  for (uint16_t j = 0; j < k; ++j) start[j + 1] = static_cast<uint16_t>(start[j + 1] + start[j]);
  PacketMeta* sel[kBurst];
  uint8_t at[kBurst];
  uint16_t fill[kBurst];
  std::copy_n(start, k, fill);
  for (uint16_t i = 0; i < n; ++i) {
    const uint16_t pos = fill[slot[i]]++;
    sel[pos] = pm[i];
    at[pos] = static_cast<uint8_t>(i);
  }
  uint16_t got[kBurst];
  for (uint16_t j = 0; j < k; ++j) {
    RoutingPolicy& p = *inst[j];
    RoutingPolicy::Routing& r = p.routing_;
    r.slot = RoutingPolicy::Routing::kNotInBurst;
    const PolicyGroup& g = p.group();
    if (r.port_up != port_up || r.set_serial != set.serial()) [[unlikely]] {
      r.port_up = port_up;
      r.set_serial = set.serial();
      r.up = r.usable = 0;
      for (uint16_t m = 0; m < g.size(); ++m) {
        const uint64_t bit = uint64_t{1} << m;
        if (!((port_up >> (g.port[m] & 63)) & 1)) continue;
        r.up |= bit;
        // A policy is student code: an answer whose next hop leads nowhere is dropped.
        if (nexthop_port(fib.nexthop_table(), fib.num_nexthops(), g.nexthop[m], ctx.num_ports) != kInvalidPort) r.usable |= bit;
      }
    }
    const uint16_t first = start[j], count = static_cast<uint16_t>(start[j + 1] - first);
    if (r.up == 0) [[unlikely]] {
      for (uint16_t x = first; x < first + count; ++x) {
        sel[x]->drop_reason = DropReason::NoLiveMember;
        t.edge[at[x]] = kNextDrop;
      }
      t.dead += count;
      continue;
    }
    p.select(sel + first, count, SelectEnv{*ctx.load, ctx.now_ns, r.up}, got + first);
    ++t.calls;
    for (uint16_t x = first; x < first + count; ++x) {
      const uint16_t m = got[x];
      if (m < kMaxGroupMembers && ((r.usable >> m) & 1)) [[likely]] {
        sel[x]->nexthop = g.nexthop[m];
        sel[x]->out_port = g.port[m];
        t.edge[at[x]] = Rewrite;
      } else {
        // Outside the group's live members (or to a next hop that leads nowhere): dropped.
        sel[x]->drop_reason = DropReason::BadNextHop;
        t.edge[at[x]] = kNextDrop;
        ++t.bad;
      }
    }
  }
}

std::string NexthopSelect::format_trace(const TraceRecord& r) const {
  if (r.b == UINT64_MAX) return fmt::format("group {}: no member chosen", r.a);
  return fmt::format("group {} policy chose nexthop {}", r.a, r.b);
}

REGISTER_STAGE(NexthopSelect);

}  // namespace rs
