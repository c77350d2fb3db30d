#include "dataplane/stages/bridge.h"

#include <fmt/core.h>
#include <rte_ether.h>

#include <algorithm>
#include <cstring>

#include "dataplane/stages/vlan_tag.h"
#include "dataplane/tables/fdb.h"
#include "dataplane/tm/queue/load_view.h"

namespace rs {

namespace {

uint16_t be16(const uint8_t* p) { return static_cast<uint16_t>(p[0] << 8 | p[1]); }
}  // namespace

Bridge::Bridge(const StageEnv&) {}

void Bridge::out(rte_mbuf* m, uint16_t port, uint16_t vlan, const EnqueueTables& q, WorkerContext& ctx,
                 std::array<uint32_t, kCounters.size()>& tally) const {
  PacketMeta& pm = meta(m);
  switch (retag_frame(m, pm, vlan, (ctx.vlans->vlan[vlan].tagged >> port) & 1)) {
    case Retag::Pushed:
      ++tally[TagPushed];
      break;
    case Retag::Popped:
      ++tally[TagPopped];
      break;
    case Retag::NoRoom:
      ctx.drop_before_queue(m, DropReason::MalformedVlan, pm.in_port);
      return;
    case Retag::Kept:
      break;
  }
  pm.out_port = port;
  enqueue_packet(m, port, q, ctx);
}

uint8_t Bridge::to_router(rte_mbuf* m, PacketMeta& pm, uint16_t vlan, std::array<uint32_t, kCounters.size()>& tally) {
  pm.vlan = vlan;
  if (retag_frame(m, pm, vlan, false) == Retag::Popped) ++tally[TagPopped];
  ++tally[Routed];
  if (pm.l3 == L3Type::Ipv4) return Ipv4;
  if (pm.l3 == L3Type::Ipv6) return Ipv6;
  if (pm.punt == PuntReason::Arp) return Local;
  pm.drop_reason = DropReason::NonIp;
  return kNextDrop;
}

uint8_t Bridge::process(Burst& in, uint8_t* next, WorkerContext& ctx) {
  std::array<uint32_t, kCounters.size()> tally{};
  const VlanTable& vt = *ctx.vlans;
  Fdb& fdb = *ctx.fdb;
  const EnqueueTables q(ctx);
  const uint64_t up = ctx.load ? ctx.load->up_mask() : ~uint64_t{0};
  const uint64_t now = ctx.now_ns;
  for (uint16_t i = 0; i < in.n; ++i) {
    rte_mbuf* m = in.pkts[i];
    PacketMeta& pm = meta(m);
    next[i] = kNextConsumed;
    const uint8_t* p = rte_pktmbuf_mtod(m, const uint8_t*);
    const uint16_t vid = (pm.flags & meta_flag::kVlan) && m->data_len >= 16 ? be16(p + 14) & 0x0FFF : 0;
    const uint16_t vlan = vt.ingress_vlan(pm.in_port, vid);
    uint64_t trace_b = 0;
    if (vlan == 0) {
      pm.drop_reason = DropReason::VlanNotMember;
      next[i] = kNextDrop;
      if (ctx.tracing) [[unlikely]]
        ctx.trace(pm, next[i], vlan, trace_b);
      continue;
    }
    if (!(p[6] & 1)) {  // a unicast source is learned
      const uint64_t k = Fdb::key(vlan, p + 6);
      Fdb::Entry* e = fdb.lookup(k);
      if (!e || e->port.load(std::memory_order_relaxed) != pm.in_port) {
        if (fdb.report(ctx.worker, k, pm.in_port)) ++tally[LearnReports];
        else ++tally[LearnRingFull];
      } else if (now > e->seen_ns.load(std::memory_order_relaxed) + vt.refresh_ns) {
        e->seen_ns.store(now, std::memory_order_relaxed);
      }
    }
    // The VLAN's router interface hears what is sent to its MAC, and broadcast ARP and IPv6
    // multicast besides the flood (neighbour discovery's solicitations are multicast).
    bool router_too = false;
    if (const uint64_t router = vt.vlan[vlan].router) [[unlikely]] {
      if (VlanTable::mac_word(p) == router) {
        next[i] = to_router(m, pm, vlan, tally);
        if (ctx.tracing) [[unlikely]]
          ctx.trace(pm, next[i], vlan, uint64_t{1} << 62);
        continue;
      }
      // IPv6 only to a multicast group (its first byte 0xff): a unicast packet in a multicast
      // frame is not for the router (Linux forwards only what was sent to its MAC).
      router_too = (p[0] & 1) && (pm.punt == PuntReason::Arp ||
                                  (pm.l3 == L3Type::Ipv6 && p[0] == 0x33 && p[1] == 0x33 && m->data_len > pm.l3_offset + 24u &&
                                   p[pm.l3_offset + 24] == 0xff));
    }
    const Fdb::Entry* dst = (p[0] & 1) ? nullptr : fdb.lookup(Fdb::key(vlan, p));
    if (dst) {
      const uint16_t port = dst->port.load(std::memory_order_relaxed);
      trace_b = port;
      if (port == pm.in_port || port >= ctx.num_ports || !((vt.vlan[vlan].members >> port) & 1)) {
        pm.drop_reason = DropReason::BridgeFiltered;
        next[i] = kNextDrop;
      } else if (!((up >> port) & 1)) {
        pm.drop_reason = DropReason::LinkDown;
        next[i] = kNextDrop;
      } else {
        ++tally[Forwarded];
        if (ctx.tracing) [[unlikely]]
          ctx.trace(pm, kNextConsumed, vlan, port);
        out(m, port, vlan, q, ctx, tally);
        continue;
      }
    } else {
      // Flood: broadcast, multicast, unknown unicast, within the port's storm limit.
      uint64_t targets = vt.vlan[vlan].members & up & ~(uint64_t{1} << (pm.in_port & 63));
      trace_b = targets | uint64_t{1} << 63;
      if (vt.flood.interval_ns && !vt.flood.admit(tat_[pm.in_port & (kMaxPorts - 1)], now)) {
        pm.drop_reason = DropReason::BridgeStorm;
        next[i] = kNextDrop;
        targets = 0;
      } else if (targets == 0) {
        pm.drop_reason = DropReason::BridgeFiltered;
        next[i] = kNextDrop;
      } else {
        ++tally[Flooded];
      }
      if (ctx.tracing && targets) [[unlikely]]
        ctx.trace(pm, kNextConsumed, vlan, trace_b);
      while (targets) {
        const auto port = static_cast<uint16_t>(__builtin_ctzll(targets));
        targets &= targets - 1;
        rte_mbuf* c = m;
        if (targets || router_too) {  // every target but the last gets a copy; the last, the frame
          c = rte_pktmbuf_copy(m, m->pool, 0, UINT32_MAX);
          if (!c) {
            ++tally[NoMbuf];
            continue;
          }
          std::memcpy(rte_mbuf_to_priv(c), &pm, sizeof pm);
          meta(c).trace = 0;
          ++tally[FloodCopies];
        }
        out(c, port, vlan, q, ctx, tally);
      }
      if (!router_too) {
        if (next[i] == kNextDrop && ctx.tracing) [[unlikely]]
          ctx.trace(pm, next[i], vlan, trace_b);
        continue;
      }
      // The frame itself goes to the router, whatever the storm limit did to its flood.
      next[i] = to_router(m, pm, vlan, tally);
      if (ctx.tracing) [[unlikely]]
        ctx.trace(pm, next[i], vlan, uint64_t{1} << 62);
      continue;
    }
    if (ctx.tracing) [[unlikely]]
      ctx.trace(pm, next[i], vlan, trace_b);
  }
  ctx.counters->flood_copies.add(tally[FloodCopies]);
  publish(tally);
  return kNextMixed;
}

std::string Bridge::format_trace(const TraceRecord& r) const {
  if (r.drop == DropReason::VlanNotMember) return "not a member of the frame's VLAN";
  if (r.b >> 63) return fmt::format("vlan {}: flood to ports {:#x}", r.a, r.b & ~(uint64_t{1} << 63));
  if ((r.b >> 62) & 1) return fmt::format("vlan {}: to its router interface", r.a);
  return fmt::format("vlan {}: to port {}", r.a, r.b);
}

REGISTER_STAGE(Bridge);

}  // namespace rs
