#include "dataplane/stages/l3_input.h"

#include <fmt/core.h>

#include "dataplane/tables/vlan_table.h"

namespace rs {

// The trace words: what the parse found (the metadata's bytes 20..27: l3, flags, pcp, dscp,
// ecn, tc, queue, ip_proto) and the BTH opcode, destination QP and flow hash.
template <unsigned kForm>
void L3InputT<kForm>::trace(const PacketMeta& pm, uint8_t e, WorkerContext& ctx) {
  uint64_t a;
  __builtin_memcpy(&a, &pm.l3, 8);
  ctx.trace(pm, e, a, uint64_t{pm.bth_opcode} << 56 | uint64_t{pm.dest_qp} << 32 | pm.flow_hash);
}

template <unsigned kForm>
bool L3InputT<kForm>::bridged(const WorkerContext& ctx) {
  return ctx.vlans && ((ctx.vlans->bridged >> (ctx.rx_port & 63)) & 1);
}

template <unsigned kForm>
uint8_t L3InputT<kForm>::process_one(rte_mbuf* m) {
  Burst b;
  b.push(m);
  uint8_t next[1];
  WorkerContext ctx;
  this->process(b, next, ctx);
  return next[0];
}

template <unsigned kForm>
std::string L3InputT<kForm>::format_trace(const TraceRecord& r) const {
  PacketMeta pm{};
  __builtin_memcpy(&pm.l3, &r.a, 8);
  pm.bth_opcode = static_cast<uint8_t>(r.b >> 56);
  pm.dest_qp = static_cast<uint32_t>(r.b >> 32) & 0xFFFFFF;
  if (r.edge == kNextDrop) return "";
  if (r.edge == MacControl) return "mac control";
  if (r.edge == Local) return "for the switch";
  if (r.edge == Bridge) return "bridged";
  std::string s = pm.l3 == L3Type::Ipv4 ? "ipv4" : "ipv6";
  if (pm.flags & meta_flag::kVlan) s += fmt::format(" vlan pcp {}", pm.pcp);
  if (pm.flags & meta_flag::kRoce) {
    s += fmt::format(" roce opcode {:#04x} qp {:#08x}", pm.bth_opcode, pm.dest_qp);
    if (pm.flags & meta_flag::kCnp) s += " (cnp)";
  } else if (pm.flags & meta_flag::kUdp) {
    s += " udp";
  } else {
    s += fmt::format(" proto {}", pm.ip_proto);
  }
  s += fmt::format(" dscp {} ecn {} hash {:#010x}: tc {} queue {}", pm.dscp, pm.ecn, static_cast<uint32_t>(r.b),
                   pm.tc, pm.queue);
  return s;
}

template class L3InputT<0>;
template class L3InputT<1>;
REGISTER_STAGE(L3Input);
REGISTER_STAGE(L3InputGeneral);

}  // namespace rs
