#include "dataplane/stages/punt.h"

#include <fmt/core.h>
#include <rte_ip.h>
#include <rte_ring.h>

#include <algorithm>

namespace rs {

Punt::Punt(const StageEnv& env) {
  const CoppConfig copp = env.copp ? *env.copp : CoppConfig{};
  for (std::size_t c = 0; c < kCoppClasses; ++c) rate_[c] = GcraRate::of(copp.policer[c].pps, copp.policer[c].burst);
}

CoppClass Punt::classify(const rte_mbuf* m, const PacketMeta& pm) {
  switch (pm.punt) {
    case PuntReason::Arp:
      return CoppClass::Arp;
    case PuntReason::Glean:
      return CoppClass::NeighMiss;
    case PuntReason::Lldp:
      return CoppClass::Lldp;
    case PuntReason::TtlExpired:
    case PuntReason::NoRoute:
      return CoppClass::IcmpError;
    default:
      break;
  }
  // Router/neighbour solicitations and advertisements and redirects (ICMPv6 133..137) are
  // neighbour discovery, policed with ARP as SONiC's trap group does.
  if (pm.l3 == L3Type::Ipv6 && pm.ip_proto == IPPROTO_ICMPV6) {
    const uint32_t at = pm.l3_offset + sizeof(rte_ipv6_hdr);
    if (m->data_len > at) {
      const uint8_t type = rte_pktmbuf_mtod(m, const uint8_t*)[at];
      if (type >= 133 && type <= 137) return CoppClass::Arp;
    }
  }
  return CoppClass::Ip2me;
}

uint8_t Punt::process(Burst& in, uint8_t* next, WorkerContext& ctx) {
  std::array<uint32_t, kCounters.size()> tally{};
  rte_mbuf* up[kBurst];
  uint16_t at[kBurst];
  unsigned k = 0;
  const GcraRate* rate = ctx.copp_rate ? ctx.copp_rate : rate_.data();
  for (uint16_t i = 0; i < in.n; ++i) {
    rte_mbuf* m = in.pkts[i];
    PacketMeta& pm = meta(m);
    const auto c = static_cast<std::size_t>(classify(m, pm));
    if (rate[c].interval_ns == 0 || !rate[c].admit(tat_[pm.in_port % kMaxPorts][c], ctx.now_ns)) {
      // An expiring or unroutable packet was lost anyway: only its ICMP answer is policed.
      if (pm.punt != PuntReason::TtlExpired && pm.punt != PuntReason::NoRoute) pm.drop_reason = DropReason::PuntPoliced;
      next[i] = kNextDrop;
      ++tally[Policed];
    } else {
      next[i] = kNextConsumed;
      up[k] = m;
      at[k++] = i;
      ++tally[c];
    }
    if (ctx.tracing) [[unlikely]]
      ctx.trace(pm, next[i], static_cast<uint64_t>(pm.punt), c);
  }
  const unsigned sent = k ? rte_ring_sp_enqueue_burst(ctx.punt, reinterpret_cast<void* const*>(up), k, nullptr) : 0;
  for (unsigned j = sent; j < k; ++j) {
    meta(up[j]).drop_reason = DropReason::PuntQueueFull;
    next[at[j]] = kNextDrop;
    ++tally[QueueFull];
  }
  publish(tally);
  return kNextMixed;
}

std::string Punt::format_trace(const TraceRecord& r) const {
  static constexpr std::string_view kWhy[] = {"", "arp", "to the switch", "next hop unresolved", "ttl expired", "no route", "lldp"};
  const std::string_view why = r.a < std::size(kWhy) ? kWhy[r.a] : "?";
  const std::string_view kind = r.b < kCoppClasses ? kCoppClassNames[r.b] : "?";
  if (r.edge == kNextDrop) return fmt::format("{} ({}): policed", why, kind);
  return fmt::format("{} ({}): to the control plane", why, kind);
}

REGISTER_STAGE(Punt);

}  // namespace rs
