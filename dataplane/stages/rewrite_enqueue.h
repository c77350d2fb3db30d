// rewrite_enqueue: the rewrite step (P4 egress: table port_mac and the RoceEgress rewrite) and the
// enqueue step into the egress port's traffic manager, in one pass. Consumes every packet: queued
// here, handed to the owner worker, or dropped by admission with a counted reason. A packet out
// of a bridged port is routed into a VLAN (a VLAN interface's neighbour): from the interface's
// MAC, tagged as the port carries the VLAN, off the common path.
#pragma once
#include "dataplane/core/step_stage.h"
#include "dataplane/stages/enqueue.h"
#include "dataplane/stages/rewrite.h"
#include "dataplane/stages/vlan_tag.h"
#include "dataplane/tables/vlan_table.h"

namespace rs {

class RewriteEnqueue final : public StepStage<RewriteEnqueue> {
 public:
  static constexpr std::string_view kName = "rewrite_enqueue";
  static constexpr std::array<std::string_view, 0> kNext = {};
  enum Ctr : uint8_t { Ipv4, Ipv6, Local, Handoff };
  static constexpr std::array<std::string_view, 4> kCounters = {"ipv4", "ipv6", "local", "handoff"};

  explicit RewriteEnqueue(const StageEnv&) {}

  struct Pass {
    const NextHop* nexthops;
    const rte_ether_addr* port_mac;
    NexthopCounters* per_nexthop;
    EnqueueTables q;
    uint64_t bridged;                // ports in some VLAN
    uint32_t ipv6 = 0, handoff = 0;  // the rare cases (parse.h's Tally says why)
  };
  Pass begin(const WorkerContext& ctx) const {
    return Pass{ctx.fib->nexthop_table(), ctx.port_mac, ctx.nexthop_counters, EnqueueTables(ctx), ctx.vlans ? ctx.vlans->bridged : 0};
  }
  template <bool kTrace>
  [[gnu::always_inline]] uint8_t step(rte_mbuf* m, PacketMeta& pm, WorkerContext& ctx, Pass& t) const {
    const uint16_t port = pm.out_port;
    Traced before{};
    if constexpr (kTrace) before = trace_before(m, pm, ctx);  // the enqueue may free the packet
    NexthopCounters& member = t.per_nexthop[pm.nexthop];  // the FIB holds at most kMaxNexthops
    member.pkts.inc();
    member.bytes.add(m->pkt_len);
    if (!rewrite_frame(m, pm, t.nexthops, t.port_mac)) [[unlikely]]
      ++t.ipv6;
    if ((t.bridged >> (port & 63)) & 1) [[unlikely]] {
      if (!into_vlan(m, pm, ctx)) {
        if constexpr (kTrace) trace_after(before, Enqueued{false, DropReason::MalformedVlan}, ctx);
        return kNextConsumed;
      }
    }
    const Enqueued where = enqueue_packet(m, port, t.q, ctx);
    if (where.handoff) [[unlikely]]
      ++t.handoff;
    if constexpr (kTrace) trace_after(before, where, ctx);
    return kNextConsumed;
  }
  void publish_tally(const Pass& t, uint16_t n, Counter* ctr) const {
    const uint32_t v[kCounters.size()] = {n - t.ipv6, t.ipv6, n - t.handoff, t.handoff};
    add_tallies(ctr, v);
  }
  static uint8_t whole(const Pass&, uint16_t) { return kNextConsumed; }
  std::string format_trace(const TraceRecord& r) const override;

 private:
  struct Traced {
    uint16_t id;
    uint64_t a, b;
  };
  // Tags `m` for its next hop's VLAN; false when it was dropped (no headroom for the tag).
  [[gnu::noinline]] static bool into_vlan(rte_mbuf* m, PacketMeta& pm, WorkerContext& ctx) {
    const uint16_t vlan = ctx.fib->nexthop_vlans()[pm.nexthop];
    if (vlan == 0) return true;
    // From the VLAN interface's MAC, not the port's.
    const uint64_t router = ctx.vlans->vlan[vlan].router;
    std::memcpy(rte_pktmbuf_mtod_offset(m, uint8_t*, RTE_ETHER_ADDR_LEN), &router, RTE_ETHER_ADDR_LEN);
    if (retag_frame(m, pm, vlan, (ctx.vlans->vlan[vlan].tagged >> (pm.out_port & 63)) & 1) != Retag::NoRoom) return true;
    ctx.drop_before_queue(m, DropReason::MalformedVlan, pm.in_port);
    return false;
  }
  static Traced trace_before(const rte_mbuf* m, const PacketMeta& pm, const WorkerContext& ctx);
  static void trace_after(const Traced& t, const Enqueued& where, WorkerContext& ctx);
};

}  // namespace rs
