// What the LLDP/DCBX codec tests share (lldp_test.cc: what build_lldp writes; lldp_parse_test.cc:
// what parse_lldp reads): readable GoogleTest output for the structs, the port settings the tests
// advertise (mandatory TLVs only, the RoCE settings, every field set), build and parse on exact
// heap copies, and an independent walk over the TLV headers.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <ostream>
#include <vector>

#include "dataplane/proto/lldp.h"

namespace rs::proto {

// GoogleTest finds these by argument-dependent lookup, so they live in rs::proto itself: a
// failed comparison shows the fields rather than the struct's bytes.
inline void PrintTo(const DcbxApp& a, std::ostream* os) {
  *os << "{prio " << int{a.priority} << " sel " << int{a.selector} << " proto " << a.protocol << "}";
}
inline void PrintTo(const LldpInfo& i, std::ostream* os) {
  *os << "{chassis " << int{i.chassis_subtype} << "/" << chassis_id_text(i) << " port " << int{i.port_subtype} << "/"
      << port_id_text(i) << " ttl " << i.ttl << " desc '" << i.port_description << "' name '" << i.system_name
      << "' sysdesc '" << i.system_description << "' mgmt " << i.mgmt_addr.size() << "B";
  if (i.pfc)
    *os << " pfc{w" << i.pfc->willing << " mbc" << i.pfc->mbc << " cap " << int{i.pfc->cap} << " en 0x" << std::hex
        << int{i.pfc->enable} << std::dec << "}";
  for (const auto* e : {&i.ets_cfg, &i.ets_rec}) {
    if (!*e) continue;
    *os << (e == &i.ets_cfg ? " ets_cfg{" : " ets_rec{") << "w" << (*e)->willing << " cbs" << (*e)->cbs << " max "
        << int{(*e)->max_tcs} << " tc";
    for (uint8_t v : (*e)->prio_tc) *os << " " << int{v};
    *os << " bw";
    for (uint8_t v : (*e)->bw_pct) *os << " " << int{v};
    *os << " tsa";
    for (uint8_t v : (*e)->tsa) *os << " " << int{v};
    *os << "}";
  }
  *os << " app " << i.app.size() << "}";
}

namespace lldp_frames {

using Frame = std::vector<uint8_t>;

inline constexpr rte_ether_addr kOurMac{{0x02, 0x00, 0x00, 0x00, 0xaa, 0x01}};
inline constexpr uint16_t kRoceV2Port = 4791;
inline constexpr uint16_t kDscpAf31 = 26;

// The mandatory TLVs only: the smallest thing a port can advertise.
inline LldpInfo minimal() {
  LldpInfo i;
  i.chassis_subtype = kChassisSubtypeMac;
  i.chassis_id = mac_id(kOurMac);
  i.port_subtype = kPortSubtypeIfName;
  i.port_id = "swp1";
  i.ttl = 120;
  return i;
}

// The RoCE settings: PFC on priorities 3 and 4, ETS 50/50 between TCs 3 and 4 with strict
// priority elsewhere (priority p -> TC p), RoCEv2 (UDP 4791) and DSCP 26 (AF31) at priority 3.
inline DcbxEts roce_ets() {
  DcbxEts e;
  e.prio_tc = {0, 1, 2, 3, 4, 5, 6, 7};
  e.bw_pct = {0, 0, 0, 50, 50, 0, 0, 0};
  e.tsa = {kTsaStrict, kTsaStrict, kTsaStrict, kTsaEts, kTsaEts, kTsaStrict, kTsaStrict, kTsaStrict};
  return e;
}
inline LldpInfo roce() {
  LldpInfo i = minimal();
  i.port_description = "roceswitch port 1";
  i.system_name = "roceswitch";
  i.system_description = "roceswitch DPDK RoCE switch";
  i.mgmt_addr = {10, 0, 0, 1};
  i.pfc = DcbxPfc{false, false, 8, 0x18};
  i.ets_cfg = roce_ets();
  i.app = {{3, kAppSelUdpDccp, kRoceV2Port}, {3, kAppSelDscp, kDscpAf31}};
  return i;
}

// Every flag set and every table different from the RoCE one, so that no field can pass by
// being zero or equal to its neighbour.
inline LldpInfo everything() {
  LldpInfo i = roce();
  i.port_subtype = kPortSubtypeLocal;
  i.port_id = "port-17";
  i.ttl = 3600;
  i.mgmt_addr = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x12, 0x34};
  i.pfc = DcbxPfc{true, true, 4, 0xa5};
  DcbxEts cfg;
  cfg.willing = true;
  cfg.cbs = true;
  cfg.max_tcs = 4;
  cfg.prio_tc = {7, 6, 5, 4, 3, 2, 1, 0};
  cfg.bw_pct = {10, 20, 30, 40, 0, 0, 0, 0};
  cfg.tsa = {kTsaEts, kTsaEts, kTsaEts, kTsaEts, kTsaStrict, kTsaCbs, kTsaVendor, kTsaStrict};
  i.ets_cfg = cfg;
  DcbxEts rec;  // willing/cbs/max_tcs are not carried by the recommendation: left at defaults
  rec.prio_tc = {1, 1, 2, 2, 3, 3, 15, 0};
  rec.bw_pct = {25, 25, 25, 25, 0, 0, 0, 0};
  rec.tsa = {kTsaEts, kTsaEts, kTsaEts, kTsaEts, kTsaStrict, kTsaStrict, kTsaStrict, kTsaStrict};
  i.ets_rec = rec;
  i.app = {{7, kAppSelEtherType, 0x8906}, {4, kAppSelTcpSctpUdpDccp, 3260}, {0, kAppSelTcpSctp, 860}};
  return i;
}

inline Frame build(const LldpInfo& info, const rte_ether_addr& src = kOurMac) {
  Frame buf(2048, 0xa5);  // not zero: the padding must be written
  buf.resize(build_lldp(buf.data(), static_cast<uint32_t>(buf.size()), src, info));
  return buf;
}

// Parses from a heap copy of exactly the bytes given, so ASan sees any read past the end.
inline LldpError parse_exact(const Frame& f, LldpInfo& out, uint16_t l3 = 14) {
  std::unique_ptr<uint8_t[]> copy(new uint8_t[f.size()]);
  if (!f.empty()) std::memcpy(copy.get(), f.data(), f.size());
  return parse_lldp(copy.get(), static_cast<uint32_t>(f.size()), l3, out);
}

// An independent TLV walk: (type, length, offset of the value) of each TLV up to and including
// End, straight from the 802.1AB header layout (7-bit type, 9-bit length).
struct Tlv {
  unsigned type, len;
  std::size_t at;
};
inline std::vector<Tlv> walk(const Frame& f, std::size_t l3 = 14) {
  std::vector<Tlv> out;
  for (std::size_t at = l3; at + 2 <= f.size();) {
    const unsigned type = f[at] >> 1, len = (f[at] & 1u) << 8 | f[at + 1];
    out.push_back({type, len, at + 2});
    if (type == 0) break;
    at += 2 + len;
  }
  return out;
}

}  // namespace lldp_frames
}  // namespace rs::proto
