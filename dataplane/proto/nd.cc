// IPv6 neighbour discovery wire format (RFC 4861 NS/NA) and the ICMPv6 checksum: the one place
// that knows their byte layout.
#include "dataplane/proto/nd.h"

#include <rte_ip.h>

#include <cstring>

#include "dataplane/proto/arp.h"

namespace rs::proto {
namespace {

// Offsets in the IPv6 fixed header.
constexpr uint32_t kOffPayloadLen = 4;
constexpr uint32_t kOffNextHeader = 6;
constexpr uint32_t kOffHopLimit = 7;
constexpr uint32_t kOffSrc = 8;
constexpr uint32_t kOffDst = 24;

// Offsets in an NS/NA message.
constexpr uint32_t kOffType = 0;
constexpr uint32_t kOffCode = 1;
constexpr uint32_t kOffChecksum = 2;
constexpr uint32_t kOffFlags = 4;  // NA only; the rest of the 32-bit word is reserved
constexpr uint32_t kOffTarget = 8;
constexpr uint32_t kNdFixedLen = 24;  // the minimum ICMPv6 length of RFC 4861 7.1.1/7.1.2

constexpr uint8_t kOptSourceLladdr = 1;
constexpr uint8_t kOptTargetLladdr = 2;
constexpr uint32_t kLladdrOptLen = 8;  // type, length (in 8-byte units), 6-byte MAC
constexpr uint8_t kHopLimitNd = 255;   // proves the sender is on-link (RFC 4861 7.1)

// Writes an NS/NA: header, target and one link-layer address option when `opt_type` != 0,
// then the checksum. `icmp` must hold kNdFixedLen (+ kLladdrOptLen) bytes.
void put_nd(uint8_t* icmp, uint8_t type, uint8_t flags, const uint8_t target[16], uint8_t opt_type,
            const rte_ether_addr& lladdr, const uint8_t src[16], const uint8_t dst[16]) {
  std::memset(icmp, 0, kNdFixedLen);
  icmp[kOffType] = type;
  icmp[kOffFlags] = flags;
  std::memcpy(icmp + kOffTarget, target, 16);
  uint32_t len = kNdFixedLen;
  if (opt_type != 0) {
    icmp[len] = opt_type;
    icmp[len + 1] = kLladdrOptLen / 8;
    std::memcpy(icmp + len + 2, lladdr.addr_bytes, RTE_ETHER_ADDR_LEN);
    len += kLladdrOptLen;
  }
  const uint16_t ck = icmp6_checksum(src, dst, icmp, len);
  std::memcpy(icmp + kOffChecksum, &ck, 2);
}

}  // namespace

const char* nd_error_name(NdError e) {
  switch (e) {
    case NdError::Ok: return "ok";
    case NdError::Short: return "short";
    case NdError::NotIcmpv6: return "not_icmpv6";
    case NdError::NotNd: return "not_nd";
    case NdError::BadHopLimit: return "bad_hop_limit";
    case NdError::BadCode: return "bad_code";
    case NdError::BadChecksum: return "bad_checksum";
    case NdError::BadOption: return "bad_option";
    case NdError::BadTarget: return "bad_target";
  }
  return "unknown";
}

NdError parse_nd(const uint8_t* frame, uint32_t len, uint16_t l3_offset, NdPacket& out) {
  if (l3_offset > len || len - l3_offset < kIpv6HeaderLen) return NdError::Short;
  const uint8_t* ip = frame + l3_offset;
  if (ip[0] >> 4 != 6 || ip[kOffNextHeader] != kIpProtoIcmpv6) return NdError::NotIcmpv6;
  const uint32_t icmp_len = load_be16(ip + kOffPayloadLen);
  if (icmp_len > len - l3_offset - kIpv6HeaderLen) return NdError::Short;
  if (icmp_len == 0) return NdError::Short;
  const uint8_t* icmp = ip + kIpv6HeaderLen;
  const uint8_t type = icmp[kOffType];
  if (type != kIcmp6TypeNs && type != kIcmp6TypeNa) return NdError::NotNd;
  if (icmp_len < kNdFixedLen) return NdError::Short;
  if (ip[kOffHopLimit] != kHopLimitNd) return NdError::BadHopLimit;
  if (icmp[kOffCode] != 0) return NdError::BadCode;
  if (icmp6_checksum(ip + kOffSrc, ip + kOffDst, icmp, icmp_len) != 0) return NdError::BadChecksum;
  if (ipv6_is_multicast(icmp + kOffTarget)) return NdError::BadTarget;

  // Options: type, length in 8-byte units (never 0, RFC 4861 4.6), all inside the message.
  // Unknown options are skipped; of several link-layer address options the first counts.
  const uint8_t wanted = type == kIcmp6TypeNs ? kOptSourceLladdr : kOptTargetLladdr;
  bool has_lladdr = false;
  rte_ether_addr lladdr{};
  for (uint32_t off = kNdFixedLen; off < icmp_len;) {
    if (icmp_len - off < 2) return NdError::BadOption;
    const uint32_t opt_len = 8u * icmp[off + 1];
    if (opt_len == 0 || opt_len > icmp_len - off) return NdError::BadOption;
    if (icmp[off] == wanted && !has_lladdr) {  // opt_len >= 8 covers the 6-byte address
      has_lladdr = true;
      std::memcpy(lladdr.addr_bytes, icmp + off + 2, RTE_ETHER_ADDR_LEN);
    }
    off += opt_len;
  }
  // A DAD probe comes from ::, and no one may learn a MAC for :: (RFC 4861 7.1.1).
  if (type == kIcmp6TypeNs && has_lladdr && ipv6_is_unspecified(ip + kOffSrc)) return NdError::BadOption;

  out.type = type;
  std::memcpy(out.src, ip + kOffSrc, 16);
  std::memcpy(out.dst, ip + kOffDst, 16);
  std::memcpy(out.target, icmp + kOffTarget, 16);
  out.has_lladdr = has_lladdr;
  out.lladdr = lladdr;
  out.flags = type == kIcmp6TypeNa ? static_cast<uint8_t>(icmp[kOffFlags] & 0xe0) : 0;
  return NdError::Ok;
}

uint32_t build_ns(uint8_t* buf, uint32_t cap, const rte_ether_addr& eth_src, const uint8_t src_ip[16],
                  const uint8_t target[16], bool unicast, const rte_ether_addr& unicast_mac) {
  const bool dad = ipv6_is_unspecified(src_ip);
  const uint32_t icmp_len = kNdFixedLen + (dad ? 0 : kLladdrOptLen);
  uint8_t dst_ip[16];
  rte_ether_addr dst_mac;
  if (unicast) {
    std::memcpy(dst_ip, target, 16);
    dst_mac = unicast_mac;
  } else {
    solicited_node(target, dst_ip);
    multicast_mac(dst_ip, dst_mac);
  }
  uint32_t frame_len = 0;
  uint8_t* ip = start_frame(buf, cap, dst_mac, eth_src, RTE_ETHER_TYPE_IPV6, kIpv6HeaderLen + icmp_len, frame_len);
  if (ip == nullptr) return 0;
  put_ipv6_icmp6_header(ip, 0, static_cast<uint16_t>(icmp_len), kHopLimitNd, src_ip, dst_ip);
  put_nd(ip + kIpv6HeaderLen, kIcmp6TypeNs, 0, target, dad ? 0 : kOptSourceLladdr, eth_src, src_ip, dst_ip);
  return frame_len;
}

uint32_t build_na(uint8_t* buf, uint32_t cap, const rte_ether_addr& eth_dst, const rte_ether_addr& eth_src,
                  const uint8_t src_ip[16], const uint8_t dst_ip[16], const uint8_t target[16], uint8_t flags) {
  const uint32_t icmp_len = kNdFixedLen + kLladdrOptLen;
  uint32_t frame_len = 0;
  uint8_t* ip = start_frame(buf, cap, eth_dst, eth_src, RTE_ETHER_TYPE_IPV6, kIpv6HeaderLen + icmp_len, frame_len);
  if (ip == nullptr) return 0;
  put_ipv6_icmp6_header(ip, 0, static_cast<uint16_t>(icmp_len), kHopLimitNd, src_ip, dst_ip);
  const uint8_t rso = flags & (kNaFlagRouter | kNaFlagSolicited | kNaFlagOverride);
  put_nd(ip + kIpv6HeaderLen, kIcmp6TypeNa, rso, target, kOptTargetLladdr, eth_src, src_ip, dst_ip);
  return frame_len;
}

void solicited_node(const uint8_t ip[16], uint8_t out[16]) {
  static constexpr uint8_t kPrefix[13] = {0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0xff};
  uint8_t low[3];  // read before writing: `out` may be `ip`
  std::memcpy(low, ip + 13, 3);
  std::memcpy(out, kPrefix, sizeof kPrefix);
  std::memcpy(out + 13, low, 3);
}

void multicast_mac(const uint8_t ip6[16], rte_ether_addr& out) {
  out.addr_bytes[0] = 0x33;
  out.addr_bytes[1] = 0x33;
  std::memcpy(out.addr_bytes + 2, ip6 + 12, 4);
}

uint16_t icmp6_checksum(const uint8_t src[16], const uint8_t dst[16], const uint8_t* icmp, uint32_t len) {
  // Pseudo-header: source, destination, 32-bit upper-layer length, 3 zero bytes, next header.
  const uint8_t tail[8] = {static_cast<uint8_t>(len >> 24), static_cast<uint8_t>(len >> 16),
                           static_cast<uint8_t>(len >> 8), static_cast<uint8_t>(len), 0, 0, 0, kIpProtoIcmpv6};
  // Each partial sum is a folded 16-bit value and every piece but the last has an even length,
  // so adding them in host order and folding gives the RFC 1071 sum.
  uint32_t sum = rte_raw_cksum(src, 16);
  sum += rte_raw_cksum(dst, 16);
  sum += rte_raw_cksum(tail, sizeof tail);
  sum += rte_raw_cksum(icmp, len);
  sum = (sum & 0xffff) + (sum >> 16);
  sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint16_t>(~sum);
}

bool ipv6_is_unspecified(const uint8_t a[16]) {
  static constexpr uint8_t kZero[16] = {};
  return std::memcmp(a, kZero, 16) == 0;
}

void put_ipv6_icmp6_header(uint8_t* ip6, uint8_t traffic_class, uint16_t payload_len, uint8_t hop_limit,
                           const uint8_t src[16], const uint8_t dst[16]) {
  ip6[0] = static_cast<uint8_t>(0x60 | traffic_class >> 4);
  ip6[1] = static_cast<uint8_t>((traffic_class & 0x0f) << 4);  // flow label 0
  ip6[2] = 0;
  ip6[3] = 0;
  store_be16(ip6 + kOffPayloadLen, payload_len);
  ip6[kOffNextHeader] = kIpProtoIcmpv6;
  ip6[kOffHopLimit] = hop_limit;
  std::memmove(ip6 + kOffSrc, src, 16);
  std::memmove(ip6 + kOffDst, dst, 16);
}

}  // namespace rs::proto
