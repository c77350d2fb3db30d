// LLDP/DCBX codec, the writing side: the bytes build_lldp writes (TLV headers and DCBX bodies
// checked byte by byte against 802.1AB / 802.1Q annex D), the ninth length bit and the order of
// the optional TLVs, the padding to 60 bytes, what it refuses to encode or has no room for, the
// text of chassis and port IDs, and tshark as an independent reader of what we build.
// Shared fixtures: lldp_frames.h; what parse_lldp reads: lldp_parse_test.cc.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "dataplane/proto/lldp.h"
#include "tests/support/frame_files.h"
#include "tests/unit/proto/lldp_frames.h"

namespace rs::proto::lldp_frames {
namespace {

using rs::test::command_lines;
using rs::test::write_pcap;

Frame bytes_at(const Frame& f, std::size_t at, std::size_t n) {
  return Frame(f.begin() + static_cast<long>(at), f.begin() + static_cast<long>(at + n));
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
  for (const std::string& line : command_lines(cmd, /*with_stderr=*/false)) {
    std::map<std::string, std::string> m;
    std::size_t start = 0;
    for (const std::string& f : fields) {
      const std::size_t tab = line.find('\t', start);
      m[f] = line.substr(start, tab == std::string::npos ? std::string::npos : tab - start);
      start = tab == std::string::npos ? line.size() : tab + 1;
    }
    out.push_back(std::move(m));
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
}  // namespace rs::proto::lldp_frames
