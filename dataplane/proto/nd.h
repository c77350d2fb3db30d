// IPv6 neighbour discovery (RFC 4861 Neighbor Solicitation and Advertisement) for the
// control-plane thread that answers for the switch's own port addresses: validate and decode a
// received NS/NA, build an NS (resolution or unreachability probe) or an NA. Also the IPv6 and
// ICMPv6 pieces the ICMPv6 echo and error builders (icmp.h) share.
#pragma once
#include <rte_ether.h>

#include <cstdint>

namespace rs::proto {

inline constexpr uint8_t kIcmp6TypeNs = 135;
inline constexpr uint8_t kIcmp6TypeNa = 136;
inline constexpr uint8_t kNaFlagRouter = 0x80;
inline constexpr uint8_t kNaFlagSolicited = 0x40;
inline constexpr uint8_t kNaFlagOverride = 0x20;
inline constexpr uint32_t kIpv6HeaderLen = 40;
inline constexpr uint8_t kIpProtoIcmpv6 = 58;

struct NdPacket {
  uint8_t type = 0;  // 135 NS, 136 NA
  uint8_t src[16]{};  // IPv6 source and destination
  uint8_t dst[16]{};
  uint8_t target[16]{};
  bool has_lladdr = false;  // NS: Source Link-Layer Address option; NA: Target Link-Layer Address
  rte_ether_addr lladdr{};
  uint8_t flags = 0;  // NA: R/S/O as the top three bits (kNaFlag*); 0 for an NS
};

// Why an NS/NA was rejected; Ok means `out` is filled in. NotIcmpv6 also covers a header whose
// version is not 6; Short covers an ICMPv6 message under 24 bytes.
enum class NdError : uint8_t { Ok, Short, NotIcmpv6, NotNd, BadHopLimit, BadCode, BadChecksum, BadOption, BadTarget };
const char* nd_error_name(NdError e);  // "ok", "short", "not_icmpv6", ...

// `frame` starts at the Ethernet header; the IPv6 header starts at `l3_offset`. The checks of
// RFC 4861 7.1.1 / 7.1.2: next header 58 right after the fixed header (no extension headers),
// ICMPv6 type 135/136 (else NotNd, checked before the ND rules so that other ICMPv6 goes
// elsewhere), hop limit 255, code 0, length >= 24, checksum, target not multicast, every option
// of length > 0 and inside the message, and no SLLA option in an NS from ::. Bytes past the
// IPv6 payload length (padding) are ignored. Never reads past `len`.
NdError parse_nd(const uint8_t* frame, uint32_t len, uint16_t l3_offset, NdPacket& out);

// Writes an untagged NS for `target` with hop limit 255 and returns its length, or 0 when `cap`
// is short. Multicast (address resolution): to the solicited-node group of `target` and its
// 33:33:ff:xx:xx:xx MAC; unicast (reachability probe): to `target` at `unicast_mac`. The SLLA
// option carries `eth_src`, except from the unspecified source (a DAD probe), where RFC 4861
// 4.3 forbids it.
uint32_t build_ns(uint8_t* buf, uint32_t cap, const rte_ether_addr& eth_src, const uint8_t src_ip[16],
                  const uint8_t target[16], bool unicast, const rte_ether_addr& unicast_mac);

// Writes an untagged NA for `target` with the TLLA option `eth_src`, hop limit 255 and the R/S/O
// bits of `flags` (others ignored); returns its length, or 0 when `cap` is short.
uint32_t build_na(uint8_t* buf, uint32_t cap, const rte_ether_addr& eth_dst, const rte_ether_addr& eth_src,
                  const uint8_t src_ip[16], const uint8_t dst_ip[16], const uint8_t target[16], uint8_t flags);

// ff02::1:ffXX:XXXX, the solicited-node multicast address of `ip` (RFC 4291 2.7.1).
void solicited_node(const uint8_t ip[16], uint8_t out[16]);
// 33:33 + the last four bytes of an IPv6 multicast address (RFC 2464 7).
void multicast_mac(const uint8_t ip6[16], rte_ether_addr& out);

// --- Shared with the ICMPv6 builders (icmp.cc) -----------------------------------------------

// The ICMPv6 checksum (RFC 4443 2.3) over the pseudo-header and `len` bytes at `icmp`, taken as
// they are, in network byte order (store it with memcpy). With the checksum field zeroed it is
// the value to write; over a received message with a correct checksum it is 0.
uint16_t icmp6_checksum(const uint8_t src[16], const uint8_t dst[16], const uint8_t* icmp, uint32_t len);

inline bool ipv6_is_multicast(const uint8_t a[16]) { return a[0] == 0xff; }
bool ipv6_is_unspecified(const uint8_t a[16]);

// Writes a 40-byte IPv6 header carrying ICMPv6 directly (next header 58), flow label 0.
void put_ipv6_icmp6_header(uint8_t* ip6, uint8_t traffic_class, uint16_t payload_len, uint8_t hop_limit,
                           const uint8_t src[16], const uint8_t dst[16]);

}  // namespace rs::proto
