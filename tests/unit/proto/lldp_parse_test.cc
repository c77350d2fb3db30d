// LLDP/DCBX codec, the reading side: build -> parse round trips with and without each optional
// part, the RoCE settings a switch port advertises as parse_lldp reads them back, frames behind a
// VLAN tag and TLVs it skips, frames broken one rule at a time (each rule its error, out left
// alone), truncation at every length and random corruption without reading past the bytes given
// (the ASan build runs this). Shared fixtures: lldp_frames.h; the writing side: lldp_test.cc.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "dataplane/proto/lldp.h"
#include "tests/unit/proto/lldp_frames.h"

namespace rs::proto::lldp_frames {
namespace {

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

}  // namespace
}  // namespace rs::proto::lldp_frames
