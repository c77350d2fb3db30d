// ARP (RFC 826, Ethernet/IPv4 only) for the control-plane thread that answers for the switch's
// own port addresses: check and decode a received ARP packet, build a request or a reply.
// Also the Ethernet framing the ARP, ND and ICMP builders share (untagged, padded to 60 bytes),
// since ARP is the one codec of the three that sits directly on Ethernet.
#pragma once
#include <rte_ether.h>

#include <cstdint>

namespace rs::proto {

// Frames are built without an FCS, so the minimum Ethernet frame is 64 - 4 bytes.
inline constexpr uint32_t kMinFrameLen = RTE_ETHER_MIN_LEN - RTE_ETHER_CRC_LEN;
inline constexpr uint32_t kEthHeaderLen = RTE_ETHER_HDR_LEN;
inline constexpr uint32_t kArpLen = 28;  // Ethernet/IPv4 ARP packet
inline constexpr uint16_t kArpOpRequest = 1;
inline constexpr uint16_t kArpOpReply = 2;

struct ArpPacket {
  uint16_t op = 0;  // host order: 1 request, 2 reply
  rte_ether_addr sha{};
  uint32_t spa = 0;  // network byte order, as in the packet
  rte_ether_addr tha{};
  uint32_t tpa = 0;  // network byte order
};

// Why an ARP packet was rejected; Ok means `out` is filled in.
enum class ArpError : uint8_t { Ok, Short, BadHardware, BadProtocol, BadOpcode };
const char* arp_error_name(ArpError e);  // "ok", "short", "bad_hardware", ...

// `frame` starts at the Ethernet header; the ARP packet starts at `l3_offset` (14, or 18 behind
// an 802.1Q tag). Bytes past the 28 of the packet (padding, FCS) are ignored. The EtherType is
// the caller's business. Never reads past `len`.
ArpError parse_arp(const uint8_t* frame, uint32_t len, uint16_t l3_offset, ArpPacket& out);

// Writes an untagged ARP frame into `buf` and returns its length (60), or 0 when `cap` is short.
uint32_t build_arp(uint8_t* buf, uint32_t cap, const rte_ether_addr& eth_dst, const rte_ether_addr& eth_src,
                   const ArpPacket& a);

// A gratuitous ARP announces the sender's own address: sender and target addresses are equal.
inline bool arp_is_gratuitous(const ArpPacket& a) { return a.spa == a.tpa; }

// --- Shared by the ARP, ND and ICMP codecs ---------------------------------------------------

// Unaligned big-endian access: received frames give no alignment guarantee.
inline uint16_t load_be16(const uint8_t* p) { return static_cast<uint16_t>(p[0] << 8 | p[1]); }
inline void store_be16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v >> 8);
  p[1] = static_cast<uint8_t>(v);
}

// Starts an untagged frame carrying `l3_len` bytes after the Ethernet header: sets `frame_len`
// to 14 + l3_len, padded up to 60, writes the Ethernet header and zeroes the padding, and
// returns where the L3 header goes. nullptr (and frame_len 0) when `cap` is too small.
uint8_t* start_frame(uint8_t* buf, uint32_t cap, const rte_ether_addr& dst, const rte_ether_addr& src,
                     uint16_t ether_type, uint32_t l3_len, uint32_t& frame_len);

}  // namespace rs::proto
