// libFuzzer target: the control plane's frame codecs (dataplane/proto: arp.h, nd.h, icmp.h,
// lldp.h), the code that reads what hosts send the switch and writes its answers. The input is a
// frame:
//   - parse_lldp at offsets 14 and 18; what it accepts is built again and must parse back equal;
//   - parse_arp and parse_nd at offsets 14 (untagged) and 18 (one VLAN tag); what they accept is
//     built again (build_arp, build_ns / build_na with the parsed fields) and must parse back to
//     the same fields;
//   - from offsets 0, 14 and 18 it is an IP datagram for the echo predicates and the echo-reply
//     and error builders, IPv4 and IPv6, at several buffer capacities. Every build returns 0 or a
//     length in [60, cap] (and the same length whenever the capacity allows it, 0 when not); what
//     it builds has right checksums, comes from the address given, quotes the original as far as
//     it may (576 / 1280 bytes), and is itself never the subject of an error nor a request.
// A violation aborts with what broke.
#include <rte_ether.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "dataplane/proto/arp.h"
#include "dataplane/proto/icmp.h"
#include "dataplane/proto/lldp.h"
#include "dataplane/proto/nd.h"
#include "tests/support/inet_sum.h"

namespace {

using namespace rs::proto;

constexpr uint32_t kCap = 1600;  // the agent's frame buffer
constexpr rte_ether_addr kPeer{{0x02, 0xaa, 0, 0, 0, 0x01}};
constexpr rte_ether_addr kUs{{0x02, 0, 0, 0, 0, 0x10}};
constexpr uint8_t kSrc6[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
constexpr uint32_t kSrc4 = 0x0101000a;  // 10.0.1.1 in network order on a little-endian host

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "fuzz_local_frames: %s\n", what);
  std::abort();
}
void check(bool ok, const char* what) {
  if (!ok) fail(what);
}

uint16_t be16(const uint8_t* p) { return static_cast<uint16_t>(p[0] << 8 | p[1]); }
bool same(const rte_ether_addr& a, const rte_ether_addr& b) { return std::memcmp(&a, &b, sizeof a) == 0; }

using rs::test::sum16;
// Over data that holds a right checksum the folded sum is all ones.
bool sums_ok(uint32_t s) { return rs::test::fold(s) == 0; }
bool icmp6_ok(const uint8_t* ip6) {
  const uint32_t len = be16(ip6 + 4);
  uint32_t s = sum16(ip6 + 8, 32) + (len >> 16) + (len & 0xFFFF) + 58;
  return sums_ok(sum16(ip6 + 40, len, s));
}

// A build's length must be 0 or in [60, cap]; with a capacity just too small it must be 0 and
// with exactly its length the same frame. `build(buf, cap)` returns the length.
template <typename Build>
uint32_t built(uint8_t* buf, Build&& build) {
  const uint32_t n = build(buf, kCap);
  if (n == 0) return 0;
  check(n >= kMinFrameLen && n <= kCap, "built length outside [60, cap]");
  uint8_t again[kCap];
  check(build(again, n - 1) == 0, "a build fit a capacity shorter than its frame");
  check(build(again, n) == n && std::memcmp(again, buf, n) == 0, "a build at exactly its capacity differs");
  return n;
}

void arp_at(const uint8_t* data, uint32_t size, uint16_t off) {
  ArpPacket a;
  const ArpError e = parse_arp(data, size, off, a);
  check(arp_error_name(e) != nullptr, "arp_error_name");
  if (e != ArpError::Ok) return;
  check(size >= off + kArpLen, "parse_arp accepted a short packet");
  check(a.op == kArpOpRequest || a.op == kArpOpReply, "parse_arp accepted an opcode");
  uint8_t buf[kCap];
  const uint32_t n = built(buf, [&](uint8_t* b, uint32_t cap) { return build_arp(b, cap, a.sha, kUs, a); });
  check(n == kMinFrameLen, "an ARP frame is 60 bytes");
  check(be16(buf + 12) == RTE_ETHER_TYPE_ARP, "ARP EtherType");
  ArpPacket b;
  check(parse_arp(buf, n, kEthHeaderLen, b) == ArpError::Ok, "a built ARP does not parse");
  check(b.op == a.op && same(b.sha, a.sha) && b.spa == a.spa && same(b.tha, a.tha) && b.tpa == a.tpa,
        "a built ARP parses back different");
  check(arp_is_gratuitous(b) == arp_is_gratuitous(a), "gratuitous changed");
}

void lldp_at(const uint8_t* data, uint32_t size, uint16_t off) {
  LldpInfo info;
  const LldpError e = parse_lldp(data, size, off, info);
  check(lldp_error_name(e) != nullptr, "lldp_error_name");
  if (e != LldpError::Ok) return;
  (void)chassis_id_text(info);
  (void)port_id_text(info);
  // Parsed values may be what build refuses (a TC of 15, a cap over 15): only what builds must
  // come back as it was, the parsed struct equal field by field.
  uint8_t buf[kCap];
  const uint32_t n = build_lldp(buf, sizeof buf, kUs, info);
  if (n == 0) return;
  check(n >= kMinFrameLen && n <= sizeof buf, "an LLDP frame's length");
  LldpInfo back;
  check(parse_lldp(buf, n, kEthHeaderLen, back) == LldpError::Ok, "a built LLDPDU does not parse");
  check(back == info, "a built LLDPDU parses back different");
}

void nd_at(const uint8_t* data, uint32_t size, uint16_t off) {
  NdPacket nd;
  const NdError e = parse_nd(data, size, off, nd);
  check(nd_error_name(e) != nullptr, "nd_error_name");
  if (e != NdError::Ok) return;
  check(nd.type == kIcmp6TypeNs || nd.type == kIcmp6TypeNa, "parse_nd accepted a type");
  check(!ipv6_is_multicast(nd.target), "parse_nd accepted a multicast target");
  check(nd.type == kIcmp6TypeNa || nd.flags == 0, "an NS with flags");
  check((nd.flags & 0x1f) == 0, "flags beyond R/S/O");
  const rte_ether_addr ll = nd.has_lladdr ? nd.lladdr : kPeer;
  uint8_t buf[kCap];
  uint32_t n;
  bool unicast = false;
  if (nd.type == kIcmp6TypeNs) {
    unicast = !ipv6_is_multicast(nd.dst);
    check(!(nd.has_lladdr && ipv6_is_unspecified(nd.src)), "an SLLA from ::");
    n = built(buf, [&](uint8_t* b, uint32_t cap) { return build_ns(b, cap, ll, nd.src, nd.target, unicast, kPeer); });
  } else {
    n = built(buf, [&](uint8_t* b, uint32_t cap) { return build_na(b, cap, kPeer, ll, nd.src, nd.dst, nd.target, nd.flags); });
  }
  check(n != 0, "an NS/NA was not built with room for it");
  check(be16(buf + 12) == RTE_ETHER_TYPE_IPV6, "ND EtherType");
  check(icmp6_ok(buf + kEthHeaderLen), "a built NS/NA has a wrong checksum");
  NdPacket b;
  check(parse_nd(buf, n, kEthHeaderLen, b) == NdError::Ok, "a built NS/NA does not parse");
  check(b.type == nd.type && std::memcmp(b.src, nd.src, 16) == 0 && std::memcmp(b.target, nd.target, 16) == 0 && b.flags == nd.flags,
        "a built NS/NA parses back different");
  if (nd.type == kIcmp6TypeNa) {
    check(std::memcmp(b.dst, nd.dst, 16) == 0, "NA destination");
    check(b.has_lladdr && same(b.lladdr, ll), "NA TLLA");
  } else {
    const bool dad = ipv6_is_unspecified(nd.src);
    check(b.has_lladdr == !dad && (dad || same(b.lladdr, ll)), "NS SLLA");
    uint8_t want[16];
    if (unicast) std::memcpy(want, nd.target, 16);
    else solicited_node(nd.target, want);
    check(std::memcmp(b.dst, want, 16) == 0, "NS destination");
    rte_ether_addr mac;
    if (unicast) mac = kPeer;
    else multicast_mac(want, mac);
    check(std::memcmp(buf, &mac, 6) == 0, "NS Ethernet destination");
  }
}

void icmp4_at(const uint8_t* ip, uint32_t len) {
  uint8_t buf[kCap];
  const bool request = icmp4_echo_request(ip, len);
  uint32_t n = built(buf, [&](uint8_t* b, uint32_t cap) { return build_icmp4_echo_reply(b, cap, kPeer, kUs, ip, len); });
  check(n == 0 || request, "an echo reply to what is not an echo request");
  if (n) {
    const uint8_t* r = buf + kEthHeaderLen;
    const uint32_t total = be16(r + 2);
    const uint32_t req_hl = 4u * (ip[0] & 0x0f);
    check(r[0] == 0x45 && sums_ok(sum16(r, 20)), "echo reply IPv4 header");
    check(total == 20 + be16(ip + 2) - req_hl && n == std::max<uint32_t>(kMinFrameLen, kEthHeaderLen + total), "echo reply length");
    check(r[20] == kIcmp4EchoReply && r[21] == 0 && sums_ok(sum16(r + 20, total - 20)), "echo reply ICMP");
    check(std::memcmp(r + 12, ip + 16, 4) == 0 && std::memcmp(r + 16, ip + 12, 4) == 0, "echo reply addresses");
    check(std::memcmp(r + 24, ip + req_hl + 4, total - 24) == 0, "echo reply id, sequence or data");
    check(!icmp4_echo_request(r, n - kEthHeaderLen), "an echo reply is a request");
  }
  for (const auto& tc : {std::pair<uint8_t, uint8_t>{kIcmp4TimeExceeded, 0}, {kIcmp4Unreachable, 1}, {kIcmp4Unreachable, 9}}) {
    const uint8_t type = tc.first, code = tc.second;
    n = built(buf, [&](uint8_t* b, uint32_t cap) { return build_icmp4_error(b, cap, kPeer, kUs, kSrc4, type, code, ip, len); });
    if (!n) continue;
    check(code <= 3, "an error of a code it does not know");
    const uint8_t* r = buf + kEthHeaderLen;
    const uint32_t total = be16(r + 2);
    check(r[0] == 0x45 && sums_ok(sum16(r, 20)) && r[9] == 1, "error IPv4 header");
    check(total <= kIcmp4ErrorMaxLen && total >= 20 + 8 + 20, "error length");
    check(n == std::max<uint32_t>(kMinFrameLen, kEthHeaderLen + total), "error frame length");
    check(r[20] == type && r[21] == code && sums_ok(sum16(r + 20, total - 20)), "error ICMP header");
    check(std::memcmp(r + 12, &kSrc4, 4) == 0 && std::memcmp(r + 16, ip + 12, 4) == 0, "error addresses");
    const uint32_t quote = total - 28;
    check(quote <= len && std::memcmp(r + 28, ip, quote) == 0, "error quote");
    check(quote == std::min<uint32_t>({static_cast<uint32_t>(be16(ip + 2)), len, kIcmp4ErrorMaxLen - 28}), "error quotes less than it may");
    // Never an error about an error.
    uint8_t again[kCap];
    check(build_icmp4_error(again, kCap, kPeer, kUs, kSrc4, kIcmp4TimeExceeded, 0, r, n - kEthHeaderLen) == 0,
          "an error about an ICMP error");
  }
}

void icmp6_at(const uint8_t* ip6, uint32_t len) {
  uint8_t buf[kCap];
  const bool request = icmp6_echo_request(ip6, len);
  uint32_t n = built(buf, [&](uint8_t* b, uint32_t cap) { return build_icmp6_echo_reply(b, cap, kPeer, kUs, ip6, len); });
  check(n == 0 || request, "an ICMPv6 echo reply to what is not a request");
  if (n) {
    const uint8_t* r = buf + kEthHeaderLen;
    const uint32_t plen = be16(r + 4);
    check(plen == be16(ip6 + 4) && n == std::max<uint32_t>(kMinFrameLen, kEthHeaderLen + 40 + plen), "ICMPv6 echo reply length");
    check(r[6] == kIpProtoIcmpv6 && r[40] == kIcmp6EchoReply && icmp6_ok(r), "ICMPv6 echo reply header or checksum");
    check(std::memcmp(r + 8, ip6 + 24, 16) == 0 && std::memcmp(r + 24, ip6 + 8, 16) == 0, "ICMPv6 echo reply addresses");
    check(std::memcmp(r + 44, ip6 + 44, plen - 4) == 0, "ICMPv6 echo reply id, sequence or data");
    check(!icmp6_echo_request(r, n - kEthHeaderLen), "an ICMPv6 echo reply is a request");
  }
  for (const auto& tc : {std::pair<uint8_t, uint8_t>{kIcmp6TimeExceeded, 0}, {kIcmp6Unreachable, 0}, {kIcmp6Unreachable, 7}}) {
    const uint8_t type = tc.first, code = tc.second;
    n = built(buf, [&](uint8_t* b, uint32_t cap) { return build_icmp6_error(b, cap, kPeer, kUs, kSrc6, type, code, ip6, len); });
    if (!n) continue;
    check(code <= 6, "an ICMPv6 error of a code it does not know");
    const uint8_t* r = buf + kEthHeaderLen;
    const uint32_t plen = be16(r + 4);
    check(r[0] >> 4 == 6 && r[6] == kIpProtoIcmpv6 && icmp6_ok(r), "ICMPv6 error header or checksum");
    check(40 + plen <= kIcmp6ErrorMaxLen && n == std::max<uint32_t>(kMinFrameLen, kEthHeaderLen + 40 + plen), "ICMPv6 error length");
    check(r[40] == type && r[41] == code, "ICMPv6 error type");
    check(std::memcmp(r + 8, kSrc6, 16) == 0 && std::memcmp(r + 24, ip6 + 8, 16) == 0, "ICMPv6 error addresses");
    const uint32_t quote = plen - 8;
    check(quote <= len && std::memcmp(r + 48, ip6, quote) == 0, "ICMPv6 error quote");
    check(quote == std::min<uint32_t>({40u + be16(ip6 + 4), len, kIcmp6ErrorMaxLen - 48}), "ICMPv6 error quotes less than it may");
    uint8_t again[kCap];
    check(build_icmp6_error(again, kCap, kPeer, kUs, kSrc6, kIcmp6TimeExceeded, 0, r, n - kEthHeaderLen) == 0,
          "an ICMPv6 error about an ICMPv6 error");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 65535) return 0;
  const auto len = static_cast<uint32_t>(size);
  for (const uint16_t off : {uint16_t{14}, uint16_t{18}}) {
    arp_at(data, len, off);
    nd_at(data, len, off);
    lldp_at(data, len, off);
  }
  // Offsets past the input are parse errors, never reads.
  arp_at(data, len, 0xFFFF);
  nd_at(data, len, 0xFFFF);
  for (const uint32_t off : {0u, 14u, 18u}) {
    if (off > len) break;
    // Each datagram gets its own copy of exactly its bytes, so a read past them is ASan's to see.
    const uint32_t n = len - off;
    uint8_t* ip = static_cast<uint8_t*>(std::malloc(std::max<uint32_t>(n, 1)));
    if (!ip) return 0;
    if (n) std::memcpy(ip, data + off, n);
    icmp4_at(ip, n);
    icmp6_at(ip, n);
    std::free(ip);
  }
  return 0;
}
