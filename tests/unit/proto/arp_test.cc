// ARP codec: the bytes build_arp writes (offsets per RFC 826), parse_arp on them and on frames
// broken one field at a time, truncation at every length without reading past the bytes given
// (the ASan build runs this), and scapy as an independent reader and writer.
#include "dataplane/proto/arp.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <utility>
#include <vector>
#include "tests/support/frame_files.h"

namespace rs::proto {
namespace {

using rs::test::write_pcap;
using rs::test::run_python;
using rs::test::unhex;

constexpr rte_ether_addr kOurMac{{0x02, 0x00, 0x00, 0x00, 0xaa, 0x01}};
constexpr rte_ether_addr kPeerMac{{0x02, 0x00, 0x00, 0x00, 0x00, 0x07}};
constexpr rte_ether_addr kBroadcast{{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}};

uint32_t ip4(const char* s) {
  uint32_t a = 0;
  inet_pton(AF_INET, s, &a);
  return a;
}

ArpPacket request() {
  ArpPacket a;
  a.op = kArpOpRequest;
  a.sha = kPeerMac;
  a.spa = ip4("10.0.0.7");
  a.tha = rte_ether_addr{};
  a.tpa = ip4("10.0.0.1");
  return a;
}

std::vector<uint8_t> build(const ArpPacket& a, const rte_ether_addr& dst = kBroadcast,
                           const rte_ether_addr& src = kPeerMac) {
  std::vector<uint8_t> buf(128, 0xa5);  // not zero: the padding must be written
  const uint32_t n = build_arp(buf.data(), static_cast<uint32_t>(buf.size()), dst, src, a);
  buf.resize(n);
  return buf;
}

// Parses `bytes` from a heap copy of exactly their length, so ASan sees any read past the end.
ArpError parse_exact(const std::vector<uint8_t>& bytes, uint16_t l3_offset, ArpPacket& out) {
  std::unique_ptr<uint8_t[]> copy(new uint8_t[bytes.size()]);
  if (!bytes.empty()) std::memcpy(copy.get(), bytes.data(), bytes.size());
  return parse_arp(copy.get(), static_cast<uint32_t>(bytes.size()), l3_offset, out);
}

TEST(Arp, BuildWritesRfc826LayoutPaddedTo60) {
  const std::vector<uint8_t> f = build(request());
  ASSERT_EQ(f.size(), 60u);
  const std::vector<uint8_t> want = {
      0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0x00, 0x00, 0x00, 0x00, 0x07, 0x08, 0x06,  // Ethernet
      0x00, 0x01, 0x08, 0x00, 0x06, 0x04, 0x00, 0x01,                                      // htype..op
      0x02, 0x00, 0x00, 0x00, 0x00, 0x07, 10, 0, 0, 7,                                     // sha, spa
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 10, 0, 0, 1};                                    // tha, tpa
  EXPECT_EQ(std::vector<uint8_t>(f.begin(), f.begin() + 42), want);
  for (std::size_t i = 42; i < 60; ++i) EXPECT_EQ(f[i], 0) << "padding byte " << i;
}

TEST(Arp, ParseReadsWhatBuildWrote) {
  ArpPacket reply{kArpOpReply, kOurMac, ip4("10.0.0.1"), kPeerMac, ip4("10.0.0.7")};
  const std::vector<uint8_t> f = build(reply, kPeerMac, kOurMac);
  ArpPacket got;
  ASSERT_EQ(parse_exact(f, 14, got), ArpError::Ok);
  EXPECT_EQ(got.op, 2);
  EXPECT_TRUE(rte_is_same_ether_addr(&got.sha, &kOurMac));
  EXPECT_TRUE(rte_is_same_ether_addr(&got.tha, &kPeerMac));
  EXPECT_EQ(got.spa, ip4("10.0.0.1"));
  EXPECT_EQ(got.tpa, ip4("10.0.0.7"));
  EXPECT_FALSE(arp_is_gratuitous(got));
}

TEST(Arp, ParseBehindVlanTagAndIgnoresTrailingBytes) {
  std::vector<uint8_t> f = build(request());
  const uint8_t tag[4] = {0x81, 0x00, 0x60, 0x0a};  // PCP 3, VID 10, before the ARP EtherType
  f.insert(f.begin() + 12, tag, tag + 4);
  f.resize(f.size() + 4, 0xee);  // an FCS the port left on
  ArpPacket got;
  ASSERT_EQ(parse_exact(f, 18, got), ArpError::Ok);
  EXPECT_EQ(got.op, 1);
  EXPECT_EQ(got.spa, ip4("10.0.0.7"));
  EXPECT_EQ(got.tpa, ip4("10.0.0.1"));
  EXPECT_TRUE(rte_is_same_ether_addr(&got.sha, &kPeerMac));
}

TEST(Arp, EachMalformedFieldHasItsError) {
  const std::vector<uint8_t> good = build(request());
  struct Case {
    std::size_t at;
    uint8_t value;
    ArpError want;
  };
  const Case cases[] = {
      {15, 6, ArpError::BadHardware},     // htype 6 (IEEE 802)
      {18, 8, ArpError::BadHardware},     // hlen 8
      {16, 0x86, ArpError::BadProtocol},  // ptype 0x8600
      {19, 16, ArpError::BadProtocol},    // plen 16
      {21, 3, ArpError::BadOpcode},       // RARP request
      {21, 0, ArpError::BadOpcode},
      {20, 1, ArpError::BadOpcode},  // op 0x0101
  };
  for (const Case& c : cases) {
    std::vector<uint8_t> f = good;
    f[c.at] = c.value;
    ArpPacket got;
    EXPECT_EQ(parse_exact(f, 14, got), c.want) << "byte " << c.at << " = " << int(c.value);
  }
  ArpPacket got;
  EXPECT_EQ(parse_exact(std::vector<uint8_t>(good.begin(), good.begin() + 41), 14, got), ArpError::Short);
  EXPECT_EQ(parse_exact(good, 40, got), ArpError::Short) << "the packet would end past the frame";
  EXPECT_EQ(parse_exact(good, 61, got), ArpError::Short) << "offset past the frame";
  EXPECT_EQ(parse_exact(good, 0xffff, got), ArpError::Short);
}

TEST(Arp, TruncatedAtEveryLengthNeverReadsPastIt) {
  const std::vector<uint8_t> untagged = build(request());
  std::vector<uint8_t> tagged = untagged;
  tagged.insert(tagged.begin() + 12, {0x81, 0x00, 0x00, 0x01});
  for (const auto& [f, off] : {std::pair{untagged, uint16_t{14}}, std::pair{tagged, uint16_t{18}}}) {
    for (std::size_t n = 0; n <= f.size(); ++n) {
      ArpPacket got;
      const ArpError e = parse_exact(std::vector<uint8_t>(f.begin(), f.begin() + n), off, got);
      EXPECT_EQ(e, n < off + kArpLen ? ArpError::Short : ArpError::Ok) << "length " << n << " offset " << off;
    }
  }
  ArpPacket got;
  EXPECT_EQ(parse_arp(nullptr, 0, 14, got), ArpError::Short);
}

TEST(Arp, BuildNeedsRoomForThePaddedFrame) {
  std::vector<uint8_t> buf(60, 0x77);
  EXPECT_EQ(build_arp(buf.data(), 59, kBroadcast, kOurMac, request()), 0u);
  EXPECT_EQ(build_arp(buf.data(), 0, kBroadcast, kOurMac, request()), 0u);
  EXPECT_EQ(buf, std::vector<uint8_t>(60, 0x77)) << "nothing written when it does not fit";
  EXPECT_EQ(build_arp(buf.data(), 60, kBroadcast, kOurMac, request()), 60u);
}

TEST(Arp, GratuitousAndErrorNames) {
  ArpPacket g = request();
  g.tpa = g.spa;
  EXPECT_TRUE(arp_is_gratuitous(g));
  EXPECT_FALSE(arp_is_gratuitous(request()));
  EXPECT_STREQ(arp_error_name(ArpError::Ok), "ok");
  EXPECT_STREQ(arp_error_name(ArpError::Short), "short");
  EXPECT_STREQ(arp_error_name(ArpError::BadHardware), "bad_hardware");
  EXPECT_STREQ(arp_error_name(ArpError::BadProtocol), "bad_protocol");
  EXPECT_STREQ(arp_error_name(ArpError::BadOpcode), "bad_opcode");
}

// ---- scapy, an independent reader and writer -------------------------------------------------

TEST(Arp, ScapyReadsWhatWeBuildAndWeReadWhatScapyBuilds) {
  if (std::system("/usr/bin/python3 -c 'import scapy.all' >/dev/null 2>&1") != 0) GTEST_SKIP() << "no python3 with scapy";
  char tmpl[] = "/tmp/rs-arp-test.XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  ArpPacket reply{kArpOpReply, kOurMac, ip4("10.0.0.1"), kPeerMac, ip4("10.0.0.7")};
  write_pcap(dir + "/arp.pcap", {build(request()), build(reply, kPeerMac, kOurMac)});
  std::ofstream(dir + "/check.py") << "from scapy.all import rdpcap, Ether, ARP, raw\n"
                                      "for p in rdpcap('" + dir + "/arp.pcap'):\n"
                                      "  a = p[ARP]\n"
                                      "  print(len(p), p.dst, p.src, hex(p.type), a.hwtype, hex(a.ptype), a.hwlen, a.plen,"
                                      " a.op, a.hwsrc, a.psrc, a.hwdst, a.pdst, raw(Ether(raw(p))) == raw(p))\n"
                                      "g = Ether(dst='ff:ff:ff:ff:ff:ff', src='02:00:00:00:00:09') / ARP(op=1,"
                                      " hwsrc='02:00:00:00:00:09', psrc='10.0.0.9', pdst='10.0.0.1')\n"
                                      "print('gen', raw(g).hex())\n";
  const std::vector<std::string> out = run_python(dir + "/check.py");
  std::filesystem::remove_all(dir);
  ASSERT_EQ(out.size(), 3u) << (out.empty() ? "" : out[0]);
  EXPECT_EQ(out[0], "60 ff:ff:ff:ff:ff:ff 02:00:00:00:00:07 0x806 1 0x800 6 4 1 02:00:00:00:00:07 10.0.0.7 "
                    "00:00:00:00:00:00 10.0.0.1 True");
  EXPECT_EQ(out[1], "60 02:00:00:00:00:07 02:00:00:00:aa:01 0x806 1 0x800 6 4 2 02:00:00:00:aa:01 10.0.0.1 "
                    "02:00:00:00:00:07 10.0.0.7 True");
  ASSERT_EQ(out[2].rfind("gen ", 0), 0u) << out[2];
  ArpPacket got;
  const std::vector<uint8_t> gen = unhex(out[2].substr(4));
  ASSERT_EQ(parse_exact(gen, 14, got), ArpError::Ok);
  EXPECT_EQ(got.op, 1);
  EXPECT_EQ(got.spa, ip4("10.0.0.9"));
  EXPECT_EQ(got.tpa, ip4("10.0.0.1"));
  const rte_ether_addr want_sha{{0x02, 0, 0, 0, 0, 0x09}};
  EXPECT_TRUE(rte_is_same_ether_addr(&got.sha, &want_sha));
}

}  // namespace
}  // namespace rs::proto
