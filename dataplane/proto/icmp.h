// ICMP and ICMPv6 for the control-plane thread: recognise an echo request to one of the switch's
// own addresses and build the reply, and build the errors a router sends (time exceeded,
// destination unreachable), holding to the rules on when an error must not be sent (RFC 1812
// 4.3.2.7, RFC 4443 2.4(e)) so that the switch never answers an error with an error.
#pragma once
#include <rte_ether.h>

#include <cstdint>

namespace rs::proto {

inline constexpr uint8_t kIcmp4EchoReply = 0;
inline constexpr uint8_t kIcmp4Unreachable = 3;
inline constexpr uint8_t kIcmp4TimeExceeded = 11;
inline constexpr uint8_t kIcmp4EchoRequest = 8;
inline constexpr uint8_t kIcmp6Unreachable = 1;
inline constexpr uint8_t kIcmp6TimeExceeded = 3;
inline constexpr uint8_t kIcmp6EchoRequest = 128;
inline constexpr uint8_t kIcmp6EchoReply = 129;

// The largest error datagrams: IPv4's minimum reassembly size (RFC 1812 4.3.2.3) and IPv6's
// minimum MTU (RFC 4443 2.4(c)).
inline constexpr uint32_t kIcmp4ErrorMaxLen = 576;
inline constexpr uint32_t kIcmp6ErrorMaxLen = 1280;

// In all functions below an IP datagram is given by its first byte and the bytes present from
// there (`ip_len`, `req_len`, `orig_len`): the datagram's own length field says where it ends,
// and what follows (Ethernet padding) is ignored. Nothing is read past the bytes present.
// Build functions write an untagged Ethernet frame padded to 60 bytes into `buf` (which must
// not overlap the input) and return its length, or 0 when `cap` is short or nothing may be
// sent.

// A valid IPv4 ICMP echo request: version 4, IHL >= 5, header checksum right, IHL*4 <= total
// length <= ip_len, protocol 1, not a fragment, ICMP type 8 code 0 of at least 8 bytes with a
// right checksum, from a source that names one host (not 0/8, 127/8, 224/4 or 240/4).
bool icmp4_echo_request(const uint8_t* ip, uint32_t ip_len);
// A valid ICMPv6 echo request: version 6, next header 58 (no extension headers), payload length
// fits, type 128 code 0 of at least 8 bytes, checksum right, source neither :: nor multicast.
bool icmp6_echo_request(const uint8_t* ip6, uint32_t ip_len);

// The echo reply: from the request's destination to its source, TTL 64, TOS 0, DF as in the
// request, IP ID the request's, no IP options; ICMP type 0 with the request's id, sequence and
// data. 0 when the request is not valid or was sent to a multicast or broadcast address (the
// reply must come from a unicast address of ours).
uint32_t build_icmp4_echo_reply(uint8_t* buf, uint32_t cap, const rte_ether_addr& eth_dst,
                                const rte_ether_addr& eth_src, const uint8_t* req_ip, uint32_t req_len);
// The ICMPv6 echo reply: hop limit 64, traffic class 0, type 129. 0 when the request is not valid
// or was sent to a multicast address.
uint32_t build_icmp6_echo_reply(uint8_t* buf, uint32_t cap, const rte_ether_addr& eth_dst,
                                const rte_ether_addr& eth_src, const uint8_t* req_ip6, uint32_t req_len);

// An ICMP error from `src_ip` (network order) to the original's source: type 11 codes 0-1 or
// type 3 codes 0-3 (other types need fields this signature does not carry: 0). TTL 64, TOS 0xc0
// (CS6, as Linux sends errors), DF clear; it quotes as much of the original datagram as keeps
// the error within 576 bytes. 0 (send nothing) when RFC 1812 4.3.2.7 forbids an error: the
// original is an ICMP error (type 3, 4, 5, 11 or 12; errors about echo and other queries are
// sent), a non-first fragment, from a source that names no single host (0/8, 127/8, 224/4,
// 240/4 including 255.255.255.255) or to a multicast or limited-broadcast address; also when
// its IPv4 header is malformed.
uint32_t build_icmp4_error(uint8_t* buf, uint32_t cap, const rte_ether_addr& eth_dst, const rte_ether_addr& eth_src,
                           uint32_t src_ip, uint8_t type, uint8_t code, const uint8_t* orig_ip, uint32_t orig_len);
// An ICMPv6 error from `src_ip` to the original's source: type 3 codes 0-1 or type 1 codes 0-6
// (else 0). Hop limit 64, traffic class 0xc0; it quotes as much of the original as keeps the
// error within 1280 bytes. 0 when RFC 4443 2.4(e) forbids an error: the original carries an
// ICMPv6 error (type < 128) or an ND/redirect message (133-137), found through any extension
// headers (when that type cannot be read, nothing is sent either), or its source is :: or
// multicast, or its destination multicast (the RFC's exceptions for Packet Too Big and
// Parameter Problem are not needed: those are never built here); also when it is not IPv6.
uint32_t build_icmp6_error(uint8_t* buf, uint32_t cap, const rte_ether_addr& eth_dst, const rte_ether_addr& eth_src,
                           const uint8_t src_ip[16], uint8_t type, uint8_t code, const uint8_t* orig_ip6,
                           uint32_t orig_len);

}  // namespace rs::proto
