// ICMP/ICMPv6 codec: echo requests recognised and refused, echo replies and errors field by field
// (checksums recomputed here with a plain RFC 1071 loop), quotes at the 576/1280-byte limits,
// every case where RFC 1812 4.3.2.7 / RFC 4443 2.4(e) forbid an error, truncation and random
// corruption without reading past the bytes given (the ASan build runs this), and scapy as an
// independent reader and writer.
#include "dataplane/proto/icmp.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <stdlib.h>

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

using Bytes = std::vector<uint8_t>;

constexpr rte_ether_addr kOurMac{{0x02, 0x00, 0x00, 0x00, 0xaa, 0x01}};
constexpr rte_ether_addr kPeerMac{{0x02, 0x00, 0x00, 0x00, 0x00, 0x07}};

Bytes addr(const char* s) {
  Bytes a(16);
  if (inet_pton(AF_INET, s, a.data()) == 1) a.resize(4);
  else inet_pton(AF_INET6, s, a.data());
  return a;
}
uint32_t ip4(const char* s) {
  uint32_t a;
  std::memcpy(&a, addr(s).data(), 4);
  return a;
}
uint16_t be16(const Bytes& b, std::size_t at) { return static_cast<uint16_t>(b[at] << 8 | b[at + 1]); }
void put16(Bytes& b, std::size_t at, uint16_t v) {
  b[at] = static_cast<uint8_t>(v >> 8);
  b[at + 1] = static_cast<uint8_t>(v);
}
Bytes cat(Bytes a, const Bytes& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}
Bytes slice(const Bytes& b, std::size_t from, std::size_t n) { return Bytes(b.begin() + from, b.begin() + from + n); }

// RFC 1071, the reference: ones'-complement sum of big-endian words, complemented.
uint16_t rfc1071(const Bytes& b) {
  uint32_t sum = 0;
  for (std::size_t i = 0; i < b.size(); i += 2) sum += (b[i] << 8) + (i + 1 < b.size() ? b[i + 1] : 0);
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint16_t>(~sum);
}
// The checksum of `b` with its field at `at` zeroed.
uint16_t sum_without(Bytes b, std::size_t at) {
  put16(b, at, 0);
  return rfc1071(b);
}
Bytes pseudo6(const Bytes& src, const Bytes& dst, std::size_t len) {
  Bytes p = cat(src, dst);
  return cat(p, {0, 0, static_cast<uint8_t>(len >> 8), static_cast<uint8_t>(len), 0, 0, 0, 58});
}

Bytes icmp_msg(uint8_t type, uint8_t code, uint16_t id, uint16_t seq, const Bytes& data) {
  Bytes m = cat({type, code, 0, 0, static_cast<uint8_t>(id >> 8), static_cast<uint8_t>(id),
                 static_cast<uint8_t>(seq >> 8), static_cast<uint8_t>(seq)}, data);
  put16(m, 2, rfc1071(m));
  return m;
}
Bytes ipv4(const char* src, const char* dst, uint8_t proto, const Bytes& payload, uint16_t frag = 0x4000,
           const Bytes& options = {}) {
  const std::size_t hl = 20 + options.size();
  Bytes h = {static_cast<uint8_t>(0x40 | hl / 4), 0x68, 0, 0, 0x42, 0x42, 0, 0, 7, proto, 0, 0};
  put16(h, 2, static_cast<uint16_t>(hl + payload.size()));
  put16(h, 6, frag);
  h = cat(cat(cat(h, addr(src)), addr(dst)), options);
  put16(h, 10, rfc1071(h));
  return cat(h, payload);
}
Bytes ipv6(const char* src, const char* dst, uint8_t next, const Bytes& payload) {
  Bytes h = {0x6b, 0x80, 0x12, 0x34, static_cast<uint8_t>(payload.size() >> 8), static_cast<uint8_t>(payload.size()),
             next, 9};
  return cat(cat(cat(h, addr(src)), addr(dst)), payload);
}
Bytes icmp6_msg(const char* src, const char* dst, uint8_t type, uint8_t code, uint16_t id, uint16_t seq, const Bytes& data) {
  Bytes m = icmp_msg(type, code, id, seq, data);
  put16(m, 2, 0);
  put16(m, 2, rfc1071(cat(pseudo6(addr(src), addr(dst), m.size()), m)));
  return m;
}
Bytes pattern(std::size_t n) {
  Bytes b(n);
  for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<uint8_t>(i * 7 + 3);
  return b;
}

// Inputs come from heap copies of exactly the bytes given, so ASan sees any read past the end.
struct Exact {
  explicit Exact(const Bytes& b) : p(new uint8_t[b.size()]), n(static_cast<uint32_t>(b.size())) {
    if (!b.empty()) std::memcpy(p.get(), b.data(), b.size());
  }
  std::unique_ptr<uint8_t[]> p;
  uint32_t n;
};
constexpr uint32_t kCap = 2048;
Bytes echo4(const Bytes& req) {
  Bytes buf(kCap, 0xa5);
  Exact in(req);
  buf.resize(build_icmp4_echo_reply(buf.data(), kCap, kPeerMac, kOurMac, in.p.get(), in.n));
  return buf;
}
Bytes echo6(const Bytes& req) {
  Bytes buf(kCap, 0xa5);
  Exact in(req);
  buf.resize(build_icmp6_echo_reply(buf.data(), kCap, kPeerMac, kOurMac, in.p.get(), in.n));
  return buf;
}
Bytes error4(const Bytes& orig, uint8_t type = 11, uint8_t code = 0) {
  Bytes buf(kCap, 0xa5);
  Exact in(orig);
  buf.resize(build_icmp4_error(buf.data(), kCap, kPeerMac, kOurMac, ip4("10.0.0.1"), type, code, in.p.get(), in.n));
  return buf;
}
Bytes error6(const Bytes& orig, uint8_t type = 3, uint8_t code = 0) {
  Bytes buf(kCap, 0xa5);
  Exact in(orig);
  const Bytes src = addr("2001:db8::1");
  buf.resize(build_icmp6_error(buf.data(), kCap, kPeerMac, kOurMac, src.data(), type, code, in.p.get(), in.n));
  return buf;
}
bool is_echo4(const Bytes& ip) { Exact in(ip); return icmp4_echo_request(in.p.get(), in.n); }
bool is_echo6(const Bytes& ip) { Exact in(ip); return icmp6_echo_request(in.p.get(), in.n); }

const Bytes kEthToPeer4 = {0x02, 0, 0, 0, 0, 0x07, 0x02, 0, 0, 0, 0xaa, 0x01, 0x08, 0x00};
const Bytes kEthToPeer6 = {0x02, 0, 0, 0, 0, 0x07, 0x02, 0, 0, 0, 0xaa, 0x01, 0x86, 0xdd};
Bytes ping4(uint16_t frag = 0x4000, const Bytes& options = {}, std::size_t data = 56, const char* src = "10.0.1.2") {
  return ipv4(src, "10.0.0.1", 1, icmp_msg(8, 0, 0x1234, 7, pattern(data)), frag, options);
}
Bytes ping6(const char* src = "2001:db8:1::2", const char* dst = "2001:db8::1") {
  return ipv6(src, dst, 58, icmp6_msg(src, dst, 128, 0, 0x1234, 7, pattern(56)));
}
// A UDP datagram with a right length (scapy's reading of a quote needs it) and no checksum.
Bytes udp(std::size_t payload) {
  Bytes u = cat({0xc0, 0x01, 0x12, 0xb7, 0, 0, 0, 0}, pattern(payload));
  put16(u, 4, static_cast<uint16_t>(u.size()));
  return u;
}
Bytes udp4(std::size_t payload, const char* src = "10.0.1.2", const char* dst = "10.9.0.1") {
  return ipv4(src, dst, 17, udp(payload), 0);
}
Bytes udp6(std::size_t payload, const char* src = "2001:db8:1::2", const char* dst = "2001:db8:9::1") {
  return ipv6(src, dst, 17, udp(payload));
}

TEST(Icmp, Echo4ReplySwapsAddressesAndKeepsIdSequenceAndData) {
  const Bytes req = ping4();
  ASSERT_TRUE(is_echo4(req));
  const Bytes f = echo4(req);
  ASSERT_EQ(f.size(), 14u + 20 + 64);
  EXPECT_EQ(slice(f, 0, 14), kEthToPeer4);
  EXPECT_EQ(slice(f, 14, 12), (Bytes{0x45, 0, 0, 84, 0x42, 0x42, 0x40, 0, 64, 1, f[24], f[25]}));
  EXPECT_EQ(slice(f, 26, 8), cat(addr("10.0.0.1"), addr("10.0.1.2")));
  EXPECT_EQ(be16(f, 24), sum_without(slice(f, 14, 20), 10));
  EXPECT_EQ(slice(f, 34, 2), (Bytes{0, 0}));
  EXPECT_EQ(slice(f, 38, 60), slice(req, 24, 60)) << "id, sequence, data";
  EXPECT_EQ(be16(f, 36), sum_without(slice(f, 34, 64), 2));
  // No DF in the request, none in the reply; options are not copied; padding to 60 is zeros.
  EXPECT_EQ(be16(echo4(ping4(0)), 20), 0);
  const Bytes opt = echo4(ping4(0x4000, {1, 1, 1, 0}));
  ASSERT_EQ(opt.size(), f.size());
  EXPECT_EQ(opt[14], 0x45);
  EXPECT_EQ(slice(opt, 34, 64), slice(f, 34, 64));
  const Bytes tiny = echo4(ping4(0x4000, {}, 0));
  ASSERT_EQ(tiny.size(), 60u);
  EXPECT_EQ(slice(tiny, 42, 18), Bytes(18, 0));
  EXPECT_EQ(be16(tiny, 36), sum_without(slice(tiny, 34, 8), 2));
  EXPECT_EQ(echo4(cat(req, Bytes(6, 0))), f) << "trailing padding after the datagram is ignored";
}

TEST(Icmp, Echo4RequestsThatAreNot) {
  auto with = [](Bytes b, std::size_t at, uint8_t v, bool fix_ip = true) {
    b[at] = v;
    if (fix_ip) put16(b, 10, sum_without(slice(b, 0, 4u * (b[0] & 15)), 10));
    return b;
  };
  const Bytes req = ping4();
  EXPECT_FALSE(is_echo4(with(req, 11, static_cast<uint8_t>(req[11] ^ 1), false))) << "IP checksum";
  EXPECT_FALSE(is_echo4(with(req, 40, 0))) << "ICMP checksum";
  EXPECT_FALSE(is_echo4(ipv4("10.0.1.2", "10.0.0.1", 1, icmp_msg(0, 0, 1, 1, {})))) << "a reply";
  EXPECT_FALSE(is_echo4(ipv4("10.0.1.2", "10.0.0.1", 1, icmp_msg(8, 1, 1, 1, {})))) << "code 1";
  EXPECT_FALSE(is_echo4(ping4(0x2000))) << "first fragment";
  EXPECT_FALSE(is_echo4(ping4(0x0001))) << "later fragment";
  EXPECT_FALSE(is_echo4(with(req, 0, 0x44))) << "IHL 4";
  EXPECT_FALSE(is_echo4(with(req, 0, 0x65))) << "version 6";
  EXPECT_FALSE(is_echo4(with(req, 9, 17))) << "UDP";
  EXPECT_FALSE(is_echo4(with(req, 3, 85))) << "total length past the bytes";
  EXPECT_FALSE(is_echo4(with(req, 3, 27))) << "7 bytes of ICMP";
  EXPECT_FALSE(is_echo4(with(ping4(0x4000, {}, 0), 0, 0x4f, false))) << "header longer than the datagram";
  for (const char* src : {"0.0.0.0", "127.0.0.1", "224.0.0.1", "255.255.255.255"})
    EXPECT_FALSE(is_echo4(ping4(0x4000, {}, 56, src))) << src;
  const Bytes bcast = ipv4("10.0.1.2", "255.255.255.255", 1, icmp_msg(8, 0, 1, 1, {}));
  EXPECT_TRUE(is_echo4(bcast));
  EXPECT_TRUE(echo4(bcast).empty()) << "no reply from a broadcast address";
  EXPECT_TRUE(echo4(with(req, 40, 0)).empty());
}

TEST(Icmp, Echo6ReplySwapsAddressesAndKeepsIdSequenceAndData) {
  const Bytes req = ping6();
  ASSERT_TRUE(is_echo6(req));
  const Bytes f = echo6(req);
  ASSERT_EQ(f.size(), 14u + 40 + 64);
  EXPECT_EQ(slice(f, 0, 14), kEthToPeer6);
  EXPECT_EQ(slice(f, 14, 8), (Bytes{0x60, 0, 0, 0, 0, 64, 58, 64}));
  EXPECT_EQ(slice(f, 22, 32), cat(addr("2001:db8::1"), addr("2001:db8:1::2")));
  EXPECT_EQ(slice(f, 54, 2), (Bytes{129, 0}));
  EXPECT_EQ(slice(f, 58, 60), slice(req, 44, 60));
  EXPECT_EQ(be16(f, 56), sum_without(cat(pseudo6(slice(f, 22, 16), slice(f, 38, 16), 64), slice(f, 54, 64)), 42));
  Bytes bad = req;
  bad[60] ^= 1;
  EXPECT_FALSE(is_echo6(bad)) << "checksum";
  bad = req;
  bad[6] = 17;
  EXPECT_FALSE(is_echo6(bad)) << "UDP";
  EXPECT_FALSE(is_echo6(ipv6("2001:db8:1::2", "2001:db8::1", 58, icmp6_msg("2001:db8:1::2", "2001:db8::1", 129, 0, 1, 1, {}))));
  EXPECT_FALSE(is_echo6(ipv6("2001:db8:1::2", "2001:db8::1", 58, icmp6_msg("2001:db8:1::2", "2001:db8::1", 128, 3, 1, 1, {}))));
  EXPECT_FALSE(is_echo6(slice(req, 0, req.size() - 1))) << "payload length past the bytes";
  EXPECT_FALSE(is_echo6(ping6("::"))) << "unspecified source";
  EXPECT_FALSE(is_echo6(ping6("ff02::1"))) << "multicast source";
  EXPECT_TRUE(is_echo6(ping6("2001:db8:1::2", "ff02::1")));
  EXPECT_TRUE(echo6(ping6("2001:db8:1::2", "ff02::1")).empty()) << "no reply from a multicast address";
  EXPECT_EQ(echo6(cat(req, Bytes(9, 0))), f) << "trailing padding is ignored";
}

// The checks every IPv4 error frame passes; returns the quote.
Bytes check_error4(const Bytes& f, uint8_t type, uint8_t code, const char* to) {
  EXPECT_EQ(slice(f, 0, 14), kEthToPeer4);
  const std::size_t total = be16(f, 16);
  EXPECT_EQ(f.size(), 14 + total);
  EXPECT_EQ(slice(f, 14, 2), (Bytes{0x45, 0xc0})) << "IHL 5, TOS CS6";
  EXPECT_EQ(slice(f, 20, 4), (Bytes{0, 0, 64, 1})) << "no DF, TTL 64, ICMP";
  EXPECT_EQ(be16(f, 24), sum_without(slice(f, 14, 20), 10));
  EXPECT_EQ(slice(f, 26, 8), cat(addr("10.0.0.1"), addr(to)));
  EXPECT_EQ(slice(f, 34, 2), (Bytes{type, code}));
  EXPECT_EQ(slice(f, 38, 4), Bytes(4, 0)) << "unused";
  EXPECT_EQ(be16(f, 36), sum_without(slice(f, 34, total - 20), 2));
  return slice(f, 42, total - 28);
}

TEST(Icmp, Error4QuotesAsMuchAsFitsIn576Bytes) {
  const Bytes small = udp4(72);  // 100-byte datagram
  EXPECT_EQ(check_error4(error4(small), 11, 0, "10.0.1.2"), small);
  const Bytes big = udp4(1472);  // 1500
  const Bytes f = error4(big, 3, 1);
  ASSERT_EQ(f.size(), 14u + 576);
  EXPECT_EQ(check_error4(f, 3, 1, "10.0.1.2"), slice(big, 0, 548));
  EXPECT_EQ(error4(udp4(548 - 28)).size(), 14u + 576) << "a 548-byte original fits whole";
  EXPECT_EQ(check_error4(error4(udp4(549 - 28)), 11, 0, "10.0.1.2").size(), 548u);
  EXPECT_EQ(check_error4(error4(cat(small, Bytes(20, 0))), 11, 0, "10.0.1.2"), small) << "padding not quoted";
  EXPECT_EQ(check_error4(error4(slice(big, 0, 60)), 11, 0, "10.0.1.2"), slice(big, 0, 60)) << "what is there";
  const Bytes ping = ping4(0x4000, {1, 1, 1, 0});
  EXPECT_EQ(check_error4(error4(ping, 3, 0), 3, 0, "10.0.1.2"), ping) << "errors about echo requests are sent";
  EXPECT_FALSE(error4(ipv4("10.0.1.2", "10.9.0.1", 1, icmp_msg(0, 0, 1, 1, {}))).empty()) << "about an echo reply";
  EXPECT_FALSE(error4(cat(slice(udp4(100), 0, 6), cat({0x20, 0}, slice(udp4(100), 8, 120)))).empty())
      << "about a first fragment";
}

TEST(Icmp, Error4NeverSentWhereRfc1812Forbids) {
  for (uint8_t t : {3, 4, 5, 11, 12})
    EXPECT_TRUE(error4(ipv4("10.0.1.2", "10.9.0.1", 1, icmp_msg(t, 0, 0, 0, pattern(28)))).empty()) << "ICMP type " << int(t);
  EXPECT_TRUE(error4(ipv4("10.0.1.2", "10.9.0.1", 1, {})).empty()) << "ICMP with no type byte";
  EXPECT_TRUE(error4(ipv4("10.0.1.2", "10.9.0.1", 17, pattern(100), 0x2001)).empty()) << "non-first fragment";
  for (const char* src : {"0.0.0.0", "0.1.2.3", "127.0.0.1", "224.0.0.5", "239.1.1.1", "240.0.0.1", "255.255.255.255"})
    EXPECT_TRUE(error4(udp4(10, src)).empty()) << "from " << src;
  for (const char* dst : {"224.0.0.5", "239.255.255.250", "255.255.255.255"})
    EXPECT_TRUE(error4(udp4(10, "10.0.1.2", dst)).empty()) << "to " << dst;
  const Bytes good = udp4(10);
  EXPECT_TRUE(error4(good, 5, 0).empty()) << "redirect is not built here";
  EXPECT_TRUE(error4(good, 3, 4).empty()) << "fragmentation needed carries an MTU we are not given";
  EXPECT_TRUE(error4(good, 11, 2).empty());
  Bytes bad = good;
  bad[0] = 0x44;
  EXPECT_TRUE(error4(bad).empty()) << "IHL 4";
  bad[0] = 0x65;
  EXPECT_TRUE(error4(bad).empty()) << "version 6";
  bad = good;
  put16(bad, 2, 19);
  EXPECT_TRUE(error4(bad).empty()) << "total length under the header";
  EXPECT_TRUE(error4(slice(good, 0, 19)).empty());
}

Bytes check_error6(const Bytes& f, uint8_t type, uint8_t code, const char* to) {
  EXPECT_EQ(slice(f, 0, 14), kEthToPeer6);
  const std::size_t plen = be16(f, 18);
  EXPECT_EQ(f.size(), 14 + 40 + plen);
  EXPECT_EQ(slice(f, 14, 4), (Bytes{0x6c, 0, 0, 0})) << "traffic class 0xc0, flow label 0";
  EXPECT_EQ(slice(f, 20, 2), (Bytes{58, 64}));
  EXPECT_EQ(slice(f, 22, 32), cat(addr("2001:db8::1"), addr(to)));
  EXPECT_EQ(slice(f, 54, 2), (Bytes{type, code}));
  EXPECT_EQ(slice(f, 58, 4), Bytes(4, 0));
  EXPECT_EQ(be16(f, 56), sum_without(cat(pseudo6(slice(f, 22, 16), slice(f, 38, 16), plen), slice(f, 54, plen)), 42));
  return slice(f, 62, plen - 8);
}

TEST(Icmp, Error6QuotesAsMuchAsFitsIn1280Bytes) {
  const Bytes small = udp6(60);
  EXPECT_EQ(check_error6(error6(small), 3, 0, "2001:db8:1::2"), small);
  const Bytes big = udp6(1452);  // 1500
  const Bytes f = error6(big, 1, 0);
  ASSERT_EQ(f.size(), 14u + 1280);
  EXPECT_EQ(check_error6(f, 1, 0, "2001:db8:1::2"), slice(big, 0, 1232));
  EXPECT_EQ(error6(udp6(1232 - 48)).size(), 14u + 1280) << "a 1232-byte original fits whole";
  EXPECT_EQ(check_error6(error6(cat(small, Bytes(7, 0))), 3, 0, "2001:db8:1::2"), small) << "padding not quoted";
  EXPECT_EQ(check_error6(error6(slice(big, 0, 70), 3, 1), 3, 1, "2001:db8:1::2").size(), 70u);
  EXPECT_FALSE(error6(ping6()).empty()) << "errors about echo requests are sent";
  // UDP behind a hop-by-hop header and a first fragment; a non-first fragment's layer is unknown.
  const Bytes hbh_frag_udp = cat({44, 0, 1, 4, 0, 0, 0, 0, 17, 0, 0, 0, 0, 0, 0, 1}, pattern(20));
  EXPECT_FALSE(error6(ipv6("2001:db8:1::2", "2001:db8:9::1", 0, hbh_frag_udp)).empty());
  const Bytes later_frag = cat({58, 0, 0x05, 0x00, 0, 0, 0, 1}, {1, 0, 0, 0});
  EXPECT_FALSE(error6(ipv6("2001:db8:1::2", "2001:db8:9::1", 44, later_frag)).empty());
}

TEST(Icmp, Error6NeverSentWhereRfc4443Forbids) {
  const char* s = "2001:db8:1::2";
  const char* d = "2001:db8:9::1";
  for (uint8_t t : {1, 2, 3, 4, 127, 133, 134, 135, 136, 137})
    EXPECT_TRUE(error6(ipv6(s, d, 58, icmp6_msg(s, d, t, 0, 0, 0, pattern(40)))).empty()) << "ICMPv6 type " << int(t);
  // The same error behind a destination-options header, and an ICMPv6 type byte not present.
  EXPECT_TRUE(error6(ipv6(s, d, 60, cat({58, 0, 1, 4, 0, 0, 0, 0}, icmp6_msg(s, d, 1, 0, 0, 0, {})))).empty());
  EXPECT_TRUE(error6(ipv6(s, d, 58, {})).empty());
  EXPECT_TRUE(error6(udp6(10, "::")).empty()) << "unspecified source";
  EXPECT_TRUE(error6(udp6(10, "ff02::1")).empty()) << "multicast source";
  EXPECT_TRUE(error6(udp6(10, s, "ff02::1:ff00:1")).empty()) << "multicast destination";
  EXPECT_TRUE(error6(udp6(10), 2, 0).empty()) << "packet too big carries an MTU we are not given";
  EXPECT_TRUE(error6(udp6(10), 4, 0).empty());
  EXPECT_TRUE(error6(udp6(10), 3, 2).empty());
  EXPECT_TRUE(error6(udp4(10)).empty()) << "IPv4";
  EXPECT_TRUE(error6(slice(udp6(10), 0, 39)).empty());
}

TEST(Icmp, BuildersNeedRoomForTheWholeFrame) {
  Bytes buf(2048, 0x77);
  const Bytes req4 = ping4(), req6 = ping6(), orig4 = udp4(1472), orig6 = udp6(1452);
  const Bytes src6 = addr("2001:db8::1");
  EXPECT_EQ(build_icmp4_echo_reply(buf.data(), 97, kPeerMac, kOurMac, req4.data(), 84), 0u);
  EXPECT_EQ(build_icmp6_echo_reply(buf.data(), 117, kPeerMac, kOurMac, req6.data(), 104), 0u);
  EXPECT_EQ(build_icmp4_error(buf.data(), 589, kPeerMac, kOurMac, ip4("10.0.0.1"), 11, 0, orig4.data(), 1500), 0u);
  EXPECT_EQ(build_icmp6_error(buf.data(), 1293, kPeerMac, kOurMac, src6.data(), 3, 0, orig6.data(), 1500), 0u);
  EXPECT_EQ(buf, Bytes(2048, 0x77)) << "nothing written when it does not fit";
  EXPECT_EQ(build_icmp4_echo_reply(buf.data(), 98, kPeerMac, kOurMac, req4.data(), 84), 98u);
  EXPECT_EQ(build_icmp6_error(buf.data(), 1294, kPeerMac, kOurMac, src6.data(), 3, 0, orig6.data(), 1500), 1294u);
  EXPECT_FALSE(icmp4_echo_request(nullptr, 0));
  EXPECT_FALSE(icmp6_echo_request(nullptr, 0));
  EXPECT_EQ(build_icmp4_error(buf.data(), 2048, kPeerMac, kOurMac, 0, 11, 0, nullptr, 0), 0u);
  EXPECT_EQ(build_icmp6_error(buf.data(), 2048, kPeerMac, kOurMac, src6.data(), 3, 0, nullptr, 0), 0u);
}

TEST(Icmp, TruncationAndCorruptionNeverReadPastTheBytes) {
  const Bytes req4 = ping4(0x4000, {1, 1, 1, 0}), req6 = ping6(), orig4 = udp4(100), orig6 = udp6(100);
  for (std::size_t n = 0; n <= req4.size(); ++n) {
    EXPECT_EQ(is_echo4(slice(req4, 0, n)), n == req4.size()) << n;
    EXPECT_EQ(echo4(slice(req4, 0, n)).empty(), n < req4.size()) << n;
  }
  for (std::size_t n = 0; n <= req6.size(); ++n) {
    EXPECT_EQ(is_echo6(slice(req6, 0, n)), n == req6.size()) << n;
    EXPECT_EQ(echo6(slice(req6, 0, n)).empty(), n < req6.size()) << n;
  }
  for (std::size_t n = 0; n <= orig4.size(); ++n)
    EXPECT_EQ(error4(slice(orig4, 0, n)).size(), n < 20 ? 0 : 14 + 28 + n) << n;
  for (std::size_t n = 0; n <= orig6.size(); ++n)
    EXPECT_EQ(error6(slice(orig6, 0, n)).size(), n < 40 ? 0 : 14 + 48 + n) << n;
  // Random corruption and lengths, including ext-header chains: only the sanitizer judges here.
  std::mt19937 rng(1812);
  const Bytes chain6 = ipv6("2001:db8:1::2", "2001:db8:9::1", 0, cat({60, 1, 1, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                                                      44, 0, 0, 0, 0, 0, 0, 1, 58, 0, 0, 0, 0, 0, 0, 2},
                                                                     icmp_msg(128, 0, 1, 1, pattern(8))));
  std::size_t sent = 0;
  for (int i = 0; i < 5000; ++i) {
    for (const Bytes* base : {&req4, &req6, &orig4, &chain6}) {
      Bytes b = *base;
      for (int k = 0; k < 3; ++k) b[rng() % 48] = static_cast<uint8_t>(rng());
      b.resize(rng() % (b.size() + 1));
      is_echo4(b);
      is_echo6(b);
      sent += echo4(b).size() + echo6(b).size() + error4(b).size() + error6(b, 1, 3).size();
    }
  }
  EXPECT_GT(sent, 0u);
}

// ---- scapy, an independent reader and writer -------------------------------------------------

TEST(Icmp, ScapyReadsWhatWeBuildAndWeAnswerWhatScapyBuilds) {
  if (std::system("/usr/bin/python3 -c 'import scapy.all' >/dev/null 2>&1") != 0) GTEST_SKIP() << "no python3 with scapy";
  char tmpl[] = "/tmp/rs-icmp-test.XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  write_pcap(dir + "/icmp.pcap", {echo4(ping4()), echo6(ping6()), error4(udp4(1472), 3, 1), error6(udp6(1452), 1, 0)});
  // Per frame: the fields scapy decodes, what it finds in the quote, and whether the checksums
  // scapy computes itself (after deleting ours) equal ours.
  std::ofstream(dir + "/check.py")
      << "from scapy.all import *\n"
         "for p in rdpcap('" + dir + "/icmp.pcap'):\n"
         "  q = p.copy()\n"
         "  if IP in p:\n"
         "    i, c = p[IP], p[ICMP]\n"
         "    del q[IP].chksum; del q[ICMP].chksum; r = Ether(raw(q))\n"
         "    ok = r[IP].chksum == i.chksum and r[ICMP].chksum == c.chksum\n"
         "    x = '%d %d %d' % (c.id, c.seq, len(c.payload)) if c.type == 0 else '%s %s %d' % (p[IPerror].src, p[IPerror].dst, len(c.payload))\n"
         "    print(len(p), i.src, i.dst, i.ttl, i.tos, int(i.flags), i.ihl, i.len, c.type, c.code, x, ok)\n"
         "  else:\n"
         "    i, c = p[IPv6], p[IPv6].payload\n"
         "    del q[IPv6].payload.cksum; r = Ether(raw(q))\n"
         "    x = '%d %d %d' % (c.id, c.seq, len(c.data)) if c.type == 129 else '%s %s %d' % (p[IPerror6].src, p[IPerror6].dst, len(c.payload))\n"
         "    print(len(p), i.src, i.dst, i.hlim, i.tc, i.fl, i.plen, c.type, c.code, x, r[IPv6].payload.cksum == c.cksum)\n"
         "print('gen', raw(IP(src='10.0.9.9', dst='10.0.0.1') / ICMP(id=0x77, seq=3) / (b'hello-scapy' * 4)).hex())\n"
         "print('gen', raw(IPv6(src='2001:db8::9', dst='2001:db8::1') / ICMPv6EchoRequest(id=5, seq=6, data=b'x' * 20)).hex())\n";
  const std::vector<std::string> out = run_python(dir + "/check.py");
  std::filesystem::remove_all(dir);
  ASSERT_EQ(out.size(), 6u) << (out.empty() ? "" : out[0]);
  EXPECT_EQ(out[0], "98 10.0.0.1 10.0.1.2 64 0 2 5 84 0 0 4660 7 56 True");
  EXPECT_EQ(out[1], "118 2001:db8::1 2001:db8:1::2 64 0 0 64 129 0 4660 7 56 True");
  EXPECT_EQ(out[2], "590 10.0.0.1 10.0.1.2 64 192 0 5 576 3 1 10.0.1.2 10.9.0.1 548 True");
  EXPECT_EQ(out[3], "1294 2001:db8::1 2001:db8:1::2 64 192 0 1240 1 0 2001:db8:1::2 2001:db8:9::1 1232 True");
  ASSERT_EQ(out[4].rfind("gen ", 0), 0u) << out[4];
  const Bytes s4 = unhex(out[4].substr(4));
  ASSERT_TRUE(is_echo4(s4));
  const Bytes r4 = echo4(s4);
  ASSERT_EQ(r4.size(), 14u + s4.size());
  EXPECT_EQ(slice(r4, 38, s4.size() - 24), slice(s4, 24, s4.size() - 24));
  EXPECT_EQ(be16(r4, 36), sum_without(slice(r4, 34, s4.size() - 20), 2));
  ASSERT_EQ(out[5].rfind("gen ", 0), 0u) << out[5];
  const Bytes s6 = unhex(out[5].substr(4));
  ASSERT_TRUE(is_echo6(s6));
  EXPECT_EQ(check_error6(error6(s6), 3, 0, "2001:db8::9"), s6);
}

}  // namespace
}  // namespace rs::proto
