// The straight-through parse of the shape almost every packet of a RoCE fabric has: untagged
// IPv4, no options, not a fragment, UDP with room for a BTH and an ICRC (RoCE, or as long), a
// valid header sum, lengths that agree with the first segment. Checked with a few wide
// compares and filled straight through; anything else (including every malformed packet)
// returns false and takes the parser's general path, which names the drop reason. Shared by
// the parser and the ipv4_fastpath stage, so both fill the same metadata (the parser tests
// run every shape through both paths).
#pragma once
#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_hash_crc.h>
#include <rte_ip.h>
#include <rte_udp.h>

#include <cstddef>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "dataplane/core/packet_meta.h"
#include "dataplane/core/types.h"

namespace rs::parse {

inline constexpr uint16_t kRoceUdpPort = 4791;
inline constexpr uint16_t kBthLen = 12;
inline constexpr uint16_t kIcrcLen = 4;
inline constexpr uint8_t kCnpOpcode = 0x81;

inline uint32_t load_be32(const uint8_t* p) {
  uint32_t v;
  __builtin_memcpy(&v, p, 4);
  return rte_be_to_cpu_32(v);
}

inline uint32_t load_le32(const uint8_t* p) {
  uint32_t v;
  __builtin_memcpy(&v, p, 4);
  return v;
}

// The builtin, not rte_be_to_cpu_16: DPDK swaps a non-constant with an asm xchg the compiler
// cannot fold into a compare or a movbe.
inline uint16_t load_be16(const uint8_t* p) {
  uint16_t v;
  __builtin_memcpy(&v, p, 2);
  return __builtin_bswap16(v);
}

// CRC32-C steps, as rte_hash_crc_4byte/_1byte compute them. With SSE4.2 known at compile time
// (-march=native), the instruction itself: DPDK's versions test at run time which algorithm
// to use, twice per packet.
inline uint32_t flow_crc32c_u32(uint32_t data, uint32_t init) {
#ifdef __SSE4_2__
  return __builtin_ia32_crc32si(init, data);
#else
  return rte_hash_crc_4byte(data, init);
#endif
}
inline uint32_t flow_crc32c_u8(uint8_t data, uint32_t init) {
#ifdef __SSE4_2__
  return __builtin_ia32_crc32qi(init, data);
#else
  return rte_hash_crc_1byte(data, init);
#endif
}

// RFC 1071 sum of an IPv4 header; a valid one (checksum included) folds to 0xFFFF. The common
// 20-byte header is five 32-bit words; options fall back to DPDK's generic loop.
// Why a modulo instead of folding: 2^16 = 1 (mod 0xFFFF), so the one's-complement sum folds to
// 0xFFFF exactly when the plain sum of the words is a non-zero multiple of 0xFFFF, in either
// byte order (a byte swap multiplies by 256, which is invertible mod 0xFFFF). The sum is never
// zero (the version nibble is not), and the compiler turns "% 0xFFFF == 0" into one multiply
// and one compare instead of four folds.
inline bool ipv4_header_sum_valid(const uint8_t* ip, uint32_t ihl) {
  if (ihl != 20) return rte_raw_cksum(ip, ihl) == 0xFFFF;
  // Two 64-bit words and one 32-bit word, added with end-around carries (add, adc, adc): a
  // carry out of bit 63 is worth 2^64 = 1 (mod 0xFFFF), so the residue is kept.
  uint64_t a, b;
  __builtin_memcpy(&a, ip, 8);
  __builtin_memcpy(&b, ip + 8, 8);
  unsigned long long sum;
  const unsigned long long c1 = __builtin_add_overflow(a, b, &sum);
  const unsigned long long c2 = __builtin_add_overflow(sum, uint64_t{load_le32(ip + 16)} + c1, &sum);
  sum += c2;  // cannot carry again: after a wrap sum is below 2^32 + 1
  return sum % 0xFFFF == 0;
}

// A header is good when the NIC checked its sum (GOOD) or the sum checks out in software.
// Software ports (pcap, ring, af_packet) say UNKNOWN (0); NONE (the sum is not filled in) is
// checked like UNKNOWN, since the switch forwards it as is; a NIC's BAD is what the software
// check finds too, so it needs no test of its own. The fast shape's parse checks in software
// only (one test fewer per packet on the ports that never set the flags): a header only the
// NIC calls good goes on to the general parser, which takes the NIC's word.
inline bool ipv4_header_sum_ok(const rte_mbuf* m, const uint8_t* ip, uint32_t ihl) {
  if ((m->ol_flags & RTE_MBUF_F_RX_IP_CKSUM_MASK) == RTE_MBUF_F_RX_IP_CKSUM_GOOD) [[unlikely]]
    return true;
  return ipv4_header_sum_valid(ip, ihl);
}

// What the fast shape's metadata is made of, read from the frame in one go.
struct FastFields {
  uint32_t flow_hash;
  uint32_t dst_be;     // destination address as it sits in the frame
  const uint8_t* bth;  // where a BTH would start (inside the frame: the parse checked)
  uint16_t dport_be;   // UDP destination port as it sits in the frame
  uint8_t tos;
  // Worked out where they are used, not at parse: the caller that needs them only for a frame
  // whose opcode byte says CNP tests that byte first (ipv4_fastpath), and one that stores no
  // metadata needs no flags.
  bool roce() const { return dport_be == RTE_BE16(kRoceUdpPort); }
  bool cnp_opcode() const { return bth[0] == kCnpOpcode; }
  // An and, not a branch (the byte is inside the frame either way): RoCE and not mix in a burst.
  bool cnp() const { return roce() & cnp_opcode(); }  // classification steers CNPs
  uint8_t flags() const {
    static_assert(meta_flag::kRoce == 1u << 2 && meta_flag::kCnp == 1u << 3);
    return static_cast<uint8_t>(meta_flag::kUdp | static_cast<unsigned>(roce()) << 2 | static_cast<unsigned>(cnp()) << 3);
  }
  uint8_t opcode() const { return roce() ? bth[0] : 0; }
  uint32_t dest_qp() const { return roce() ? load_be32(bth + 4) & 0xFFFFFF : 0; }
  uint32_t psn() const { return roce() ? load_be32(bth + 8) & 0xFFFFFF : 0; }
  // The frame's first byte (the parse reads the mbuf's data pointer once; the rewrite reuses it).
  uint8_t* frame() const {
    return const_cast<uint8_t*>(bth) - sizeof(rte_ether_hdr) - sizeof(rte_ipv4_hdr) - sizeof(rte_udp_hdr);
  }
};

// The fast shape's metadata, stored as five little-endian words built in registers: the fields
// are mostly constants and a few packed bytes, which a template copied and then patched field
// by field stored twice over. The layout is pinned here; the parser tests
// compare every field with the general parser's.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__);
static_assert(offsetof(PacketMeta, in_port) == 0 && offsetof(PacketMeta, out_port) == 2 &&
              offsetof(PacketMeta, l3_offset) == 4 && offsetof(PacketMeta, l4_offset) == 6 &&
              offsetof(PacketMeta, flow_hash) == 8 && offsetof(PacketMeta, nexthop) == 12 &&
              offsetof(PacketMeta, group) == 16 && offsetof(PacketMeta, l3) == 18 && offsetof(PacketMeta, flags) == 19 &&
              offsetof(PacketMeta, pcp) == 20 && offsetof(PacketMeta, dscp) == 21 && offsetof(PacketMeta, ecn) == 22 &&
              offsetof(PacketMeta, tc) == 23 && offsetof(PacketMeta, queue) == 24 &&
              offsetof(PacketMeta, ip_proto) == 25 && offsetof(PacketMeta, bth_opcode) == 26 &&
              offsetof(PacketMeta, drop_reason) == 27 && offsetof(PacketMeta, dest_qp) == 28 &&
              offsetof(PacketMeta, psn) == 32 && sizeof(PacketMeta) == 36);
static_assert(static_cast<uint8_t>(DropReason::None) == 0);
// group, tc, queue, out_port and nexthop are what the route lookup, classification and member
// choice give later in the general path (0, or no port, until then); the fast path may have
// them before it stores anything.
[[gnu::always_inline]] inline void store_fast_meta(PacketMeta& pm, const FastFields& f, uint16_t in_port, uint16_t group = 0,
                                                   uint8_t tc = 0, uint8_t queue = 0,
                                                   uint16_t out_port = kInvalidPort, uint32_t nexthop = 0) {
  constexpr uint64_t kW0 = uint64_t{sizeof(rte_ether_hdr)} << 32 | uint64_t{sizeof(rte_ether_hdr) + sizeof(rte_ipv4_hdr)} << 48;
  const uint64_t w0 = kW0 | in_port | uint64_t{out_port} << 16;
  const uint64_t w1 = f.flow_hash | uint64_t{nexthop} << 32;
  // group, l3, flags, pcp 0, dscp, ecn, tc
  const uint64_t w2 = uint64_t{group} | uint64_t{static_cast<uint8_t>(L3Type::Ipv4)} << 16 | uint64_t{f.flags()} << 24 |
                      uint64_t{static_cast<uint8_t>(f.tos >> 2)} << 40 | uint64_t{static_cast<uint8_t>(f.tos & 3)} << 48 |
                      uint64_t{tc} << 56;
  // queue, ip_proto, bth_opcode, drop_reason None, dest_qp
  const uint64_t w3 = uint64_t{queue} | uint64_t{IPPROTO_UDP} << 8 | uint64_t{f.opcode()} << 16 | uint64_t{f.dest_qp()} << 32;
  const uint32_t psn = f.psn();
  auto* b = reinterpret_cast<uint8_t*>(&pm);
  __builtin_memcpy(b, &w0, 8);
  __builtin_memcpy(b + 8, &w1, 8);
  __builtin_memcpy(b + 16, &w2, 8);
  __builtin_memcpy(b + 24, &w3, 8);
  __builtin_memcpy(b + 32, &psn, 4);
}

// The fixed fields of the fast shape: EtherType 0x0800, version 4 with a 20-byte header,
// fragment offset 0 (flags not looked at: a first fragment has its UDP header, as the general
// parser says too), protocol 17, and a TTL of at least 2 (one the switch may forward: the
// general path drops the others as expired). Reads the frame's bytes 12..27 (the caller
// checked data_len).
// Why one vector compare: as two masked 32-bit compares and a TTL test this was 12
// instructions a packet in ipv4_fastpath's loop; the vector form is 6 (callgrind).
// The same test as plain compares: what fixed_fields_fast does without SSE2, and what the
// tests hold the vector form to.
inline bool fixed_fields_scalar(const uint8_t* p) {
  const uint32_t w_type = load_le32(p + 12);      // EtherType, version/IHL (TOS masked off)
  const uint32_t w_frag = load_le32(p + 14 + 6);  // fragment offset and flags, TTL, protocol
  return (w_type & 0x00FFFFFF) == 0x00450008 && (w_frag & 0xFF00FF1F) == 0x11000000 && ((w_frag >> 16) & 0xFF) > 1;
}
[[gnu::always_inline]] inline bool fixed_fields_fast(const uint8_t* p) {
#ifdef __SSE2__
  // Bytes 12..27: type(2) ver/ihl tos tot(2) id(2) frag(2) ttl proto csum(2) src(2). Masked,
  // then capped so that the TTL byte reads 2 when it is 2 or more; every other byte is
  // compared as it is.
  const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 12));
  const __m128i mask = _mm_setr_epi8(-1, -1, -1, 0, 0, 0, 0, 0, 0x1F, -1, -1, -1, 0, 0, 0, 0);
  const __m128i cap = _mm_setr_epi8(-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 2, -1, -1, -1, -1, -1);
  const __m128i want = _mm_setr_epi8(0x08, 0x00, 0x45, 0, 0, 0, 0, 0, 0, 0, 2, IPPROTO_UDP, 0, 0, 0, 0);
  const __m128i v = _mm_min_epu8(_mm_and_si128(h, mask), cap);
  return _mm_movemask_epi8(_mm_cmpeq_epi8(v, want)) == 0xFFFF;
#else
  return fixed_fields_scalar(p);
#endif
}

// Burst tallies kept in registers by the callers (every fast packet is IPv4 and UDP).
struct FastTally {
  uint32_t ipv4 = 0, roce = 0, cnp = 0;
};

// Returns true and fills `f` when the frame has the fast shape; touches no metadata. Always
// inline into the caller's burst loop with the tallies in registers.
[[gnu::always_inline]] inline bool ipv4_udp_fast_fields(const rte_mbuf* m, uint32_t seed, FastFields& f, FastTally& t) {
  const uint8_t* p = rte_pktmbuf_mtod(m, const uint8_t*);
  constexpr uint32_t kL3 = sizeof(rte_ether_hdr), kL4 = kL3 + sizeof(rte_ipv4_hdr), kBth = kL4 + sizeof(rte_udp_hdr);
  // Every fast packet has room for a BTH and the ICRC after its UDP header: a RoCE packet
  // needs it, and a shorter UDP datagram (rare in a RoCE fabric) takes the general path, so
  // that one bound serves both (a bound selected by the port cost 6 instructions a packet in
  // ipv4_fastpath's loop, callgrind). With it the frame is at least this long, every byte read
  // here is inside the first segment, and so is the whole datagram (checked below).
  constexpr uint32_t kMinUlen = sizeof(rte_udp_hdr) + kBthLen + kIcrcLen;
  const uint32_t data_len = m->data_len;
  if (data_len < kL4 + kMinUlen) return false;
  if (!fixed_fields_fast(p)) return false;
  const int32_t tot = load_be16(p + kL3 + 2);
  const int32_t ulen = load_be16(p + kL4 + 4);
  uint32_t ports;
  __builtin_memcpy(&ports, p + kL4, 4);
  // ulen >= 24, 20 + ulen <= tot (so tot >= 44) and 14 + tot <= data_len, as one test of a
  // sign: each difference is negative exactly when its bound fails, and none can overflow
  // (all are below 2^17). Against data_len, not pkt_len: a datagram that goes on in a second
  // segment takes the general path.
  if (((ulen - static_cast<int32_t>(kMinUlen)) | (tot - 20 - ulen) | (static_cast<int32_t>(data_len) - static_cast<int32_t>(kL3) - tot)) < 0)
    return false;
  if (!ipv4_header_sum_valid(p + kL3, 20)) return false;
  f.tos = p[kL3 + 1];
  f.dst_be = load_le32(p + kL3 + 16);
  uint32_t h = flow_crc32c_u32(load_le32(p + kL3 + 12), seed);
  h = flow_crc32c_u32(f.dst_be, h);
  h = flow_crc32c_u32(ports, h);
  f.flow_hash = flow_crc32c_u8(IPPROTO_UDP, h);
  // The BTH fields and the metadata flags wait for their users (FastFields); data_len was
  // checked, so the opcode byte they may read is inside the frame.
  f.dport_be = static_cast<uint16_t>(ports >> 16);
  f.bth = p + kBth;
  ++t.ipv4;
  t.roce += f.roce();
  t.cnp += f.cnp();
  return true;
}

// Fills the metadata (keeping in_port) and returns true when the frame has the fast shape.
[[gnu::always_inline]] inline bool ipv4_udp_fast(rte_mbuf* m, uint32_t seed, FastTally& t) {
  FastFields f;
  if (!ipv4_udp_fast_fields(m, seed, f, t)) return false;
  PacketMeta& pm = meta(m);
  store_fast_meta(pm, f, pm.in_port);  // in_port is kept
  return true;
}

}  // namespace rs::parse
