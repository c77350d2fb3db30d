#include "dataplane/stages/ip_route.h"

#include <fmt/core.h>
#include <rte_ip.h>


namespace rs {

// The trace words: the destination (IPv4) or its last 8 bytes (IPv6); the TTL, group, next hop.
template <bool kIpv6, bool kInline>
void IpRoute<kIpv6, kInline>::trace(const uint8_t* l3, uint8_t ttl, const PacketMeta& pm, uint8_t e, WorkerContext& ctx) {
  uint64_t dst;
  __builtin_memcpy(&dst, l3 + (kIpv6 ? offsetof(rte_ipv6_hdr, dst_addr) + 8 : offsetof(rte_ipv4_hdr, dst_addr)), 8);
  if (!kIpv6) dst &= 0xFFFFFFFF;
  ctx.trace(pm, e, dst, uint64_t{ttl} << 56 | uint64_t{pm.group} << 32 | pm.nexthop);
}

template <bool kIpv6, bool kInline>
std::string IpRoute<kIpv6, kInline>::format_trace(const TraceRecord& r) const {
  std::string dst;
  if (kIpv6) {
    uint8_t b[8];
    __builtin_memcpy(b, &r.a, 8);
    dst = fmt::format("...:{:02x}{:02x}:{:02x}{:02x}:{:02x}{:02x}:{:02x}{:02x}", b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]);
  } else {
    dst = fmt::format("{}.{}.{}.{}", r.a & 0xFF, (r.a >> 8) & 0xFF, (r.a >> 16) & 0xFF, (r.a >> 24) & 0xFF);
  }
  const unsigned ttl = static_cast<unsigned>(r.b >> 56);
  std::string s = fmt::format("dst {} {} {}", dst, kIpv6 ? "hop limit" : "ttl", ttl);
  if (r.edge == Rewrite) s += fmt::format(" group {} member nexthop {}", (r.b >> 32) & 0xFFFF, r.b & 0xFFFFFFFF);
  else if (r.edge == Select) s += fmt::format(" group {}", (r.b >> 32) & 0xFFFF);
  return s;
}

template class IpRoute<false, true>;
template class IpRoute<true, true>;
template class IpRoute<false, false>;
template class IpRoute<true, false>;
REGISTER_STAGE(Ipv4Route);
REGISTER_STAGE(Ipv6Route);
REGISTER_STAGE(Ipv4RouteGeneral);
REGISTER_STAGE(Ipv6RouteGeneral);

}  // namespace rs
