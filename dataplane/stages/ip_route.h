// ipv4_route and ipv6_route: the route step (P4 tables ipv4_lpm / ipv6_lpm, then the
// nexthop_selector's member), one inline body serving two sibling nodes as VPP's
// ip4/ip6 lookup do. The TTL (hop limit) is checked first, before any work is spent; the
// longest-prefix match (rte_lpm / rte_lpm6) gives a next-hop group; a group whose policy is
// the redirection table at the flow hash has its member chosen here, grout's
// reta[flow_id & (size - 1)]; the others go on the `select` edge to nexthop_select, where
// their policy chooses. What is for the control plane takes the `local` edge to the punt stage:
// a route to one of the switch's addresses or to a next hop still being resolved (the group's
// `punt`), and, when the switch has addresses, an expired TTL (ICMP time exceeded) and a miss on
// a port that answers it (ICMP destination unreachable). All of it off the common path.
// Reads meta l3_offset, flow_hash; writes meta group (and nexthop, out_port when chosen here).
#pragma once
#include <rte_ip.h>

#include <cstddef>

#include "dataplane/core/step_stage.h"
#include "dataplane/stages/parse.h"
#include "dataplane/tables/fib.h"
#include "dataplane/tm/queue/load_view.h"

namespace rs {

// The egress port of a chosen next hop, or kInvalidPort. A policy is student code: never
// trust its answer with an out-of-range next hop or port.
[[gnu::always_inline]] inline uint16_t nexthop_port(const NextHop* table, std::size_t count, uint32_t nh, uint16_t num_ports) {
  const uint16_t port = nh < count ? table[nh].port : kInvalidPort;
  return port < num_ports ? port : kInvalidPort;
}

// kInline: choose the member here for groups that allow it. The general siblings
// (`ipv4_route_general`, `ipv6_route_general`) never do: every packet takes `select`, so the
// policy itself chooses; the property test holds both forms to the same next hop.
template <bool kIpv6, bool kInline = true>
class IpRoute final : public StepStage<IpRoute<kIpv6, kInline>> {
 public:
  static constexpr std::string_view kName =
      kIpv6 ? (kInline ? "ipv6_route" : "ipv6_route_general") : (kInline ? "ipv4_route" : "ipv4_route_general");
  enum Next : uint8_t { Rewrite, Select, Local };
  static constexpr std::array<std::string_view, 3> kNext = {"rewrite", "select", "local"};
  static constexpr uint8_t kChainEdge = Rewrite;
  enum Ctr : uint8_t { Hit, Miss, TtlExpired, Inline, ToSelect, BadNexthop, MemberDown, ToLocal, Blackhole };
  // member_down: packets whose table member's port was down, left to their policy (counted in
  // to_select too). to_local: routed to the control plane (the switch's addresses, next hops
  // being resolved); expired and missed packets it answers are counted as expired and missed.
  // blackhole: hits of a drop route (dropped as no_route, as the P4's drop() action does).
  static constexpr std::array<std::string_view, 9> kCounters = {"hit",         "miss",      kIpv6 ? "hop_limit_expired" : "ttl_expired",
                                                                "member_inline", "to_select", "bad_nexthop",
                                                                "member_down", "to_local",  "blackhole"};

  explicit IpRoute(const StageEnv&) {}

  struct Pass {
    const Fib* fib;
    const NextHopGroup* groups;
    const NextHop* nexthops;
    uint32_t num_nexthops;
    uint16_t num_ports;
    uint64_t up;  // link state, one bit a port (LoadView)
    uint32_t miss = 0, ttl = 0, to_select = 0, bad = 0, down = 0, local = 0, blackhole = 0;
  };
  Pass begin(const WorkerContext& ctx) const {
    return Pass{ctx.fib, ctx.fib->group_table(), ctx.fib->nexthop_table(), static_cast<uint32_t>(ctx.fib->num_nexthops()),
                ctx.num_ports, ctx.load->up_mask()};
  }
  template <bool kTrace>
  [[gnu::always_inline]] uint8_t step(rte_mbuf* m, PacketMeta& pm, WorkerContext& ctx, Pass& t) const {
    const Fib& fib = *t.fib;
    const uint8_t* l3 = rte_pktmbuf_mtod(m, const uint8_t*) + pm.l3_offset;
    const uint8_t ttl = kIpv6 ? l3[offsetof(rte_ipv6_hdr, hop_limits)] : l3[offsetof(rte_ipv4_hdr, time_to_live)];
    uint32_t group = 0;
    uint8_t e;
    if (ttl <= 1) [[unlikely]] {
      e = expired(l3, pm, ctx, t);
    } else if (!lookup(fib, l3, group)) [[unlikely]] {
      pm.drop_reason = DropReason::NoRoute;
      e = kNextDrop;
      ++t.miss;
      if (ctx.punt && ((ctx.unreachable_ports >> (pm.in_port & 63)) & 1)) {
        pm.punt = PuntReason::NoRoute;
        e = Local;
      }
    } else {
      pm.group = static_cast<uint16_t>(group);
      const NextHopGroup& g = t.groups[group];
      if (kInline && g.inline_member) [[likely]] {
        const uint32_t nh = g.table[pm.flow_hash & g.mask];
        const uint16_t port = nexthop_port(t.nexthops, t.num_nexthops, nh, t.num_ports);
        if (port == kInvalidPort) [[unlikely]] {
          pm.drop_reason = DropReason::BadNextHop;
          e = kNextDrop;
          ++t.bad;
        } else if (!((t.up >> port) & 1)) [[unlikely]] {
          // Fast failover: the policy chooses among the live members (no control-plane trip).
          e = Select;
          ++t.to_select;
          ++t.down;
        } else {
          pm.nexthop = nh;
          pm.out_port = port;
          e = Rewrite;
        }
      } else if (g.punt != PuntReason::None) [[unlikely]] {
        e = to_local(pm, g.punt, ctx, t);
      } else if (g.drop) [[unlikely]] {
        pm.drop_reason = DropReason::NoRoute;
        e = kNextDrop;
        ++t.blackhole;
      } else {
        e = Select;
        ++t.to_select;
      }
    }
    if constexpr (kTrace) trace(l3, ttl, pm, e, ctx);
    return e;
  }
  void publish_tally(const Pass& t, uint16_t n, Counter* ctr) const {
    const uint32_t routed = n - t.miss - t.ttl;
    const uint32_t v[kCounters.size()] = {routed,     t.miss, t.ttl,   routed - t.to_select - t.bad - t.local - t.blackhole,
                                          t.to_select, t.bad, t.down, t.local,
                                          t.blackhole};
    add_tallies(ctr, v);
  }
  static uint8_t whole(const Pass& t, uint16_t n) {
    if (t.miss + t.ttl + t.bad + t.to_select + t.local + t.blackhole == 0) return Rewrite;
    return t.to_select == n ? uint8_t{Select} : kNextMixed;
  }
  std::string format_trace(const TraceRecord& r) const override;

 private:
  static bool lookup(const Fib& fib, const uint8_t* l3, uint32_t& group) {
    return kIpv6 ? fib.lookup6(l3 + offsetof(rte_ipv6_hdr, dst_addr), group)
                 : fib.lookup4(parse::load_le32(l3 + offsetof(rte_ipv4_hdr, dst_addr)), group);
  }
  // A group of the control plane's: its packets go to it, or drop where no control plane runs.
  static uint8_t to_local(PacketMeta& pm, PuntReason why, const WorkerContext& ctx, Pass& t) {
    if (!ctx.punt) [[unlikely]] {
      pm.drop_reason = DropReason::BadNextHop;
      ++t.bad;
      return kNextDrop;
    }
    pm.punt = why;
    ++t.local;
    return Local;
  }
  // TTL 1 or 0: still for the switch when addressed to it (a neighbour discovery message, MLD,
  // a ping with TTL 1); else dropped, and answered with ICMP time exceeded where the switch has
  // addresses to send it from.
  [[gnu::noinline]] static uint8_t expired(const uint8_t* l3, PacketMeta& pm, const WorkerContext& ctx, Pass& t) {
    pm.drop_reason = DropReason::TtlExpired;
    if (!ctx.punt) {
      ++t.ttl;
      return kNextDrop;
    }
    uint32_t group;
    if (lookup(*t.fib, l3, group) && t.groups[group].punt == PuntReason::Local) {
      pm.group = static_cast<uint16_t>(group);
      return to_local(pm, PuntReason::Local, ctx, t) == Local ? uint8_t{Local} : kNextDrop;
    }
    ++t.ttl;
    pm.punt = PuntReason::TtlExpired;
    return Local;
  }
  static void trace(const uint8_t* l3, uint8_t ttl, const PacketMeta& pm, uint8_t e, WorkerContext& ctx);
};

using Ipv4Route = IpRoute<false>;
using Ipv6Route = IpRoute<true>;
using Ipv4RouteGeneral = IpRoute<false, false>;
using Ipv6RouteGeneral = IpRoute<true, false>;

}  // namespace rs
