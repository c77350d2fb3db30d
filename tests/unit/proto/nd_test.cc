// IPv6 neighbour discovery codec: the bytes build_ns/build_na write (checksums recomputed here
// with a plain RFC 1071 loop), parse_nd on them and on frames broken one rule of RFC 4861
// 7.1.1/7.1.2 at a time, truncation at every length and random corruption without reading past
// the bytes given (the ASan build runs this), and scapy as an independent reader and writer.
#include "dataplane/proto/nd.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>
#include "tests/support/frame_files.h"

namespace rs::proto {
namespace {

using rs::test::write_pcap;
using rs::test::run_python;
using rs::test::unhex;

using Ip6 = std::array<uint8_t, 16>;
using Frame = std::vector<uint8_t>;

constexpr rte_ether_addr kOurMac{{0x02, 0x00, 0x00, 0x00, 0xaa, 0x01}};
constexpr rte_ether_addr kPeerMac{{0x02, 0x00, 0x00, 0x00, 0x00, 0x07}};

Ip6 ip6(const char* s) {
  Ip6 a{};
  inet_pton(AF_INET6, s, a.data());
  return a;
}
const Ip6 kOurIp = ip6("fe80::1");
const Ip6 kPeerIp = ip6("2001:db8::aabb:ccdd");

uint16_t be16(const Frame& f, std::size_t at) { return static_cast<uint16_t>(f[at] << 8 | f[at + 1]); }

// RFC 1071 over the pseudo-header and the ICMPv6 message with its checksum taken as zero; the
// value as a big-endian number, written independently of the code under test.
uint16_t reference_checksum(const Frame& f, std::size_t l3) {
  const std::size_t len = std::min<std::size_t>(be16(f, l3 + 4), f.size() - l3 - 40);  // corrupted lengths too
  std::vector<uint8_t> b(f.begin() + static_cast<long>(l3) + 8, f.begin() + static_cast<long>(l3) + 40);
  for (int s : {24, 16, 8, 0}) b.push_back(static_cast<uint8_t>(len >> s));
  b.insert(b.end(), {0, 0, 0, 58});
  const std::size_t icmp = b.size();
  b.insert(b.end(), f.begin() + static_cast<long>(l3) + 40, f.begin() + static_cast<long>(l3 + 40 + len));
  b[icmp + 2] = b[icmp + 3] = 0;
  uint32_t sum = 0;
  for (std::size_t i = 0; i < b.size(); i += 2) sum += (b[i] << 8) + (i + 1 < b.size() ? b[i + 1] : 0);
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint16_t>(~sum);
}
void fix_checksum(Frame& f, std::size_t l3 = 14) {
  const uint16_t c = reference_checksum(f, l3);
  f[l3 + 42] = static_cast<uint8_t>(c >> 8);
  f[l3 + 43] = static_cast<uint8_t>(c);
}

Frame ns(bool unicast, const Ip6& src = kOurIp) {
  Frame buf(256, 0xa5);
  buf.resize(build_ns(buf.data(), 256, kOurMac, src.data(), kPeerIp.data(), unicast, kPeerMac));
  return buf;
}
Frame na(uint8_t flags) {
  Frame buf(256, 0xa5);
  buf.resize(build_na(buf.data(), 256, kPeerMac, kOurMac, kOurIp.data(), kPeerIp.data(), kOurIp.data(), flags));
  return buf;
}

// Parses from a heap copy of exactly the bytes given, so ASan sees any read past the end.
NdError parse_exact(const Frame& f, NdPacket& out, uint16_t l3 = 14) {
  std::unique_ptr<uint8_t[]> copy(new uint8_t[f.size()]);
  if (!f.empty()) std::memcpy(copy.get(), f.data(), f.size());
  return parse_nd(copy.get(), static_cast<uint32_t>(f.size()), l3, out);
}

// Appends option bytes to an NS/NA (no padding at 86 bytes), fixing length and checksum.
Frame with_options(Frame f, const std::vector<uint8_t>& opts) {
  f.insert(f.end(), opts.begin(), opts.end());
  const uint16_t len = static_cast<uint16_t>(be16(f, 18) + opts.size());
  f[18] = static_cast<uint8_t>(len >> 8);
  f[19] = static_cast<uint8_t>(len);
  fix_checksum(f);
  return f;
}

TEST(Nd, SolicitedNodeAddressAndMulticastMac) {
  Ip6 sn{};
  solicited_node(kPeerIp.data(), sn.data());
  EXPECT_EQ(sn, ip6("ff02::1:ffbb:ccdd"));
  rte_ether_addr mac;
  multicast_mac(sn.data(), mac);
  const rte_ether_addr want{{0x33, 0x33, 0xff, 0xbb, 0xcc, 0xdd}};
  EXPECT_TRUE(rte_is_same_ether_addr(&mac, &want));
  Ip6 in_place = kPeerIp;
  solicited_node(in_place.data(), in_place.data());
  EXPECT_EQ(in_place, sn) << "out may be the input";
}

TEST(Nd, MulticastSolicitationLayout) {
  const Frame f = ns(false);
  ASSERT_EQ(f.size(), 14u + 40 + 24 + 8);
  EXPECT_EQ(Frame(f.begin(), f.begin() + 14),
            (Frame{0x33, 0x33, 0xff, 0xbb, 0xcc, 0xdd, 0x02, 0x00, 0x00, 0x00, 0xaa, 0x01, 0x86, 0xdd}));
  EXPECT_EQ(Frame(f.begin() + 14, f.begin() + 22), (Frame{0x60, 0, 0, 0, 0, 32, 58, 255}));
  Ip6 src, dst, target;
  std::memcpy(src.data(), &f[22], 16);
  std::memcpy(dst.data(), &f[38], 16);
  std::memcpy(target.data(), &f[62], 16);
  EXPECT_EQ(src, kOurIp);
  EXPECT_EQ(dst, ip6("ff02::1:ffbb:ccdd"));
  EXPECT_EQ(target, kPeerIp);
  EXPECT_EQ(Frame(f.begin() + 54, f.begin() + 62), (Frame{135, 0, f[56], f[57], 0, 0, 0, 0}));
  EXPECT_EQ(be16(f, 56), reference_checksum(f, 14));
  EXPECT_EQ(Frame(f.begin() + 78, f.end()), (Frame{1, 1, 0x02, 0x00, 0x00, 0x00, 0xaa, 0x01}));
  NdPacket p;
  ASSERT_EQ(parse_exact(f, p), NdError::Ok);
  EXPECT_EQ(p.type, 135);
  EXPECT_TRUE(p.has_lladdr);
  EXPECT_TRUE(rte_is_same_ether_addr(&p.lladdr, &kOurMac));
  EXPECT_EQ(p.flags, 0);
  EXPECT_EQ(0, std::memcmp(p.target, kPeerIp.data(), 16));
  EXPECT_EQ(0, std::memcmp(p.src, kOurIp.data(), 16));
}

TEST(Nd, UnicastSolicitationGoesToTheTarget) {
  const Frame f = ns(true);
  ASSERT_EQ(f.size(), 86u);
  EXPECT_EQ(Frame(f.begin(), f.begin() + 6), (Frame{0x02, 0, 0, 0, 0, 0x07}));
  EXPECT_EQ(0, std::memcmp(&f[38], kPeerIp.data(), 16));
  EXPECT_EQ(be16(f, 56), reference_checksum(f, 14));
  NdPacket p;
  EXPECT_EQ(parse_exact(f, p), NdError::Ok);
}

TEST(Nd, DadProbeFromUnspecifiedCarriesNoSourceLladdr) {
  const Frame f = ns(false, Ip6{});
  ASSERT_EQ(f.size(), 14u + 40 + 24);
  EXPECT_EQ(be16(f, 18), 24);
  EXPECT_EQ(be16(f, 56), reference_checksum(f, 14));
  NdPacket p;
  ASSERT_EQ(parse_exact(f, p), NdError::Ok);
  EXPECT_FALSE(p.has_lladdr);
  // The same probe with an SLLA option breaks RFC 4861 7.1.1.
  EXPECT_EQ(parse_exact(with_options(f, {1, 1, 2, 0, 0, 0, 0, 9}), p), NdError::BadOption);
}

TEST(Nd, AdvertisementCarriesTargetLladdrAndOnlyRsoFlags) {
  const Frame f = na(0xff);
  ASSERT_EQ(f.size(), 86u);
  EXPECT_EQ(Frame(f.begin(), f.begin() + 14),
            (Frame{0x02, 0, 0, 0, 0, 0x07, 0x02, 0x00, 0x00, 0x00, 0xaa, 0x01, 0x86, 0xdd}));
  EXPECT_EQ(Frame(f.begin() + 14, f.begin() + 22), (Frame{0x60, 0, 0, 0, 0, 32, 58, 255}));
  EXPECT_EQ(Frame(f.begin() + 54, f.begin() + 62), (Frame{136, 0, f[56], f[57], 0xe0, 0, 0, 0}));
  EXPECT_EQ(be16(f, 56), reference_checksum(f, 14));
  EXPECT_EQ(Frame(f.begin() + 78, f.end()), (Frame{2, 1, 0x02, 0x00, 0x00, 0x00, 0xaa, 0x01}));
  for (uint8_t flags : {0x00, 0x20, 0x40, 0x60, 0xa0}) {
    NdPacket p;
    ASSERT_EQ(parse_exact(na(flags), p), NdError::Ok);
    EXPECT_EQ(p.type, 136);
    EXPECT_EQ(p.flags, flags);
    EXPECT_TRUE(p.has_lladdr);
    EXPECT_TRUE(rte_is_same_ether_addr(&p.lladdr, &kOurMac));
    EXPECT_EQ(0, std::memcmp(p.dst, kPeerIp.data(), 16));
  }
}

TEST(Nd, ParseBehindVlanSkipsUnknownOptionsAndIgnoresPadding) {
  // A nonce option (type 14, 8 bytes) first, a second TLLA after: the first TLLA counts.
  Frame f = with_options(na(kNaFlagSolicited), {14, 1, 1, 2, 3, 4, 5, 6, 2, 1, 9, 9, 9, 9, 9, 9});
  f.insert(f.begin() + 12, {0x81, 0x00, 0x00, 0x05});
  f.resize(f.size() + 10, 0);  // trailing padding after the IPv6 payload
  NdPacket p;
  ASSERT_EQ(parse_exact(f, p, 18), NdError::Ok);
  EXPECT_TRUE(rte_is_same_ether_addr(&p.lladdr, &kOurMac));
  EXPECT_EQ(p.flags, kNaFlagSolicited);
}

TEST(Nd, EachBrokenRuleHasItsError) {
  NdPacket p;
  const Frame good = ns(false);
  auto broken = [&](std::size_t at, uint8_t v, bool fix = true) {
    Frame f = good;
    f[at] = v;
    if (fix) fix_checksum(f);
    return parse_exact(f, p);
  };
  EXPECT_EQ(parse_exact(Frame(good.begin(), good.begin() + 53), p), NdError::Short) << "no room for the IPv6 header";
  EXPECT_EQ(parse_exact(Frame(good.begin(), good.end() - 1), p), NdError::Short) << "payload length past the frame";
  EXPECT_EQ(broken(19, 0, false), NdError::Short) << "empty payload";
  {
    Frame f = good;  // an NS cut to 16 bytes of ICMPv6
    f[19] = 16;
    f.resize(14 + 40 + 16);
    fix_checksum(f);
    EXPECT_EQ(parse_exact(f, p), NdError::Short);
  }
  EXPECT_EQ(broken(20, 17, false), NdError::NotIcmpv6) << "UDP";
  EXPECT_EQ(broken(20, 0, false), NdError::NotIcmpv6) << "a hop-by-hop header first";
  EXPECT_EQ(broken(14, 0x45, false), NdError::NotIcmpv6) << "version 4";
  EXPECT_EQ(broken(54, 128), NdError::NotNd) << "echo request";
  EXPECT_EQ(broken(54, 134), NdError::NotNd) << "router advertisement";
  EXPECT_EQ(broken(21, 64), NdError::BadHopLimit);
  EXPECT_EQ(broken(21, 254), NdError::BadHopLimit);
  EXPECT_EQ(broken(55, 1), NdError::BadCode);
  EXPECT_EQ(broken(70, 0x42, false), NdError::BadChecksum) << "a target byte changed";
  EXPECT_EQ(broken(57, static_cast<uint8_t>(good[57] ^ 1), false), NdError::BadChecksum);
  EXPECT_EQ(broken(62, 0xff), NdError::BadTarget) << "multicast target";
  EXPECT_EQ(broken(79, 0), NdError::BadOption) << "option length 0";
  EXPECT_EQ(broken(79, 2), NdError::BadOption) << "option past the message";
  EXPECT_EQ(parse_exact(with_options(good, {14}), p), NdError::BadOption) << "one byte of an option";
  EXPECT_EQ(parse_exact(with_options(good, {14, 1, 0, 0, 0, 0, 0, 0}), p), NdError::Ok) << "an unknown option";
}

TEST(Nd, TruncationAndCorruptionNeverReadPastTheFrame) {
  for (const Frame& full : {ns(false), na(0x60), ns(false, Ip6{})}) {
    for (std::size_t n = 0; n <= full.size(); ++n) {
      NdPacket p;
      EXPECT_EQ(parse_exact(Frame(full.begin(), full.begin() + static_cast<long>(n)), p),
                n == full.size() ? NdError::Ok : NdError::Short)
          << "length " << n;
    }
  }
  NdPacket p;
  EXPECT_EQ(parse_nd(nullptr, 0, 14, p), NdError::Short);
  EXPECT_EQ(parse_exact(ns(false), p, 0xffff), NdError::Short);
  // Random bytes, lengths and option lengths: only the sanitizer judges here.
  std::mt19937 rng(4861);
  const Frame base = with_options(na(0x20), {14, 1, 0, 0, 0, 0, 0, 0});
  int ok = 0;
  for (int i = 0; i < 20000; ++i) {
    Frame f = base;
    for (int k = 0; k < 3; ++k) f[14 + rng() % (f.size() - 14)] = static_cast<uint8_t>(rng());
    if (rng() % 2) fix_checksum(f);  // let corruption reach the option walk
    f.resize(rng() % (f.size() + 1));
    ok += parse_exact(f, p) == NdError::Ok;
  }
  EXPECT_GT(ok, 0);
}

TEST(Nd, BuildNeedsRoomAndErrorNames) {
  Frame buf(86, 0x77);
  EXPECT_EQ(build_na(buf.data(), 85, kPeerMac, kOurMac, kOurIp.data(), kPeerIp.data(), kOurIp.data(), 0), 0u);
  EXPECT_EQ(build_ns(buf.data(), 85, kOurMac, kOurIp.data(), kPeerIp.data(), false, kPeerMac), 0u);
  EXPECT_EQ(buf, Frame(86, 0x77)) << "nothing written when it does not fit";
  EXPECT_EQ(build_ns(buf.data(), 86, kOurMac, kOurIp.data(), kPeerIp.data(), false, kPeerMac), 86u);
  const char* names[] = {"ok", "short", "not_icmpv6", "not_nd", "bad_hop_limit", "bad_code", "bad_checksum",
                         "bad_option", "bad_target"};
  for (uint8_t e = 0; e <= static_cast<uint8_t>(NdError::BadTarget); ++e)
    EXPECT_STREQ(nd_error_name(static_cast<NdError>(e)), names[e]);
}

// ---- scapy, an independent reader and writer -------------------------------------------------

TEST(Nd, ScapyReadsWhatWeBuildAndWeReadWhatScapyBuilds) {
  if (std::system("/usr/bin/python3 -c 'import scapy.all' >/dev/null 2>&1") != 0) GTEST_SKIP() << "no python3 with scapy";
  char tmpl[] = "/tmp/rs-nd-test.XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  write_pcap(dir + "/nd.pcap", {ns(false), ns(true), ns(false, Ip6{}), na(kNaFlagSolicited | kNaFlagOverride)});
  // For each frame: what scapy decodes, and whether the checksum scapy computes itself equals ours.
  std::ofstream(dir + "/check.py")
      << "from scapy.all import *\n"
         "def ck(p, l):\n"
         "  q = p.copy(); del q[l].cksum\n"
         "  return Ether(raw(q))[l].cksum == p[l].cksum\n"
         "for p in rdpcap('" + dir + "/nd.pcap'):\n"
         "  i = p[IPv6]\n"
         "  l = ICMPv6ND_NS if ICMPv6ND_NS in p else ICMPv6ND_NA\n"
         "  m = p[l]\n"
         "  o = p[ICMPv6NDOptSrcLLAddr].lladdr if ICMPv6NDOptSrcLLAddr in p else "
         "(p[ICMPv6NDOptDstLLAddr].lladdr if ICMPv6NDOptDstLLAddr in p else '-')\n"
         "  f = '%d%d%d' % (m.R, m.S, m.O) if l is ICMPv6ND_NA else '-'\n"
         "  print(len(p), p.dst, i.src, i.dst, i.hlim, i.plen, m.type, m.code, m.tgt, o, f, ck(p, l))\n"
         "ns = Ether(src='02:00:00:00:00:09', dst='33:33:ff:00:00:01') / IPv6(src='2001:db8::9', "
         "dst='ff02::1:ff00:1', hlim=255) / ICMPv6ND_NS(tgt='2001:db8::1') / ICMPv6NDOptSrcLLAddr(lladdr='02:00:00:00:00:09')\n"
         "na = Ether(src='02:00:00:00:00:09', dst='02:00:00:00:aa:01') / IPv6(src='2001:db8::9', "
         "dst='fe80::1', hlim=255) / ICMPv6ND_NA(tgt='2001:db8::9', R=0, S=1, O=1) / ICMPv6NDOptDstLLAddr(lladdr='02:00:00:00:00:09')\n"
         "print('gen', raw(ns).hex()); print('gen', raw(na).hex())\n";
  const std::vector<std::string> out = run_python(dir + "/check.py");
  std::filesystem::remove_all(dir);
  ASSERT_EQ(out.size(), 6u) << (out.empty() ? "" : out[0]);
  EXPECT_EQ(out[0], "86 33:33:ff:bb:cc:dd fe80::1 ff02::1:ffbb:ccdd 255 32 135 0 2001:db8::aabb:ccdd 02:00:00:00:aa:01 - True");
  EXPECT_EQ(out[1], "86 02:00:00:00:00:07 fe80::1 2001:db8::aabb:ccdd 255 32 135 0 2001:db8::aabb:ccdd 02:00:00:00:aa:01 - True");
  EXPECT_EQ(out[2], "78 33:33:ff:bb:cc:dd :: ff02::1:ffbb:ccdd 255 24 135 0 2001:db8::aabb:ccdd - - True");
  EXPECT_EQ(out[3], "86 02:00:00:00:00:07 fe80::1 2001:db8::aabb:ccdd 255 32 136 0 fe80::1 02:00:00:00:aa:01 011 True");
  const rte_ether_addr scapy_mac{{0x02, 0, 0, 0, 0, 0x09}};
  NdPacket p;
  ASSERT_EQ(out[4].rfind("gen ", 0), 0u) << out[4];
  ASSERT_EQ(parse_exact(unhex(out[4].substr(4)), p), NdError::Ok);
  EXPECT_EQ(p.type, 135);
  EXPECT_EQ(0, std::memcmp(p.target, ip6("2001:db8::1").data(), 16));
  EXPECT_TRUE(p.has_lladdr && rte_is_same_ether_addr(&p.lladdr, &scapy_mac));
  ASSERT_EQ(out[5].rfind("gen ", 0), 0u) << out[5];
  ASSERT_EQ(parse_exact(unhex(out[5].substr(4)), p), NdError::Ok);
  EXPECT_EQ(p.type, 136);
  EXPECT_EQ(p.flags, kNaFlagSolicited | kNaFlagOverride);
  EXPECT_TRUE(p.has_lladdr && rte_is_same_ether_addr(&p.lladdr, &scapy_mac));
}

}  // namespace
}  // namespace rs::proto
