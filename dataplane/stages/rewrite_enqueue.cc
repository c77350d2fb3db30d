#include "dataplane/stages/rewrite_enqueue.h"
#include "dataplane/proto/mac_addr.h"

#include <fmt/core.h>

namespace rs {

// The trace words: the next hop's MAC; the TTL after the rewrite, the owner worker, whether the
// packet was handed to it, the queue and the egress port.
RewriteEnqueue::Traced RewriteEnqueue::trace_before(const rte_mbuf* m, const PacketMeta& pm, const WorkerContext& ctx) {
  Traced t{pm.trace, 0, 0};
  if (!t.id) return t;
  const uint8_t* p = rte_pktmbuf_mtod(m, const uint8_t*);
  __builtin_memcpy(&t.a, &ctx.fib->nexthop_table()[pm.nexthop].mac, RTE_ETHER_ADDR_LEN);
  const uint8_t ttl = pm.l3 == L3Type::Ipv4 ? p[pm.l3_offset + 8] : p[pm.l3_offset + 7];
  const uint8_t owner = ctx.port_owner[pm.out_port];
  t.b = uint64_t{pm.l3 == L3Type::Ipv6} << 56 | uint64_t{static_cast<uint8_t>(ttl - 1)} << 48 | uint64_t{owner} << 40 |
        uint64_t{owner != ctx.worker} << 32 | uint64_t{pm.queue} << 16 | pm.out_port;
  return t;
}

void RewriteEnqueue::trace_after(const Traced& t, const Enqueued& where, WorkerContext& ctx) {
  if (!t.id) return;
  const bool dropped = where.dropped != DropReason::None;
  ctx.tracer->add(t.id, ctx.node, dropped ? kNextDrop : kNextConsumed, where.dropped, t.a, t.b, ctx.step);
}

std::string RewriteEnqueue::format_trace(const TraceRecord& r) const {
  uint8_t mac[8] = {};
  __builtin_memcpy(mac, &r.a, 8);
  const unsigned port = r.b & 0xFFFF, queue = (r.b >> 16) & 0xFF, owner = (r.b >> 40) & 0xFF;
  const bool handoff = (r.b >> 32) & 1;
  const bool ipv6 = (r.b >> 56) & 1;
  std::string s = fmt::format("port {} dmac {} {} {}", port, format_mac(mac), ipv6 ? "hop limit" : "ttl", (r.b >> 48) & 0xFF);
  // A drop says its reason after this (the pipeline prints it); otherwise where it went.
  if (r.edge == kNextDrop) return s + fmt::format(" queue {}:", queue);
  return s + (handoff ? fmt::format(" -> handoff to worker {}, queue {}", owner, queue) : fmt::format(" -> enqueue queue {}", queue));
}

REGISTER_STAGE(RewriteEnqueue);

}  // namespace rs
