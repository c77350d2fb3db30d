#include "dataplane/stages/bridge.h"

#include <fmt/core.h>
#include <rte_ether.h>

#include <algorithm>
#include <cstring>

#include "dataplane/tables/fdb.h"
#include "dataplane/tm/queue/load_view.h"

namespace rs {

namespace {

uint16_t be16(const uint8_t* p) { return static_cast<uint16_t>(p[0] << 8 | p[1]); }
}  // namespace

Bridge::Bridge(const StageEnv& env) {
  const BridgeConfig c = env.bridge ? *env.bridge : BridgeConfig{};
  interval_ns_ = c.flood_pps ? std::max<uint64_t>(1, 1'000'000'000ull / c.flood_pps) : 0;
  tolerance_ns_ = c.flood_pps ? uint64_t{std::max<uint32_t>(c.flood_burst, 1) - 1} * interval_ns_ : 0;
  refresh_ns_ = std::min<uint64_t>(1'000'000'000, static_cast<uint64_t>(c.ageing_s * 1e9 / 4));
}

void Bridge::out(rte_mbuf* m, uint16_t port, uint16_t vlan, const EnqueueTables& q, WorkerContext& ctx,
                 std::array<uint32_t, kCounters.size()>& tally) const {
  PacketMeta& pm = meta(m);
  const bool tagged_in = pm.flags & meta_flag::kVlan;
  const bool tagged_out = (ctx.vlans->vlan[vlan].tagged >> port) & 1;
  if (tagged_in && tagged_out) {
    // Kept, with the VLAN's id: a priority-tagged frame (VID 0) or one tagged with an access
    // VLAN leaves a trunk in its VLAN. The PCP stays.
    uint8_t* p = rte_pktmbuf_mtod(m, uint8_t*);
    p[14] = static_cast<uint8_t>((p[14] & 0xF0) | (vlan >> 8));
    p[15] = static_cast<uint8_t>(vlan);
  } else if (tagged_in && !tagged_out) {
    uint8_t* p = rte_pktmbuf_mtod(m, uint8_t*);
    std::memmove(p + 4, p, 2 * RTE_ETHER_ADDR_LEN);
    rte_pktmbuf_adj(m, 4);
    pm.flags &= static_cast<uint8_t>(~meta_flag::kVlan);
    pm.l3_offset = static_cast<uint16_t>(pm.l3_offset - 4);
    if (pm.l4_offset) pm.l4_offset = static_cast<uint16_t>(pm.l4_offset - 4);
    ++tally[TagPopped];
  } else if (!tagged_in && tagged_out) {
    uint8_t* p = reinterpret_cast<uint8_t*>(rte_pktmbuf_prepend(m, 4));
    if (!p) [[unlikely]] {  // no headroom: never with DPDK's default, but not a crash either
      ctx.drop(m, DropReason::MalformedVlan, pm.in_port);
      return;
    }
    std::memmove(p, p + 4, 2 * RTE_ETHER_ADDR_LEN);
    // The priority the class pauses on downstream: the traffic class (SONiC's maps are identity).
    const uint16_t tci = static_cast<uint16_t>((pm.tc & 7) << 13 | vlan);
    p[12] = 0x81, p[13] = 0x00, p[14] = static_cast<uint8_t>(tci >> 8), p[15] = static_cast<uint8_t>(tci);
    pm.flags |= meta_flag::kVlan;
    pm.pcp = pm.tc & 7;
    pm.l3_offset = static_cast<uint16_t>(pm.l3_offset + 4);
    if (pm.l4_offset) pm.l4_offset = static_cast<uint16_t>(pm.l4_offset + 4);
    ++tally[TagPushed];
  }
  pm.out_port = port;
  enqueue_packet(m, port, q, ctx);
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
    } else {
      if (!(p[6] & 1)) {  // a unicast source is learned
        const uint64_t k = Fdb::key(vlan, p + 6);
        Fdb::Entry* e = fdb.lookup(k);
        if (!e || e->port.load(std::memory_order_relaxed) != pm.in_port) {
          if (fdb.report(ctx.worker, k, pm.in_port)) ++tally[LearnReports];
          else ++tally[LearnRingFull];
        } else if (now > e->seen_ns.load(std::memory_order_relaxed) + refresh_ns_) {
          e->seen_ns.store(now, std::memory_order_relaxed);
        }
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
        uint64_t& tat = tat_[pm.in_port & (kMaxPorts - 1)];
        const uint64_t t = std::max(tat, now);
        uint64_t targets = vt.vlan[vlan].members & up & ~(uint64_t{1} << (pm.in_port & 63));
        trace_b = targets | uint64_t{1} << 63;
        if (interval_ns_ && t > now + tolerance_ns_) {
          pm.drop_reason = DropReason::BridgeStorm;
          next[i] = kNextDrop;
        } else if (targets == 0) {
          tat = t + interval_ns_;
          pm.drop_reason = DropReason::BridgeFiltered;
          next[i] = kNextDrop;
        } else {
          tat = t + interval_ns_;
          ++tally[Flooded];
          if (ctx.tracing) [[unlikely]]
            ctx.trace(pm, kNextConsumed, vlan, trace_b);
          while (targets) {
            const auto port = static_cast<uint16_t>(__builtin_ctzll(targets));
            targets &= targets - 1;
            rte_mbuf* c = m;
            if (targets) {  // every target but the last gets a copy; the last, the frame
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
          continue;
        }
      }
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
  return fmt::format("vlan {}: to port {}", r.a, r.b);
}

REGISTER_STAGE(Bridge);

}  // namespace rs
