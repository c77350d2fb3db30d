// LLDP/DCBX codec: the bytes build_lldp writes (TLV headers and DCBX bodies checked byte by byte
// against 802.1AB / 802.1Q annex D), build -> parse round trips with and without each optional
// part, the RoCE settings a switch port advertises, parse_lldp on frames broken one rule at a
// time, truncation at every length and random corruption without reading past the bytes given
// (the ASan build runs this), and tshark as an independent reader of what we build.
#include "dataplane/proto/lldp.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <ostream>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>
#include "tests/support/frame_files.h"

namespace rs::proto {

// GoogleTest finds these by argument-dependent lookup, so they live in rs::proto itself: a
// failed comparison shows the fields rather than the struct's bytes.
void PrintTo(const DcbxApp& a, std::ostream* os) {
  *os << "{prio " << int{a.priority} << " sel " << int{a.selector} << " proto " << a.protocol << "}";
}
void PrintTo(const LldpInfo& i, std::ostream* os) {
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

namespace {

using rs::test::write_pcap;

using Frame = std::vector<uint8_t>;

constexpr rte_ether_addr kOurMac{{0x02, 0x00, 0x00, 0x00, 0xaa, 0x01}};
constexpr uint16_t kRoceV2Port = 4791;
constexpr uint16_t kDscpAf31 = 26;

// The mandatory TLVs only: the smallest thing a port can advertise.
LldpInfo minimal() {
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
DcbxEts roce_ets() {
  DcbxEts e;
  e.prio_tc = {0, 1, 2, 3, 4, 5, 6, 7};
  e.bw_pct = {0, 0, 0, 50, 50, 0, 0, 0};
  e.tsa = {kTsaStrict, kTsaStrict, kTsaStrict, kTsaEts, kTsaEts, kTsaStrict, kTsaStrict, kTsaStrict};
  return e;
}
LldpInfo roce() {
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
LldpInfo everything() {
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

Frame build(const LldpInfo& info, const rte_ether_addr& src = kOurMac) {
  Frame buf(2048, 0xa5);  // not zero: the padding must be written
  buf.resize(build_lldp(buf.data(), static_cast<uint32_t>(buf.size()), src, info));
  return buf;
}

// Parses from a heap copy of exactly the bytes given, so ASan sees any read past the end.
LldpError parse_exact(const Frame& f, LldpInfo& out, uint16_t l3 = 14) {
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
std::vector<Tlv> walk(const Frame& f, std::size_t l3 = 14) {
  std::vector<Tlv> out;
  for (std::size_t at = l3; at + 2 <= f.size();) {
    const unsigned type = f[at] >> 1, len = (f[at] & 1u) << 8 | f[at + 1];
    out.push_back({type, len, at + 2});
    if (type == 0) break;
    at += 2 + len;
  }
  return out;
}
Frame bytes_at(const Frame& f, std::size_t at, std::size_t n) {
  return Frame(f.begin() + static_cast<long>(at), f.begin() + static_cast<long>(at + n));
}

// Crafted frames, written without the code under test: an Ethernet header and the TLVs given.
Frame tlv(unsigned type, const Frame& value, int len_override = -1) {
  const unsigned len = len_override < 0 ? static_cast<unsigned>(value.size()) : static_cast<unsigned>(len_override);
  Frame t(2 + value.size());  // sized up front: GCC 12 misreads an insert into a 2-byte vector
  t[0] = static_cast<uint8_t>(type << 1 | len >> 8);
  t[1] = static_cast<uint8_t>(len);
  std::copy(value.begin(), value.end(), t.begin() + 2);
  return t;
}
Frame lldp_frame(const std::vector<Frame>& tlvs, uint16_t ether_type = kEtherTypeLldp) {
  Frame f = {0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e, 0x02, 0x00, 0x00, 0x00, 0x00, 0x07};
  f.push_back(static_cast<uint8_t>(ether_type >> 8));
  f.push_back(static_cast<uint8_t>(ether_type));
  for (const Frame& t : tlvs) f.insert(f.end(), t.begin(), t.end());
  return f;
}
Frame org(uint8_t subtype, Frame body, const Frame& oui = {0x00, 0x80, 0xc2}) {
  Frame v = oui;
  v.push_back(subtype);
  v.insert(v.end(), body.begin(), body.end());
  return tlv(127, v);
}
const Frame kChassis = tlv(1, {4, 0x02, 0x00, 0x00, 0x00, 0x00, 0x07});
const Frame kPort = tlv(2, {5, 'e', 't', 'h', '0'});
const Frame kTtl = tlv(3, {0x00, 0x78});
const Frame kEnd = tlv(0, {});
Frame good(const std::vector<Frame>& middle) {
  std::vector<Frame> t = {kChassis, kPort, kTtl};
  t.insert(t.end(), middle.begin(), middle.end());
  t.push_back(kEnd);
  return lldp_frame(t);
}

TEST(Lldp, BuildWritesTheTlvHeadersAndDcbxBodiesByteForByte) {
  const Frame f = build(roce());
  const Frame eth = {0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e, 0x02, 0x00, 0x00, 0x00, 0xaa, 0x01, 0x88, 0xcc};
  EXPECT_EQ(bytes_at(f, 0, 14), eth);
  // Each TLV header as two raw bytes: type << 9 | length.
  const std::vector<std::pair<unsigned, unsigned>> want = {
      {1, 7}, {2, 5}, {3, 2}, {4, 17}, {5, 10}, {6, 27}, {8, 12}, {127, 25}, {127, 6}, {127, 11}, {0, 0}};
  const std::vector<Tlv> got = walk(f);
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t k = 0; k < want.size(); ++k) {
    EXPECT_EQ(got[k].type, want[k].first) << "TLV " << k;
    EXPECT_EQ(got[k].len, want[k].second) << "TLV " << k;
  }
  EXPECT_EQ(bytes_at(f, 14, 9), (Frame{0x02, 0x07, 4, 0x02, 0x00, 0x00, 0x00, 0xaa, 0x01})) << "chassis: MAC subtype";
  EXPECT_EQ(bytes_at(f, 23, 7), (Frame{0x04, 0x05, 5, 's', 'w', 'p', '1'})) << "port: interface name";
  EXPECT_EQ(bytes_at(f, 30, 4), (Frame{0x06, 0x02, 0x00, 0x78})) << "TTL 120";
  EXPECT_EQ(bytes_at(f, got[4].at - 2, 12), (Frame{0x0a, 0x0a, 'r', 'o', 'c', 'e', 's', 'w', 'i', 't', 'c', 'h'}));
  // Management address: string length 5, IPv4, 10.0.0.1, ifIndex numbering, interface 0, no OID.
  EXPECT_EQ(bytes_at(f, got[6].at - 2, 14), (Frame{0x10, 0x0c, 5, 1, 10, 0, 0, 1, 2, 0, 0, 0, 0, 0}));
  // ETS configuration: not willing, no CBS, max TCs 8 sent as 0; priority p -> TC p in nibbles
  // (priority 0 high); bandwidths; TSAs.
  EXPECT_EQ(bytes_at(f, got[7].at - 2, 27),
            (Frame{0xfe, 0x19, 0x00, 0x80, 0xc2, 0x09, 0x00, 0x01, 0x23, 0x45, 0x67, 0, 0, 0, 50, 50, 0, 0, 0, 0, 0, 0,
                   2, 2, 0, 0, 0}));
  EXPECT_EQ(bytes_at(f, got[8].at - 2, 8), (Frame{0xfe, 0x06, 0x00, 0x80, 0xc2, 0x0b, 0x08, 0x18}))
      << "PFC: cap 8, enable priorities 3 and 4";
  EXPECT_EQ(bytes_at(f, got[9].at - 2, 13),
            (Frame{0xfe, 0x0b, 0x00, 0x80, 0xc2, 0x0c, 0x00, 0x63, 0x12, 0xb7, 0x65, 0x00, 0x1a}))
      << "App: priority 3 << 5 | selector 3, port 4791; priority 3 | selector 5, DSCP 26";
  EXPECT_EQ(bytes_at(f, got[10].at - 2, 2), (Frame{0x00, 0x00})) << "End";
  EXPECT_EQ(f.size(), got[10].at) << "no padding past 60 bytes";
}

TEST(Lldp, NinthLengthBitAndTheOtherOptionalTlvOrder) {
  LldpInfo i = minimal();
  i.chassis_subtype = kChassisSubtypeLocal;
  i.chassis_id = std::string(255, 'c');  // TLV length 256: 0x0300
  for (int k = 0; k < 100; ++k) i.app.push_back({static_cast<uint8_t>(k % 8), kAppSelDscp, static_cast<uint16_t>(k)});
  i.ets_rec = roce_ets();
  i.ets_cfg = roce_ets();
  i.pfc = DcbxPfc{};
  const Frame f = build(i);
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(f[14], 0x03);
  EXPECT_EQ(f[15], 0x00);
  const std::vector<Tlv> got = walk(f);
  ASSERT_EQ(got.size(), 8u);
  // ETS configuration, ETS recommendation, PFC, App, whatever order the struct has them in.
  const unsigned subtypes[] = {0x09, 0x0a, 0x0b, 0x0c};
  for (int k = 0; k < 4; ++k) {
    EXPECT_EQ(got[3 + k].type, 127u);
    EXPECT_EQ(f[got[3 + k].at + 3], subtypes[k]);
  }
  EXPECT_EQ(got[6].len, 5u + 300u);
  EXPECT_EQ(f[got[6].at - 2], 0xff) << "type 127 << 1 | the ninth length bit";
  EXPECT_EQ(f[got[6].at - 1], 0x31);
  EXPECT_EQ(f[got[4].at + 4], 0x00) << "ETS recommendation: the reserved byte";
  LldpInfo back;
  ASSERT_EQ(parse_exact(f, back), LldpError::Ok);
  EXPECT_EQ(back, i);
}

TEST(Lldp, MinimalFrameIsPaddedTo60) {
  const Frame f = build(minimal());
  ASSERT_EQ(f.size(), 60u);
  const std::vector<Tlv> got = walk(f);
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got[3].at, 14u + 9 + 7 + 4 + 2);
  for (std::size_t k = got[3].at; k < 60; ++k) EXPECT_EQ(f[k], 0) << "padding at " << k;
}

TEST(Lldp, RoundTripsWithAndWithoutEachOptionalPart) {
  std::vector<std::pair<std::string, LldpInfo>> cases;
  cases.emplace_back("minimal", minimal());
  cases.emplace_back("roce", roce());
  cases.emplace_back("everything", everything());
  auto add = [&](const char* name, auto&& change) {
    LldpInfo i = minimal();
    change(i);
    cases.emplace_back(name, i);
    LldpInfo j = everything();  // and the same part missing from a full frame
    change(j);
    cases.emplace_back(std::string("everything but ") + name, j);
  };
  add("port description", [](LldpInfo& i) { i.port_description = i.port_description.empty() ? "d" : ""; });
  add("system name", [](LldpInfo& i) { i.system_name = i.system_name.empty() ? "n" : ""; });
  add("system description", [](LldpInfo& i) { i.system_description = i.system_description.empty() ? "s" : ""; });
  add("mgmt ipv4", [](LldpInfo& i) { i.mgmt_addr = i.mgmt_addr.empty() ? std::vector<uint8_t>{192, 0, 2, 1} : std::vector<uint8_t>{}; });
  add("pfc", [](LldpInfo& i) {
    if (i.pfc)
      i.pfc.reset();
    else
      i.pfc = DcbxPfc{true, false, 0, 0xff};
  });
  add("ets cfg", [](LldpInfo& i) {
    if (i.ets_cfg)
      i.ets_cfg.reset();
    else
      i.ets_cfg = roce_ets();
  });
  add("ets rec", [](LldpInfo& i) {
    if (i.ets_rec)
      i.ets_rec.reset();
    else
      i.ets_rec = roce_ets();
  });
  add("app", [](LldpInfo& i) {
    if (!i.app.empty())
      i.app.clear();
    else
      i.app = {{5, kAppSelUdpDccp, 4791}};
  });
  LldpInfo shut = minimal();
  shut.ttl = 0;
  cases.emplace_back("shutdown", shut);
  LldpInfo longest = everything();
  longest.chassis_subtype = kChassisSubtypeLocal;
  longest.chassis_id = std::string(255, '\x01');
  longest.port_id = std::string(255, '\xff');
  longest.system_name = std::string(255, 'n');
  longest.app.assign(168, DcbxApp{7, 7, 0xffff});
  cases.emplace_back("longest fields", longest);
  LldpInfo binary = minimal();
  binary.port_id = std::string("a\0b", 3);  // IDs are bytes, not C strings
  cases.emplace_back("nul in an id", binary);

  for (const auto& [name, info] : cases) {
    const Frame f = build(info);
    ASSERT_FALSE(f.empty()) << name;
    LldpInfo back;
    back.system_name = "stale";  // parse must not leave anything of a previous frame
    back.app = {{1, 1, 1}};
    ASSERT_EQ(parse_exact(f, back), LldpError::Ok) << name;
    EXPECT_EQ(back, info) << name;
    EXPECT_EQ(back.shutdown(), info.ttl == 0) << name;
  }
}

TEST(Lldp, RoceExampleParsesToItsSettings) {
  LldpInfo p;
  ASSERT_EQ(parse_exact(build(roce()), p), LldpError::Ok);
  EXPECT_EQ(chassis_id_text(p), "02:00:00:00:aa:01");
  EXPECT_EQ(port_id_text(p), "swp1");
  EXPECT_EQ(p.ttl, 120);
  EXPECT_FALSE(p.shutdown());
  EXPECT_EQ(p.system_name, "roceswitch");
  EXPECT_EQ(p.mgmt_addr, (std::vector<uint8_t>{10, 0, 0, 1}));
  ASSERT_TRUE(p.pfc.has_value());
  EXPECT_EQ(p.pfc->enable, 0x18);
  EXPECT_EQ(p.pfc->cap, 8);
  EXPECT_FALSE(p.pfc->willing);
  ASSERT_TRUE(p.ets_cfg.has_value());
  EXPECT_EQ(p.ets_cfg->bw_pct, (std::array<uint8_t, 8>{0, 0, 0, 50, 50, 0, 0, 0}));
  EXPECT_EQ(p.ets_cfg->tsa, (std::array<uint8_t, 8>{0, 0, 0, 2, 2, 0, 0, 0}));
  EXPECT_EQ(p.ets_cfg->prio_tc, (std::array<uint8_t, 8>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(p.ets_cfg->max_tcs, 8);
  EXPECT_FALSE(p.ets_rec.has_value());
  ASSERT_EQ(p.app.size(), 2u);
  EXPECT_EQ(p.app[0], (DcbxApp{3, kAppSelUdpDccp, 4791}));
  EXPECT_EQ(p.app[1], (DcbxApp{3, kAppSelDscp, 26}));
}

TEST(Lldp, ParseBehindVlanTagAndSkipsWhatItDoesNotKnow) {
  Frame f = build(roce());
  f.insert(f.begin() + 12, {0x81, 0x00, 0x60, 0x0a});  // priority 3, VLAN 10
  LldpInfo p;
  ASSERT_EQ(parse_exact(f, p, 18), LldpError::Ok);
  EXPECT_EQ(p, roce());
  // Unknown and reserved TLV types, other OUIs (CEE DCBX 00-1B-21), other IEEE 802.1 subtypes
  // (port VLAN ID), system capabilities, a management address of another family (MAC) and one
  // with an OID: all skipped; the DCBX TLVs after them still read.
  const Frame g = good({tlv(9, {1, 2, 3}), tlv(126, {}), org(0x02, {0, 1, 2, 3}, {0x00, 0x1b, 0x21}),
                        org(0x01, {0x00, 0x01}), tlv(7, {0x00, 0x14, 0x00, 0x04}),
                        tlv(8, {7, 6, 2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 1, 0}),
                        tlv(8, {5, 1, 192, 0, 2, 7, 2, 0, 0, 0, 3, 2, 0x2b, 0x06}), org(0x0b, {0x08, 0x08}),
                        tlv(8, {5, 1, 198, 51, 100, 1, 1, 0, 0, 0, 0, 0})});
  ASSERT_EQ(parse_exact(g, p), LldpError::Ok);
  EXPECT_EQ(p.chassis_id, std::string("\x02\x00\x00\x00\x00\x07", 6));
  EXPECT_EQ(p.port_id, "eth0");
  EXPECT_EQ(p.mgmt_addr, (std::vector<uint8_t>{192, 0, 2, 7})) << "the first IPv4/IPv6 address";
  ASSERT_TRUE(p.pfc.has_value());
  EXPECT_EQ(p.pfc->enable, 0x08);
  // Repeated DCBX TLVs and strings: the first one counts, as in lldpad.
  const Frame h = good({org(0x0b, {0x04, 0x10}), org(0x0b, {0x08, 0x20}), org(0x0c, {0, 0x20, 0, 1}),
                        org(0x0c, {0, 0x40, 0, 2}), tlv(5, {'a'}), tlv(5, {'b'})});
  ASSERT_EQ(parse_exact(h, p), LldpError::Ok);
  EXPECT_EQ(p.pfc, (DcbxPfc{false, false, 4, 0x10}));
  EXPECT_EQ(p.app, (std::vector<DcbxApp>{{1, 0, 1}}));
  EXPECT_EQ(p.system_name, "a");
  // The reserved byte of the App TLV (a willing bit in early drafts) and the reserved bits of
  // the entries are ignored; an App TLV without entries is allowed.
  ASSERT_EQ(parse_exact(good({org(0x0c, {0x80, 0x7b, 0x12, 0xb7})}), p), LldpError::Ok);
  EXPECT_EQ(p.app, (std::vector<DcbxApp>{{3, 3, 4791}}));
  ASSERT_EQ(parse_exact(good({org(0x0c, {0x00})}), p), LldpError::Ok);
  EXPECT_TRUE(p.app.empty());
  // ETS configuration with max TCs 3 and the reserved bits set: kept / ignored.
  Frame ets = {0x3b, 0x01, 0x23, 0x45, 0x67};
  ets.resize(21, 0);
  Frame later_ets(21, 0);
  later_ets[0] = 0xc5;
  ASSERT_EQ(parse_exact(good({org(0x09, ets), org(0x09, later_ets), org(0x0a, ets), org(0x0a, later_ets)}), p),
            LldpError::Ok);
  ASSERT_TRUE(p.ets_cfg.has_value());
  EXPECT_EQ(p.ets_cfg->max_tcs, 3);
  EXPECT_FALSE(p.ets_cfg->willing);
  EXPECT_FALSE(p.ets_cfg->cbs);
  EXPECT_EQ(p.ets_cfg->prio_tc, (std::array<uint8_t, 8>{0, 1, 2, 3, 4, 5, 6, 7})) << "the first ETS TLV counts";
  ASSERT_TRUE(p.ets_rec.has_value());
  EXPECT_EQ(p.ets_rec->prio_tc, p.ets_cfg->prio_tc);
  // Bytes after End (padding, an FCS, even garbage) are not looked at.
  Frame tail = good({});
  tail.insert(tail.end(), {0xde, 0xad, 0xbe});
  EXPECT_EQ(parse_exact(tail, p), LldpError::Ok);
}

TEST(Lldp, EachBrokenRuleHasItsError) {
  struct Case {
    const char* what;
    Frame frame;
    LldpError want;
    uint16_t l3 = 14;
  };
  Frame ets_body(21, 0);
  Frame long_name(256, 'x');
  const std::vector<Case> cases = {
      {"good", good({}), LldpError::Ok},
      {"nothing after the Ethernet header", lldp_frame({}), LldpError::Short},
      {"one byte after it", lldp_frame({Frame{0x02}}), LldpError::Short},
      {"l3 offset past the frame", good({}), LldpError::Short, 200},
      {"l3 offset with no room for the EtherType", good({}), LldpError::Short, 1},
      {"IPv4 EtherType", lldp_frame({kChassis, kPort, kTtl, kEnd}, 0x0800), LldpError::NotLldp},
      {"tagged frame read at 14", [] { Frame f = good({}); f.insert(f.begin() + 12, {0x81, 0, 0, 1}); return f; }(),
       LldpError::NotLldp},
      // Mandatory TLVs missing or out of order.
      {"port ID first", lldp_frame({kPort, kChassis, kTtl, kEnd}), LldpError::MissingMandatory},
      {"no TTL", lldp_frame({kChassis, kPort, kEnd}), LldpError::MissingMandatory},
      {"TTL before port ID", lldp_frame({kChassis, kTtl, kPort, kEnd}), LldpError::MissingMandatory},
      {"End first", lldp_frame({kEnd, kChassis, kPort, kTtl, kEnd}), LldpError::MissingMandatory},
      {"optional TLV before TTL", lldp_frame({kChassis, kPort, tlv(5, {'a'}), kTtl, kEnd}), LldpError::MissingMandatory},
      {"frame ends after the port ID", lldp_frame({kChassis, kPort}), LldpError::MissingMandatory},
      // No End.
      {"frame ends after the TTL", lldp_frame({kChassis, kPort, kTtl}), LldpError::NoEnd},
      {"frame ends after an optional TLV", lldp_frame({kChassis, kPort, kTtl, tlv(5, {'a'})}), LldpError::NoEnd},
      // TLVs running past the frame or with impossible lengths.
      {"chassis runs past the frame", lldp_frame({tlv(1, {4, 1, 2}, 7)}), LldpError::BadTlv},
      {"optional TLV runs past the frame", lldp_frame({kChassis, kPort, kTtl, tlv(6, {'a', 'b'}, 3)}),
       LldpError::BadTlv},
      {"half a TLV header at the end", lldp_frame({kChassis, kPort, kTtl, Frame{0x00}}), LldpError::BadTlv},
      {"chassis without an ID", lldp_frame({tlv(1, {4}), kPort, kTtl, kEnd}), LldpError::BadTlv},
      {"empty chassis TLV", lldp_frame({tlv(1, {}), kPort, kTtl, kEnd}), LldpError::BadTlv},
      {"port ID of 256 bytes", lldp_frame({kChassis, tlv(2, [] { Frame v(257, 'p'); v[0] = 5; return v; }()), kTtl, kEnd}),
       LldpError::BadTlv},
      {"TTL of 3 bytes", lldp_frame({kChassis, kPort, tlv(3, {0, 120, 0}), kEnd}), LldpError::BadTlv},
      {"TTL of 1 byte", lldp_frame({kChassis, kPort, tlv(3, {120}), kEnd}), LldpError::BadTlv},
      {"second chassis ID", good({kChassis}), LldpError::BadTlv},
      {"second port ID", good({kPort}), LldpError::BadTlv},
      {"second TTL", good({kTtl}), LldpError::BadTlv},
      {"End with a length", lldp_frame({kChassis, kPort, kTtl, tlv(0, {0})}), LldpError::BadTlv},
      {"system name of 256 bytes", good({tlv(5, long_name)}), LldpError::BadTlv},
      {"system capabilities of 3 bytes", good({tlv(7, {0, 4, 0})}), LldpError::BadTlv},
      {"management address under 9 bytes", good({tlv(8, {5, 1, 10, 0, 0, 1, 2, 0})}), LldpError::BadTlv},
      {"management address string of 1", good({tlv(8, {1, 1, 2, 0, 0, 0, 0, 0, 0})}), LldpError::BadTlv},
      {"management address string of 33", good({tlv(8, [] { Frame v(40, 0); v[0] = 33; return v; }())}),
       LldpError::BadTlv},
      {"management address string past the TLV", good({tlv(8, {9, 1, 10, 0, 0, 1, 2, 0, 0, 0, 0})}), LldpError::BadTlv},
      {"management OID past the TLV", good({tlv(8, {5, 1, 10, 0, 0, 1, 2, 0, 0, 0, 0, 2, 0x2b})}), LldpError::BadTlv},
      {"management OID short of the TLV", good({tlv(8, {5, 1, 10, 0, 0, 1, 2, 0, 0, 0, 0, 0, 0})}), LldpError::BadTlv},
      {"management OID of 129", good({tlv(8, [] { Frame v(5 + 7 + 129, 0); v[0] = 5; v[11] = 129; return v; }())}),
       LldpError::BadTlv},
      {"org-specific TLV of 3 bytes", good({tlv(127, {0x00, 0x80, 0xc2})}), LldpError::BadTlv},
      {"PFC of 7 bytes", good({org(0x0b, {0x08, 0x18, 0x00})}), LldpError::BadTlv},
      {"PFC of 5 bytes", good({org(0x0b, {0x08})}), LldpError::BadTlv},
      {"second PFC with a bad length", good({org(0x0b, {0x08, 0x18}), org(0x0b, {0x08})}), LldpError::BadTlv},
      {"ETS configuration of 24 bytes", good({org(0x09, Frame(20, 0))}), LldpError::BadTlv},
      {"ETS configuration of 26 bytes", good({org(0x09, Frame(22, 0))}), LldpError::BadTlv},
      {"ETS recommendation of 24 bytes", good({org(0x0a, Frame(20, 0))}), LldpError::BadTlv},
      {"App of 4 bytes", good({tlv(127, {0x00, 0x80, 0xc2, 0x0c})}), LldpError::BadTlv},
      {"App of 7 bytes", good({org(0x0c, {0, 0x60, 0x12})}), LldpError::BadTlv},
      {"App of 9 bytes", good({org(0x0c, {0, 0x60, 0x12, 0xb7, 0x00})}), LldpError::BadTlv},
  };
  LldpInfo p;
  ASSERT_EQ(parse_exact(good({org(0x09, ets_body), org(0x0a, ets_body)}), p), LldpError::Ok)
      << "the 25-byte ETS TLVs the broken ones are measured against";
  for (const Case& c : cases) {
    p = roce();
    EXPECT_EQ(parse_exact(c.frame, p, c.l3), c.want) << c.what;
    if (c.want != LldpError::Ok) {
      EXPECT_EQ(p, roce()) << c.what << ": out written on an error";
    }
  }
  EXPECT_EQ(parse_lldp(nullptr, 0, 14, p), LldpError::Short);
  const char* names[] = {"ok", "short", "not_lldp", "bad_tlv", "missing_mandatory", "no_end"};
  for (uint8_t e = 0; e <= static_cast<uint8_t>(LldpError::NoEnd); ++e)
    EXPECT_STREQ(lldp_error_name(static_cast<LldpError>(e)), names[e]);
}

TEST(Lldp, TruncationAtEveryLengthAndCorruptionNeverReadPastTheFrame) {
  for (const LldpInfo& info : {minimal(), roce(), everything()}) {
    const Frame full = build(info);
    const std::vector<Tlv> tlvs = walk(full);
    const std::size_t end = tlvs.back().at;  // just past the End TLV
    for (std::size_t n = 0; n <= full.size(); ++n) {
      // What the cut leaves: under two LLDPDU bytes is Short; a cut on a TLV boundary loses the
      // rest of the mandatory TLVs or the End; a cut inside a TLV leaves it running past the frame.
      LldpError want = LldpError::BadTlv;
      if (n < 16) want = LldpError::Short;
      else if (n >= end) want = LldpError::Ok;
      for (std::size_t k = 0; k + 1 < tlvs.size() && n >= 16; ++k)
        if (n == tlvs[k].at + tlvs[k].len) want = k < 2 ? LldpError::MissingMandatory : LldpError::NoEnd;
      LldpInfo p;
      ASSERT_EQ(parse_exact(Frame(full.begin(), full.begin() + static_cast<long>(n)), p), want) << "length " << n;
      if (want == LldpError::Ok) {
        EXPECT_EQ(p, info) << "length " << n;
      }
    }
  }
  LldpInfo p;
  EXPECT_EQ(parse_exact(build(roce()), p, 0xffff), LldpError::Short);
  // Random bytes and lengths: only the sanitizer judges here. The TLV headers get hit often
  // (a third of the mutations land on one), so the walk meets every kind of lying length.
  std::mt19937 rng(8021);
  const Frame base = build(everything());
  const std::vector<Tlv> tlvs = walk(base);
  int ok = 0;
  for (int i = 0; i < 30000; ++i) {
    Frame f = base;
    for (int k = 0; k < 3; ++k) {
      if (rng() % 3 == 0) {
        const Tlv& t = tlvs[rng() % tlvs.size()];
        f[t.at - 2 + rng() % 2] = static_cast<uint8_t>(rng());
      } else {
        f[14 + rng() % (f.size() - 14)] = static_cast<uint8_t>(rng());
      }
    }
    f.resize(rng() % (f.size() + 1));
    ok += parse_exact(f, p) == LldpError::Ok;
  }
  EXPECT_GT(ok, 0);
}

TEST(Lldp, BuildRefusesWhatCannotBeEncodedAndNeedsRoom) {
  const Frame want = build(roce());
  ASSERT_FALSE(want.empty());
  Frame buf(want.size(), 0x77);
  EXPECT_EQ(build_lldp(buf.data(), static_cast<uint32_t>(want.size() - 1), kOurMac, roce()), 0u);
  EXPECT_EQ(buf, Frame(want.size(), 0x77)) << "nothing written when it does not fit";
  EXPECT_EQ(build_lldp(buf.data(), static_cast<uint32_t>(want.size()), kOurMac, roce()), want.size());
  EXPECT_EQ(buf, want);
  Frame small(60, 0x77);
  EXPECT_EQ(build_lldp(small.data(), 59, kOurMac, minimal()), 0u) << "the padding needs room too";

  std::vector<std::pair<const char*, LldpInfo>> bad;
  auto add = [&](const char* what, auto&& change) {
    LldpInfo i = roce();
    change(i);
    bad.emplace_back(what, i);
  };
  add("empty chassis ID", [](LldpInfo& i) { i.chassis_id.clear(); });
  add("chassis ID of 256 bytes", [](LldpInfo& i) { i.chassis_subtype = kChassisSubtypeLocal; i.chassis_id.assign(256, 'c'); });
  add("MAC chassis ID of 5 bytes", [](LldpInfo& i) { i.chassis_id.resize(5); });
  add("empty port ID", [](LldpInfo& i) { i.port_id.clear(); });
  add("port ID of 256 bytes", [](LldpInfo& i) { i.port_id.assign(256, 'p'); });
  add("MAC port ID of 7 bytes", [](LldpInfo& i) { i.port_subtype = kPortSubtypeMac; i.port_id = "1234567"; });
  add("port description of 256 bytes", [](LldpInfo& i) { i.port_description.assign(256, 'd'); });
  add("system name of 256 bytes", [](LldpInfo& i) { i.system_name.assign(256, 'n'); });
  add("system description of 256 bytes", [](LldpInfo& i) { i.system_description.assign(256, 's'); });
  add("management address of 6 bytes", [](LldpInfo& i) { i.mgmt_addr.assign(6, 1); });
  add("ETS max TCs 0", [](LldpInfo& i) { i.ets_cfg->max_tcs = 0; });
  add("ETS max TCs 9", [](LldpInfo& i) { i.ets_cfg->max_tcs = 9; });
  add("ETS TC 16", [](LldpInfo& i) { i.ets_cfg->prio_tc[7] = 16; });
  add("ETS recommendation TC 16", [](LldpInfo& i) { i.ets_rec = roce_ets(); i.ets_rec->prio_tc[0] = 16; });
  add("PFC cap 16", [](LldpInfo& i) { i.pfc->cap = 16; });
  add("app priority 8", [](LldpInfo& i) { i.app[1].priority = 8; });
  add("app selector 8", [](LldpInfo& i) { i.app[0].selector = 8; });
  add("169 app entries", [](LldpInfo& i) { i.app.assign(169, DcbxApp{3, 3, 4791}); });
  add("LLDPDU over 1500 bytes", [](LldpInfo& i) {
    i.port_description.assign(255, 'd');
    i.system_name.assign(255, 'n');
    i.system_description.assign(255, 's');
    i.chassis_subtype = kChassisSubtypeLocal;
    i.chassis_id.assign(255, 'c');
    i.port_id.assign(255, 'p');
    i.app.assign(168, DcbxApp{3, 3, 4791});
  });
  for (const auto& [what, info] : bad) {
    Frame b(4096, 0x77);
    EXPECT_EQ(build_lldp(b.data(), 4096, kOurMac, info), 0u) << what;
    EXPECT_EQ(b, Frame(4096, 0x77)) << what << ": written anyway";
  }
  // The limits themselves are fine: 168 entries, 255-byte strings, TC 15, cap 15, max TCs 1.
  LldpInfo edge = roce();
  edge.app.assign(168, DcbxApp{7, 7, 0});
  edge.system_description.assign(255, 's');
  edge.ets_cfg->prio_tc[0] = 15;
  edge.ets_cfg->max_tcs = 1;
  edge.pfc->cap = 15;
  LldpInfo back;
  ASSERT_EQ(parse_exact(build(edge), back), LldpError::Ok);
  EXPECT_EQ(back, edge);
}

TEST(Lldp, IdText) {
  LldpInfo i = minimal();
  EXPECT_EQ(mac_text(i.chassis_id), "02:00:00:00:aa:01");
  EXPECT_EQ(mac_text("abc"), "");
  EXPECT_EQ(chassis_id_text(i), "02:00:00:00:aa:01");
  EXPECT_EQ(port_id_text(i), "swp1");
  i.port_subtype = kPortSubtypeMac;
  i.port_id = mac_id(rte_ether_addr{{0xde, 0xad, 0xbe, 0xef, 0x00, 0x01}});
  EXPECT_EQ(port_id_text(i), "de:ad:be:ef:00:01");
  i.chassis_subtype = kChassisSubtypeNetAddr;
  i.chassis_id = std::string("\x01\x0a\x00\x00\x01", 5);
  EXPECT_EQ(chassis_id_text(i), "10.0.0.1");
  i.chassis_id = std::string("\x02\x20\x01\x0d\xb8", 5) + std::string(11, '\0') + "\x01";
  EXPECT_EQ(chassis_id_text(i), "2001:db8::1");
  i.chassis_subtype = kChassisSubtypeLocal;
  i.chassis_id = std::string("a\\b\n\xff", 5);
  EXPECT_EQ(chassis_id_text(i), "a\\x5cb\\x0a\\xff") << "a peer's bytes never reach a log raw";
  i.chassis_subtype = kChassisSubtypeMac;  // a MAC subtype with the wrong length: shown escaped
  EXPECT_EQ(chassis_id_text(i), "a\\x5cb\\x0a\\xff");
}

// ---- tshark, an independent reader ------------------------------------------------------------

// Field names of Wireshark 4.0's LLDP dissector. The IEEE DCBX TLVs reuse some of the
// pre-standard (CEE) DCBX fields: the ETS priority assignment is dcbx.feature.pg.pgid_prioN,
// the TC bandwidth dcbx.feature.pg.perN, the PFC enable bits dcbx.feature.pfc.prioN and the
// application protocol dcbx.feature.app.proto; "iee.app.sf" is spelled so in Wireshark.
std::vector<std::string> tshark_fields() {
  std::vector<std::string> f = {
      "lldp.chassis.subtype", "lldp.chassis.id.mac", "lldp.port.subtype", "lldp.port.id", "lldp.time_to_live",
      "lldp.port.desc", "lldp.tlv.system.name", "lldp.tlv.system.desc", "lldp.mgn.addr.ip4", "lldp.mgn.addr.ip6",
      "lldp.mgn.interface.subtype", "lldp.mgn.interface.number", "lldp.ieee.802_1.subtype", "lldp.dcbx.ieee.willing",
      "lldp.dcbx.ieee.ets.cbs", "lldp.dcbx.ieee.ets.maxtcs", "lldp.dcbx.ieee.pfc.mbc", "lldp.dcbx.ieee.pfc.numtcs",
      "lldp.dcbx.ieee.app.prio", "lldp.dcbx.iee.app.sf", "lldp.dcbx.feature.app.proto", "_ws.malformed",
      "_ws.expert"};
  for (int i = 0; i < 8; ++i) {
    const std::string n = std::to_string(i);
    f.push_back("lldp.dcbx.feature.pg.pgid_prio" + n);
    f.push_back("lldp.dcbx.feature.pg.per" + n);
    f.push_back("lldp.dcbx.ieee.ets.tsa" + n);
    f.push_back("lldp.dcbx.feature.pfc.prio" + n);
  }
  return f;
}

// One map field -> value (several occurrences joined by ',') per frame of `file`.
std::vector<std::map<std::string, std::string>> tshark_read(const std::string& file) {
  const std::vector<std::string> fields = tshark_fields();
  std::string cmd = "tshark -r " + file + " -T fields -E occurrence=a -E aggregator=,";
  for (const std::string& f : fields) cmd += " -e " + f;
  std::vector<std::map<std::string, std::string>> out;
  if (std::FILE* p = popen((cmd + " 2>/dev/null").c_str(), "r")) {
    std::string line;
    char buf[8192];
    while (std::fgets(buf, sizeof buf, p)) {
      line += buf;
      if (line.empty() || line.back() != '\n') continue;
      line.pop_back();
      std::map<std::string, std::string> m;
      std::size_t start = 0;
      for (const std::string& f : fields) {
        const std::size_t tab = line.find('\t', start);
        m[f] = line.substr(start, tab == std::string::npos ? std::string::npos : tab - start);
        start = tab == std::string::npos ? line.size() : tab + 1;
      }
      out.push_back(std::move(m));
      line.clear();
    }
    pclose(p);
  }
  return out;
}

std::string hex16(uint16_t v) {
  char b[8];
  std::snprintf(b, sizeof b, "0x%04x", v);
  return b;
}

TEST(Lldp, TsharkDecodesTheDcbxWeAdvertise) {
  if (std::system("command -v tshark >/dev/null 2>&1") != 0) GTEST_SKIP() << "no tshark";
  char tmpl[] = "/tmp/rs-lldp-test.XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  write_pcap(dir + "/lldp.pcap", {build(roce()), build(everything()), build(minimal())});
  const auto got = tshark_read(dir + "/lldp.pcap");
  std::filesystem::remove_all(dir);
  ASSERT_EQ(got.size(), 3u);

  // The RoCE port.
  auto r = got[0];
  EXPECT_EQ(r["_ws.malformed"], "");
  EXPECT_EQ(r["_ws.expert"], "") << "tshark found something to warn about";
  EXPECT_EQ(r["lldp.chassis.subtype"], "4");
  EXPECT_EQ(r["lldp.chassis.id.mac"], "02:00:00:00:aa:01");
  EXPECT_EQ(r["lldp.port.subtype"], "5");
  EXPECT_EQ(r["lldp.port.id"], "swp1");
  EXPECT_EQ(r["lldp.time_to_live"], "120");
  EXPECT_EQ(r["lldp.port.desc"], "roceswitch port 1");
  EXPECT_EQ(r["lldp.tlv.system.name"], "roceswitch");
  EXPECT_EQ(r["lldp.tlv.system.desc"], "roceswitch DPDK RoCE switch");
  EXPECT_EQ(r["lldp.mgn.addr.ip4"], "10.0.0.1");
  EXPECT_EQ(r["lldp.mgn.interface.subtype"], "2");
  EXPECT_EQ(r["lldp.mgn.interface.number"], "0");
  EXPECT_EQ(r["lldp.ieee.802_1.subtype"], "0x09,0x0b,0x0c");
  EXPECT_EQ(r["lldp.dcbx.ieee.willing"], "0,0") << "ETS configuration, PFC";
  EXPECT_EQ(r["lldp.dcbx.ieee.ets.cbs"], "0");
  EXPECT_EQ(r["lldp.dcbx.ieee.ets.maxtcs"], "0") << "8 is sent as 0";
  EXPECT_EQ(r["lldp.dcbx.ieee.pfc.mbc"], "0");
  EXPECT_EQ(r["lldp.dcbx.ieee.pfc.numtcs"], "8");
  const DcbxEts e = roce_ets();
  for (int i = 0; i < 8; ++i) {
    const std::string n = std::to_string(i);
    EXPECT_EQ(r["lldp.dcbx.feature.pfc.prio" + n], (0x18 >> i) & 1 ? "1" : "0") << "PFC priority " << i;
    EXPECT_EQ(r["lldp.dcbx.feature.pg.pgid_prio" + n], std::to_string(e.prio_tc[i])) << "priority " << i;
    EXPECT_EQ(r["lldp.dcbx.feature.pg.per" + n], std::to_string(e.bw_pct[i])) << "TC " << i;
    EXPECT_EQ(r["lldp.dcbx.ieee.ets.tsa" + n], std::to_string(e.tsa[i])) << "TC " << i;
  }
  EXPECT_EQ(r["lldp.dcbx.ieee.app.prio"], "3,3");
  EXPECT_EQ(r["lldp.dcbx.iee.app.sf"], "3,5");
  EXPECT_EQ(r["lldp.dcbx.feature.app.proto"], hex16(kRoceV2Port) + "," + hex16(kDscpAf31));

  // Every flag set, both ETS TLVs (configuration first), IPv6 management address.
  auto a = got[1];
  const LldpInfo all = everything();
  EXPECT_EQ(a["_ws.malformed"], "");
  EXPECT_EQ(a["_ws.expert"], "");
  EXPECT_EQ(a["lldp.port.subtype"], "7");
  EXPECT_EQ(a["lldp.port.id"], "port-17");
  EXPECT_EQ(a["lldp.time_to_live"], "3600");
  EXPECT_EQ(a["lldp.mgn.addr.ip6"], "2001:db8::1234");
  EXPECT_EQ(a["lldp.ieee.802_1.subtype"], "0x09,0x0a,0x0b,0x0c");
  EXPECT_EQ(a["lldp.dcbx.ieee.willing"], "1,1");
  EXPECT_EQ(a["lldp.dcbx.ieee.ets.cbs"], "1");
  EXPECT_EQ(a["lldp.dcbx.ieee.ets.maxtcs"], "4");
  EXPECT_EQ(a["lldp.dcbx.ieee.pfc.mbc"], "1");
  EXPECT_EQ(a["lldp.dcbx.ieee.pfc.numtcs"], "4");
  for (int i = 0; i < 8; ++i) {
    const std::string n = std::to_string(i);
    EXPECT_EQ(a["lldp.dcbx.feature.pfc.prio" + n], (all.pfc->enable >> i) & 1 ? "1" : "0") << "PFC priority " << i;
    EXPECT_EQ(a["lldp.dcbx.feature.pg.pgid_prio" + n],
              std::to_string(all.ets_cfg->prio_tc[i]) + "," + std::to_string(all.ets_rec->prio_tc[i]))
        << "priority " << i;
    EXPECT_EQ(a["lldp.dcbx.feature.pg.per" + n],
              std::to_string(all.ets_cfg->bw_pct[i]) + "," + std::to_string(all.ets_rec->bw_pct[i]))
        << "TC " << i;
    EXPECT_EQ(a["lldp.dcbx.ieee.ets.tsa" + n],
              std::to_string(all.ets_cfg->tsa[i]) + "," + std::to_string(all.ets_rec->tsa[i]))
        << "TC " << i;
  }
  EXPECT_EQ(a["lldp.dcbx.ieee.app.prio"], "7,4,0");
  EXPECT_EQ(a["lldp.dcbx.iee.app.sf"], "1,4,2");
  EXPECT_EQ(a["lldp.dcbx.feature.app.proto"], hex16(0x8906) + "," + hex16(3260) + "," + hex16(860));

  // The padded minimal frame: mandatory TLVs only, nothing else reported.
  auto m = got[2];
  EXPECT_EQ(m["_ws.malformed"], "");
  EXPECT_EQ(m["lldp.chassis.id.mac"], "02:00:00:00:aa:01");
  EXPECT_EQ(m["lldp.port.id"], "swp1");
  EXPECT_EQ(m["lldp.time_to_live"], "120");
  EXPECT_EQ(m["lldp.tlv.system.name"], "");
  EXPECT_EQ(m["lldp.ieee.802_1.subtype"], "");
}

}  // namespace
}  // namespace rs::proto
