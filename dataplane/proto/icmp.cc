// ICMP (RFC 792, RFC 1812) and ICMPv6 (RFC 4443) echo and error messages: the one place that
// knows their byte layout and when they may be sent.
#include "dataplane/proto/icmp.h"

#include <rte_ip.h>

#include <algorithm>
#include <cstring>

#include "dataplane/proto/arp.h"
#include "dataplane/proto/nd.h"

namespace rs::proto {
namespace {

// Offsets in the IPv4 header.
constexpr uint32_t kOffTos = 1;
constexpr uint32_t kOffTotalLen = 2;
constexpr uint32_t kOffId = 4;
constexpr uint32_t kOffFrag = 6;
constexpr uint32_t kOffTtl = 8;
constexpr uint32_t kOffProto = 9;
constexpr uint32_t kOffCksum4 = 10;
constexpr uint32_t kOffSrc4 = 12;
constexpr uint32_t kOffDst4 = 16;
constexpr uint32_t kIpv4HeaderLen = 20;
// Offsets in the IPv6 header.
constexpr uint32_t kOffPayloadLen6 = 4;
constexpr uint32_t kOffNext6 = 6;
constexpr uint32_t kOffSrc6 = 8;
constexpr uint32_t kOffDst6 = 24;
// IPv6 extension headers that may precede the upper layer (RFC 8200 4.1).
constexpr uint8_t kExtHopByHop = 0;
constexpr uint8_t kExtRouting = 43;
constexpr uint8_t kExtFragment = 44;
constexpr uint8_t kExtDestOptions = 60;

constexpr uint32_t kIcmpHeaderLen = 8;  // type, code, checksum, then id/seq or the unused word
constexpr uint8_t kIpProtoIcmp = 1;
constexpr uint8_t kTtlReply = 64;       // Linux's default TTL / hop limit
constexpr uint8_t kTosError = 0xc0;     // DSCP CS6, ECN 0
constexpr uint16_t kDf = RTE_IPV4_HDR_DF_FLAG;
constexpr uint16_t kFragMask = RTE_IPV4_HDR_MF_FLAG | RTE_IPV4_HDR_OFFSET_MASK;

// A valid ones'-complement checksum makes the sum over the covered bytes all ones.
bool sums_to_ones(const uint8_t* p, uint32_t len) { return rte_raw_cksum(p, len) == 0xffff; }
uint16_t checksum(const uint8_t* p, uint32_t len) { return static_cast<uint16_t>(~rte_raw_cksum(p, len)); }

// IPv4 addresses are compared by their first byte, as stored.
bool ipv4_names_one_host(const uint8_t* a) {
  return a[0] != 0 && a[0] != 127 && a[0] < 224;  // not 0/8, loopback, multicast or class E
}
bool ipv4_group_dest(const uint8_t* a) {  // multicast or the limited broadcast
  return (a[0] >= 224 && a[0] < 240) || (a[0] == 255 && a[1] == 255 && a[2] == 255 && a[3] == 255);
}

// The IPv4 header's length and the datagram's, when the header is well formed and the
// datagram's bytes are present up to `present` (total length may then be shorter).
bool ipv4_lengths(const uint8_t* ip, uint32_t present, uint32_t& hl, uint32_t& total) {
  if (ip == nullptr || present < kIpv4HeaderLen || ip[0] >> 4 != 4) return false;
  hl = 4u * (ip[0] & 0x0f);
  total = load_be16(ip + kOffTotalLen);
  return hl >= kIpv4HeaderLen && hl <= total && hl <= present;
}

// Writes a 20-byte IPv4 header carrying ICMP, with its checksum; addresses in network order.
void put_ipv4(uint8_t* ip, uint8_t tos, uint16_t total, uint16_t id, uint16_t frag, const uint8_t* src,
              const uint8_t* dst) {
  ip[0] = 0x45;
  ip[kOffTos] = tos;
  store_be16(ip + kOffTotalLen, total);
  store_be16(ip + kOffId, id);
  store_be16(ip + kOffFrag, frag);
  ip[kOffTtl] = kTtlReply;
  ip[kOffProto] = kIpProtoIcmp;
  store_be16(ip + kOffCksum4, 0);
  std::memcpy(ip + kOffSrc4, src, 4);
  std::memcpy(ip + kOffDst4, dst, 4);
  const uint16_t ck = checksum(ip, kIpv4HeaderLen);
  std::memcpy(ip + kOffCksum4, &ck, 2);
}

// The ICMPv6 type the original carries, through its extension headers (RFC 8200 4): -1 when it
// carries no ICMPv6 or the type cannot be known (a non-first fragment, a chain running past the
// bytes present), -2 when it carries ICMPv6 whose type byte is not present.
int icmp6_type_inside(const uint8_t* ip6, uint32_t dgram) {
  uint8_t next = ip6[kOffNext6];
  uint32_t off = kIpv6HeaderLen;
  for (int headers = 0; headers < 16; ++headers) {
    if (next == kIpProtoIcmpv6) return off < dgram ? ip6[off] : -2;
    if (next == kExtHopByHop || next == kExtRouting || next == kExtDestOptions) {
      if (dgram - off < 2) return -1;  // off <= dgram holds: every step is checked
      const uint32_t ext_len = 8u * (ip6[off + 1] + 1u);
      next = ip6[off];
      if (ext_len > dgram - off) return -1;
      off += ext_len;
    } else if (next == kExtFragment) {
      if (dgram - off < 8) return -1;
      if ((load_be16(ip6 + off + 2) & 0xfff8) != 0) return -1;
      next = ip6[off];
      off += 8;
    } else {
      return -1;
    }
  }
  return -1;
}

bool icmp4_error_type(uint8_t t) { return t == 3 || t == 4 || t == 5 || t == 11 || t == 12; }
bool icmp6_no_error_about(int t) { return t == -2 || (t >= 0 && (t < 128 || (t >= 133 && t <= 137))); }

}  // namespace

bool icmp4_echo_request(const uint8_t* ip, uint32_t ip_len) {
  uint32_t hl = 0, total = 0;
  if (!ipv4_lengths(ip, ip_len, hl, total) || total > ip_len) return false;
  if (!sums_to_ones(ip, hl) || ip[kOffProto] != kIpProtoIcmp) return false;
  if ((load_be16(ip + kOffFrag) & kFragMask) != 0) return false;
  if (!ipv4_names_one_host(ip + kOffSrc4)) return false;
  const uint8_t* icmp = ip + hl;
  const uint32_t icmp_len = total - hl;
  return icmp_len >= kIcmpHeaderLen && icmp[0] == kIcmp4EchoRequest && icmp[1] == 0 && sums_to_ones(icmp, icmp_len);
}

bool icmp6_echo_request(const uint8_t* ip6, uint32_t ip_len) {
  if (ip6 == nullptr || ip_len < kIpv6HeaderLen || ip6[0] >> 4 != 6 || ip6[kOffNext6] != kIpProtoIcmpv6) return false;
  const uint32_t icmp_len = load_be16(ip6 + kOffPayloadLen6);
  if (icmp_len > ip_len - kIpv6HeaderLen || icmp_len < kIcmpHeaderLen) return false;
  const uint8_t* src = ip6 + kOffSrc6;
  if (ipv6_is_unspecified(src) || ipv6_is_multicast(src)) return false;
  const uint8_t* icmp = ip6 + kIpv6HeaderLen;
  return icmp[0] == kIcmp6EchoRequest && icmp[1] == 0 && icmp6_checksum(src, ip6 + kOffDst6, icmp, icmp_len) == 0;
}

uint32_t build_icmp4_echo_reply(uint8_t* buf, uint32_t cap, const rte_ether_addr& eth_dst,
                                const rte_ether_addr& eth_src, const uint8_t* req_ip, uint32_t req_len) {
  if (!icmp4_echo_request(req_ip, req_len) || ipv4_group_dest(req_ip + kOffDst4)) return 0;
  const uint32_t hl = 4u * (req_ip[0] & 0x0f);
  const uint32_t icmp_len = load_be16(req_ip + kOffTotalLen) - hl;
  const uint32_t ip_len = kIpv4HeaderLen + icmp_len;  // <= the request's total length
  uint32_t frame_len = 0;
  uint8_t* ip = start_frame(buf, cap, eth_dst, eth_src, RTE_ETHER_TYPE_IPV4, ip_len, frame_len);
  if (ip == nullptr) return 0;
  const uint16_t frag = load_be16(req_ip + kOffFrag) & kDf;
  put_ipv4(ip, 0, static_cast<uint16_t>(ip_len), load_be16(req_ip + kOffId), frag, req_ip + kOffDst4,
           req_ip + kOffSrc4);
  uint8_t* icmp = ip + kIpv4HeaderLen;
  std::memcpy(icmp, req_ip + hl, icmp_len);  // id, sequence and data stay
  icmp[0] = kIcmp4EchoReply;
  store_be16(icmp + 2, 0);
  const uint16_t ck = checksum(icmp, icmp_len);
  std::memcpy(icmp + 2, &ck, 2);
  return frame_len;
}

uint32_t build_icmp6_echo_reply(uint8_t* buf, uint32_t cap, const rte_ether_addr& eth_dst,
                                const rte_ether_addr& eth_src, const uint8_t* req_ip6, uint32_t req_len) {
  if (!icmp6_echo_request(req_ip6, req_len) || ipv6_is_multicast(req_ip6 + kOffDst6)) return 0;
  const uint32_t icmp_len = load_be16(req_ip6 + kOffPayloadLen6);
  uint32_t frame_len = 0;
  uint8_t* ip6 = start_frame(buf, cap, eth_dst, eth_src, RTE_ETHER_TYPE_IPV6, kIpv6HeaderLen + icmp_len, frame_len);
  if (ip6 == nullptr) return 0;
  const uint8_t* src = req_ip6 + kOffDst6;
  const uint8_t* dst = req_ip6 + kOffSrc6;
  put_ipv6_icmp6_header(ip6, 0, static_cast<uint16_t>(icmp_len), kTtlReply, src, dst);
  uint8_t* icmp = ip6 + kIpv6HeaderLen;
  std::memcpy(icmp, req_ip6 + kIpv6HeaderLen, icmp_len);
  icmp[0] = kIcmp6EchoReply;
  store_be16(icmp + 2, 0);
  const uint16_t ck = icmp6_checksum(src, dst, icmp, icmp_len);
  std::memcpy(icmp + 2, &ck, 2);
  return frame_len;
}

uint32_t build_icmp4_error(uint8_t* buf, uint32_t cap, const rte_ether_addr& eth_dst, const rte_ether_addr& eth_src,
                           uint32_t src_ip, uint8_t type, uint8_t code, const uint8_t* orig_ip, uint32_t orig_len) {
  const bool known = (type == kIcmp4TimeExceeded && code <= 1) || (type == kIcmp4Unreachable && code <= 3);
  uint32_t hl = 0, total = 0;
  if (!known || !ipv4_lengths(orig_ip, orig_len, hl, total)) return 0;
  const uint32_t dgram = std::min(total, orig_len);  // a truncated original is quoted as far as it goes
  if (!ipv4_names_one_host(orig_ip + kOffSrc4) || ipv4_group_dest(orig_ip + kOffDst4)) return 0;
  if ((load_be16(orig_ip + kOffFrag) & RTE_IPV4_HDR_OFFSET_MASK) != 0) return 0;
  if (orig_ip[kOffProto] == kIpProtoIcmp && (dgram <= hl || icmp4_error_type(orig_ip[hl]))) return 0;

  const uint32_t quote = std::min(dgram, kIcmp4ErrorMaxLen - kIpv4HeaderLen - kIcmpHeaderLen);
  const uint32_t ip_len = kIpv4HeaderLen + kIcmpHeaderLen + quote;
  uint32_t frame_len = 0;
  uint8_t* ip = start_frame(buf, cap, eth_dst, eth_src, RTE_ETHER_TYPE_IPV4, ip_len, frame_len);
  if (ip == nullptr) return 0;
  uint8_t src[4];
  std::memcpy(src, &src_ip, 4);
  put_ipv4(ip, kTosError, static_cast<uint16_t>(ip_len), load_be16(orig_ip + kOffId), 0, src, orig_ip + kOffSrc4);
  uint8_t* icmp = ip + kIpv4HeaderLen;
  std::memset(icmp, 0, kIcmpHeaderLen);  // checksum 0 while summing, unused word 0
  icmp[0] = type;
  icmp[1] = code;
  std::memcpy(icmp + kIcmpHeaderLen, orig_ip, quote);
  const uint16_t ck = checksum(icmp, kIcmpHeaderLen + quote);
  std::memcpy(icmp + 2, &ck, 2);
  return frame_len;
}

uint32_t build_icmp6_error(uint8_t* buf, uint32_t cap, const rte_ether_addr& eth_dst, const rte_ether_addr& eth_src,
                           const uint8_t src_ip[16], uint8_t type, uint8_t code, const uint8_t* orig_ip6,
                           uint32_t orig_len) {
  const bool known = (type == kIcmp6TimeExceeded && code <= 1) || (type == kIcmp6Unreachable && code <= 6);
  if (!known || orig_ip6 == nullptr || orig_len < kIpv6HeaderLen || orig_ip6[0] >> 4 != 6) return 0;
  const uint32_t dgram = std::min(kIpv6HeaderLen + load_be16(orig_ip6 + kOffPayloadLen6), orig_len);
  const uint8_t* orig_src = orig_ip6 + kOffSrc6;
  if (ipv6_is_unspecified(orig_src) || ipv6_is_multicast(orig_src) || ipv6_is_multicast(orig_ip6 + kOffDst6)) return 0;
  if (icmp6_no_error_about(icmp6_type_inside(orig_ip6, dgram))) return 0;

  const uint32_t quote = std::min(dgram, kIcmp6ErrorMaxLen - kIpv6HeaderLen - kIcmpHeaderLen);
  const uint32_t icmp_len = kIcmpHeaderLen + quote;
  uint32_t frame_len = 0;
  uint8_t* ip6 = start_frame(buf, cap, eth_dst, eth_src, RTE_ETHER_TYPE_IPV6, kIpv6HeaderLen + icmp_len, frame_len);
  if (ip6 == nullptr) return 0;
  put_ipv6_icmp6_header(ip6, kTosError, static_cast<uint16_t>(icmp_len), kTtlReply, src_ip, orig_src);
  uint8_t* icmp = ip6 + kIpv6HeaderLen;
  std::memset(icmp, 0, kIcmpHeaderLen);
  icmp[0] = type;
  icmp[1] = code;
  std::memcpy(icmp + kIcmpHeaderLen, orig_ip6, quote);
  const uint16_t ck = icmp6_checksum(src_ip, orig_src, icmp, icmp_len);
  std::memcpy(icmp + 2, &ck, 2);
  return frame_len;
}

}  // namespace rs::proto
