// The parse step (P4 parser): Ethernet, one 802.1Q tag, IPv4/IPv6, UDP, the InfiniBand BTH on
// UDP 4791, MAC control (0x8808). Reads the frame; fills the metadata (l3/l4 offsets, pcp,
// dscp, ecn, ip_proto, flow_hash, BTH fields) and keeps what the pipeline stamped (in_port,
// trace). Every length is checked against the bytes actually present; a lie is a named drop.
// One inline body, used by the l3_input stage, in two forms (flags): the general one, and one
// that first tries the shape almost every packet of a RoCE fabric has (untagged IPv4 without
// options or fragment offset, UDP with room for a BTH and an ICRC) with one vector compare
// and fills the metadata in five stores. Whatever that test refuses goes on to the general
// checks; both forms leave the same metadata and the same drop (tests/unit/stages/
// step_forms_test.cc holds them to it over every header variant).
#pragma once
#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_hash_crc.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_udp.h>

#include <cstring>

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
inline constexpr uint16_t kEtherTypeMacControl = 0x8808;

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
// to use on every call.
inline uint32_t crc32c_u32(uint32_t data, uint32_t init) {
#ifdef __SSE4_2__
  return __builtin_ia32_crc32si(init, data);
#else
  return rte_hash_crc_4byte(data, init);
#endif
}
inline uint32_t crc32c_u8(uint8_t data, uint32_t init) {
#ifdef __SSE4_2__
  return __builtin_ia32_crc32qi(init, data);
#else
  return rte_hash_crc_1byte(data, init);
#endif
}

// The flow hash's last step. CRC32-C is linear: crc(seed, x) is crc(0, x) xor a function of the
// seed, so two flows' hashes differ by the same bits whatever the seed: the seed would change
// which member each flow takes but never which flows share one, and every switch of a fabric
// would split flows alike (ECMP polarisation). A multiplicative mix after it (murmur3's
// finaliser) makes which flows collide depend on the seed, as switch ASICs' hash seeds are for.
inline uint32_t flow_hash_final(uint32_t h) {
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  return h ^ (h >> 16);
}

// RFC 1071 sum of an IPv4 header; a valid one (checksum included) folds to 0xFFFF. The common
// 20-byte header is summed as 64-bit words; options fall back to DPDK's generic loop.
// Why a modulo instead of folding: 2^16 = 1 (mod 0xFFFF), so the one's-complement sum folds to
// 0xFFFF exactly when the plain sum of the words is a non-zero multiple of 0xFFFF, in either
// byte order (a byte swap multiplies by 256, which is invertible mod 0xFFFF). The sum is never
// zero (the version nibble is not), and the compiler turns "% 0xFFFF == 0" into a multiply and
// a compare instead of four folds.
inline bool ipv4_header_sum_valid(const uint8_t* ip, uint32_t ihl) {
  if (ihl != 20) return rte_raw_cksum(ip, ihl) == 0xFFFF;
  // Two 64-bit words and one 32-bit word, added with end-around carries: a carry out of bit
  // 63 is worth 2^64 = 1 (mod 0xFFFF), so the residue is kept.
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
// check finds too, so it needs no test of its own.
inline bool ipv4_header_sum_ok(const rte_mbuf* m, const uint8_t* ip, uint32_t ihl) {
  if ((m->ol_flags & RTE_MBUF_F_RX_IP_CKSUM_MASK) == RTE_MBUF_F_RX_IP_CKSUM_GOOD) [[unlikely]]
    return true;
  return ipv4_header_sum_valid(ip, ihl);
}

// The fixed fields of the common shape: EtherType 0x0800, version 4 with a 20-byte header,
// fragment offset 0 (flags not looked at: a first fragment has its UDP header, as the general
// form says too) and protocol 17. Reads the frame's bytes 12..23 (the caller checked the
// length). The plain compares are the same test without SSE2, and what the tests hold the
// vector form to.
inline bool common_shape_scalar(const uint8_t* p) {
  const uint32_t w_type = load_le32(p + 12);      // EtherType, version/IHL (TOS masked off)
  const uint32_t w_frag = load_le32(p + 14 + 6);  // fragment offset and flags, TTL, protocol
  return (w_type & 0x00FFFFFF) == 0x00450008 && (w_frag & 0xFF00FF1F) == 0x11000000;
}
[[gnu::always_inline]] inline bool common_shape(const uint8_t* p) {
#ifdef __SSE2__
  // Bytes 12..27: type(2) ver/ihl tos tot(2) id(2) frag(2) ttl proto csum(2) src(2), masked to
  // the fixed ones and compared in one go.
  const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 12));
  const __m128i mask = _mm_setr_epi8(-1, -1, -1, 0, 0, 0, 0, 0, 0x1F, -1, 0, -1, 0, 0, 0, 0);
  const __m128i want = _mm_setr_epi8(0x08, 0x00, 0x45, 0, 0, 0, 0, 0, 0, 0, 0, IPPROTO_UDP, 0, 0, 0, 0);
  return _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_and_si128(h, mask), want)) == 0xFFFF;
#else
  return common_shape_scalar(p);
#endif
}

// The parse's forms (template flags of parse_frame).
inline constexpr unsigned kGeneral = 0;
inline constexpr unsigned kCommonShapeFirst = 1;

// What parse_frame() found, for l3_input's edges.
enum class Parsed : uint8_t { Ipv4, Ipv6, MacControl, Arp, Lldp, Drop };

// The stage's tallies, kept in registers over a burst.
// What the common shape is goes uncounted: it is what the burst's packets were, less those the
// general form saw (`general`) and the common ones that were not RoCE. A tally costs a packet a
// load and a store when the loop has more of them than registers; the rare cases pay it.
struct Tally {
  uint32_t general = 0, common_not_roce = 0;
  uint32_t ipv4 = 0, ipv6 = 0, vlan = 0, udp = 0, roce = 0, cnp = 0;  // cnp: both forms
};

[[gnu::always_inline]] inline Parsed drop(PacketMeta& pm, DropReason r) {
  pm.drop_reason = r;
  return Parsed::Drop;
}

// The common shape in one go: returns false, having written nothing, for any frame that is not
// exactly that shape with consistent lengths and a good header sum (the general form then
// decides, and names the drop); else fills the metadata as the general form would.
// Why: the general form's tests one field at a time and its field-by-field stores are most of
// l3_input's cost on a RoCE fabric's traffic.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__);
static_assert(offsetof(PacketMeta, out_port) == 4 && offsetof(PacketMeta, l3_offset) == 6 &&
              offsetof(PacketMeta, l4_offset) == 8 && offsetof(PacketMeta, group) == 10 &&
              offsetof(PacketMeta, flow_hash) == 12 && offsetof(PacketMeta, nexthop) == 16 &&
              offsetof(PacketMeta, l3) == 20 && offsetof(PacketMeta, flags) == 21 && offsetof(PacketMeta, pcp) == 22 &&
              offsetof(PacketMeta, dscp) == 23 && offsetof(PacketMeta, ecn) == 24 && offsetof(PacketMeta, tc) == 25 &&
              offsetof(PacketMeta, queue) == 26 && offsetof(PacketMeta, ip_proto) == 27 &&
              offsetof(PacketMeta, bth_opcode) == 28 && offsetof(PacketMeta, drop_reason) == 29 &&
              offsetof(PacketMeta, dest_qp) == 32 && offsetof(PacketMeta, psn) == 36 && offsetof(PacketMeta, vlan) == 40 &&
              sizeof(PacketMeta) == 44);
static_assert(static_cast<uint8_t>(DropReason::None) == 0);
[[gnu::always_inline]] inline bool parse_common_shape(const rte_mbuf* m, PacketMeta& pm, uint32_t seed, Tally& t) {
  const uint8_t* p = rte_pktmbuf_mtod(m, const uint8_t*);
  constexpr uint32_t kL3 = sizeof(rte_ether_hdr), kL4 = kL3 + sizeof(rte_ipv4_hdr), kBth = kL4 + sizeof(rte_udp_hdr);
  // Room for a BTH and the ICRC after the UDP header: a RoCE packet needs it, and a shorter
  // datagram (rare here) takes the general form, so that one bound serves both. With it every
  // byte read here is inside the first segment, and so is the whole datagram (checked below).
  constexpr uint32_t kMinUlen = sizeof(rte_udp_hdr) + kBthLen + kIcrcLen;
  const uint32_t data_len = m->data_len;
  if (data_len < kL4 + kMinUlen || !common_shape(p)) return false;
  const int32_t tot = load_be16(p + kL3 + 2);
  const int32_t ulen = load_be16(p + kL4 + 4);
  // ulen >= 24, 20 + ulen <= tot and 14 + tot <= data_len, as one test of a sign: each
  // difference is negative exactly when its bound fails, and none can overflow. Against
  // data_len, not pkt_len: a datagram that goes on in a second segment takes the general form.
  if (((ulen - static_cast<int32_t>(kMinUlen)) | (tot - 20 - ulen) |
       (static_cast<int32_t>(data_len) - static_cast<int32_t>(kL3) - tot)) < 0)
    return false;
  if (!ipv4_header_sum_valid(p + kL3, 20)) return false;  // a NIC's GOOD alone: general form
  const uint8_t tos = p[kL3 + 1];
  uint32_t ports;
  __builtin_memcpy(&ports, p + kL4, 4);
  uint32_t h = crc32c_u32(load_le32(p + kL3 + 12), seed);
  h = crc32c_u32(load_le32(p + kL3 + 16), h);
  h = crc32c_u32(ports, h);
  h = flow_hash_final(crc32c_u8(IPPROTO_UDP, h));
  const bool roce = (ports >> 16) == RTE_BE16(kRoceUdpPort);
  const uint8_t* bth = p + kBth;
  const uint64_t opcode = roce ? bth[0] : 0;
  const bool cnp = opcode == kCnpOpcode;
  const uint64_t flags = meta_flag::kUdp | (roce ? meta_flag::kRoce : 0) | (cnp ? meta_flag::kCnp : 0);
  const uint64_t qp = roce ? load_be32(bth + 4) & 0xFFFFFF : 0;
  const uint64_t psn = roce ? load_be32(bth + 8) & 0xFFFFFF : 0;  // and vlan 0
  // out_port none, l3 and l4 offsets, group 0 | flow hash, nexthop 0 | l3, flags, pcp 0, dscp,
  // ecn, tc 0, queue 0, ip_proto | opcode, no drop, no punt, dest_qp | psn.
  const uint64_t w0 = uint64_t{kInvalidPort} | uint64_t{kL3} << 16 | uint64_t{kL4} << 32;
  const uint64_t w1 = h;
  const uint64_t w2 = uint64_t{static_cast<uint8_t>(L3Type::Ipv4)} | flags << 8 | uint64_t{static_cast<uint8_t>(tos >> 2)} << 24 |
                      uint64_t{static_cast<uint8_t>(tos & 3)} << 32 | uint64_t{IPPROTO_UDP} << 56;
  const uint64_t w3 = opcode | qp << 32;
  auto* b = reinterpret_cast<uint8_t*>(&pm);
  __builtin_memcpy(b + 4, &w0, 8);
  __builtin_memcpy(b + 12, &w1, 8);
  __builtin_memcpy(b + 20, &w2, 8);
  __builtin_memcpy(b + 28, &w3, 8);
  __builtin_memcpy(b + 36, &psn, 8);
  if (!roce) [[unlikely]]
    ++t.common_not_roce;
  if (cnp) [[unlikely]]
    ++t.cnp;
  return true;
}

// Parses one frame into its metadata. Headers must sit in the first segment (jumbo chains
// still carry them there); lengths are checked against it and against the whole packet.
template <unsigned F>
[[gnu::always_inline]] inline Parsed parse_frame(const rte_mbuf* m, PacketMeta& pm, uint32_t seed, Tally& t) {
  if constexpr ((F & kCommonShapeFirst) != 0) {
    if (parse_common_shape(m, pm, seed, t)) [[likely]]
      return Parsed::Ipv4;
  }
  ++t.general;
  // Everything after the pipeline's stamp starts from zero (no port, no drop).
  static_assert(sizeof(PacketMeta) == kMetaStampBytes + 40);
  const uint64_t zero = 0, no_port = kInvalidPort;
  auto* b = reinterpret_cast<uint8_t*>(&pm);
  __builtin_memcpy(b + 4, &no_port, 8);
  __builtin_memcpy(b + 12, &zero, 8);
  __builtin_memcpy(b + 20, &zero, 8);
  __builtin_memcpy(b + 28, &zero, 8);
  __builtin_memcpy(b + 36, &zero, 8);
  const uint8_t* p = rte_pktmbuf_mtod(m, const uint8_t*);
  const uint32_t len = m->data_len;
  if (len < sizeof(rte_ether_hdr)) [[unlikely]]
    return drop(pm, DropReason::MalformedEth);
  uint16_t type = load_be16(p + 12);
  uint32_t off = sizeof(rte_ether_hdr);
  if (type == RTE_ETHER_TYPE_VLAN || type == RTE_ETHER_TYPE_QINQ) [[unlikely]] {
    if (type == RTE_ETHER_TYPE_QINQ) return drop(pm, DropReason::StackedVlan);
    if (len < off + 4) return drop(pm, DropReason::MalformedVlan);
    pm.pcp = p[off] >> 5;
    pm.flags |= meta_flag::kVlan;
    type = load_be16(p + off + 2);
    off += 4;
    ++t.vlan;
    if (type == RTE_ETHER_TYPE_VLAN || type == RTE_ETHER_TYPE_QINQ) return drop(pm, DropReason::StackedVlan);
  }
  pm.l3_offset = static_cast<uint16_t>(off);
  uint32_t l3_end;  // end of the IP datagram per its own length field
  uint32_t h;
  Parsed result;
  if (type == RTE_ETHER_TYPE_IPV4) [[likely]] {
    if (len < off + sizeof(rte_ipv4_hdr)) [[unlikely]]
      return drop(pm, DropReason::MalformedIpv4);
    const uint8_t* ip = p + off;
    if ((ip[0] >> 4) != 4) [[unlikely]]
      return drop(pm, DropReason::MalformedIpv4);
    const uint32_t ihl = (ip[0] & 0x0F) * 4u;
    if (ihl < 20 || len < off + ihl) [[unlikely]]
      return drop(pm, DropReason::BadIpv4Ihl);
    const uint32_t tot = load_be16(ip + 2);
    if (tot < ihl || off + tot > m->pkt_len) [[unlikely]]
      return drop(pm, DropReason::BadIpv4Length);
    // RFC 1812 5.2.2: a router verifies the header checksum. Forwarding a bad one would only
    // move the error downstream.
    if (!ipv4_header_sum_ok(m, ip, ihl)) [[unlikely]]
      return drop(pm, DropReason::BadIpv4Checksum);
    pm.l3 = L3Type::Ipv4;
    pm.dscp = ip[1] >> 2;
    pm.ecn = ip[1] & 0x3;
    // Non-first fragments carry no L4 header.
    const bool later_fragment = (load_be16(ip + 6) & RTE_IPV4_HDR_OFFSET_MASK) != 0;
    pm.ip_proto = later_fragment ? 0 : ip[9];
    h = crc32c_u32(load_le32(ip + 12), seed);
    h = crc32c_u32(load_le32(ip + 16), h);
    l3_end = off + tot;
    off += ihl;
    ++t.ipv4;
    result = Parsed::Ipv4;
  } else if (type == RTE_ETHER_TYPE_IPV6) {
    if (len < off + sizeof(rte_ipv6_hdr)) return drop(pm, DropReason::MalformedIpv6);
    const uint8_t* ip = p + off;
    const uint32_t vtc = load_be32(ip);
    if ((vtc >> 28) != 6) return drop(pm, DropReason::MalformedIpv6);
    const uint32_t plen = load_be16(ip + 4);
    if (off + sizeof(rte_ipv6_hdr) + plen > m->pkt_len) return drop(pm, DropReason::BadIpv6Length);
    pm.l3 = L3Type::Ipv6;
    const uint8_t tclass = static_cast<uint8_t>(vtc >> 20);
    pm.dscp = tclass >> 2;
    pm.ecn = tclass & 0x3;
    pm.ip_proto = ip[6];
    // Source and destination addresses, 32 bytes from offset 8, as eight CRC32-C words.
    h = seed;
    for (int k = 0; k < 8; ++k) h = crc32c_u32(load_le32(ip + 8 + 4 * k), h);
    l3_end = off + sizeof(rte_ipv6_hdr) + plen;
    off += sizeof(rte_ipv6_hdr);
    ++t.ipv6;
    result = Parsed::Ipv6;
  } else if (type == kEtherTypeMacControl) {
    // MAC control (PAUSE/PFC): link-local, never routed.
    if (m->pkt_len < off + 2) return drop(pm, DropReason::MalformedMacControl);
    return Parsed::MacControl;
  } else if (type == RTE_ETHER_TYPE_ARP || type == RTE_ETHER_TYPE_LLDP) {
    // For the control plane when the switch has addresses (l3_input's `local` edge), else a
    // non-IP drop; the frame itself is checked there.
    pm.drop_reason = DropReason::NonIp;
    return type == RTE_ETHER_TYPE_ARP ? Parsed::Arp : Parsed::Lldp;
  } else {
    return drop(pm, DropReason::NonIp);
  }
  if (pm.ip_proto == IPPROTO_UDP) [[likely]] {
    if (len < off + sizeof(rte_udp_hdr) || off + sizeof(rte_udp_hdr) > l3_end) [[unlikely]]
      return drop(pm, DropReason::MalformedUdp);
    const uint8_t* udp = p + off;
    const uint32_t ulen = load_be16(udp + 4);
    if (ulen < sizeof(rte_udp_hdr) || off + ulen > l3_end) [[unlikely]]
      return drop(pm, DropReason::MalformedUdp);
    pm.flags |= meta_flag::kUdp;
    pm.l4_offset = static_cast<uint16_t>(off);
    // Source and destination port in one word; for RoCE the source port is the entropy.
    h = crc32c_u32(load_le32(udp), h);
    ++t.udp;
    if (load_be16(udp + 2) == kRoceUdpPort) [[likely]] {
      const uint32_t bth = off + sizeof(rte_udp_hdr);
      if (ulen < sizeof(rte_udp_hdr) + kBthLen + kIcrcLen || len < bth + kBthLen) [[unlikely]]
        return drop(pm, DropReason::MalformedBth);
      pm.flags |= meta_flag::kRoce;
      pm.bth_opcode = p[bth];
      pm.dest_qp = load_be32(p + bth + 4) & 0xFFFFFF;
      pm.psn = load_be32(p + bth + 8) & 0xFFFFFF;
      ++t.roce;
      if (pm.bth_opcode == kCnpOpcode) [[unlikely]] {
        pm.flags |= meta_flag::kCnp;
        ++t.cnp;
      }
    }
  }
  pm.flow_hash = flow_hash_final(crc32c_u8(pm.ip_proto, h));
  return result;
}

}  // namespace rs::parse
