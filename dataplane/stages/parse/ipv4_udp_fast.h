// The straight-through parse of the shape almost every packet of a RoCE fabric has: untagged
// IPv4, no options, not a fragment, UDP, a valid header sum, lengths that agree with the
// frame. Checked with a few wide compares and filled straight through; anything else
// (including every malformed packet) returns false and takes the parser's general path, which
// names the drop reason. Shared by the parser and the ipv4_fastpath stage, so both fill the
// same metadata (the parser tests run every shape through both paths).
#pragma once
#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_hash_crc.h>
#include <rte_ip.h>
#include <rte_udp.h>

#include "dataplane/core/packet_meta.h"

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

inline uint16_t load_be16(const uint8_t* p) {
  uint16_t v;
  __builtin_memcpy(&v, p, 2);
  return rte_be_to_cpu_16(v);
}

// RFC 1071 sum of an IPv4 header; a valid one (checksum included) folds to 0xFFFF. The common
// 20-byte header is five 32-bit words; options fall back to DPDK's generic loop.
// Why a modulo instead of folding: 2^16 = 1 (mod 0xFFFF), so the one's-complement sum folds to
// 0xFFFF exactly when the plain sum of the words is a non-zero multiple of 0xFFFF, in either
// byte order (a byte swap multiplies by 256, which is invertible mod 0xFFFF). The sum is never
// zero (the version nibble is not), and the compiler turns "% 0xFFFF == 0" into one multiply
// and one compare instead of four folds.
inline bool ipv4_header_sum_ok(const rte_mbuf* m, const uint8_t* ip, uint32_t ihl) {
  const uint64_t flags = m->ol_flags & RTE_MBUF_F_RX_IP_CKSUM_MASK;
  if (flags == RTE_MBUF_F_RX_IP_CKSUM_GOOD) return true;  // the NIC already checked it
  if (flags == RTE_MBUF_F_RX_IP_CKSUM_BAD) return false;
  if (ihl != 20) return rte_raw_cksum(ip, ihl) == 0xFFFF;
  const uint64_t sum = uint64_t{load_le32(ip)} + load_le32(ip + 4) + load_le32(ip + 8) + load_le32(ip + 12) +
                       load_le32(ip + 16);
  return sum % 0xFFFF == 0;
}

// What the fast path writes for every packet it takes, before the per-packet fields.
constexpr PacketMeta fast_template() {
  PacketMeta x{};
  x.out_port = kInvalidPort;
  x.l3_offset = sizeof(rte_ether_hdr);
  x.l4_offset = sizeof(rte_ether_hdr) + sizeof(rte_ipv4_hdr);
  x.l3 = L3Type::Ipv4;
  x.ip_proto = IPPROTO_UDP;
  x.flags = meta_flag::kUdp;
  return x;
}
inline constexpr PacketMeta kFastTemplate = fast_template();

// Burst tallies kept in registers by the callers (every fast packet is IPv4 and UDP).
struct FastTally {
  uint32_t ipv4 = 0, roce = 0, cnp = 0;
};

// Fills the metadata (keeping in_port) and returns true when the frame has the fast shape.
// Always inline into the caller's burst loop with the tallies in registers: every byte is
// read before any metadata is written, so the compiler need not reload the frame after a byte
// store to meta.
[[gnu::always_inline]] inline bool ipv4_udp_fast(rte_mbuf* m, uint32_t seed, FastTally& t) {
  const uint8_t* p = rte_pktmbuf_mtod(m, const uint8_t*);
  constexpr uint32_t kL3 = sizeof(rte_ether_hdr), kL4 = kL3 + sizeof(rte_ipv4_hdr), kBth = kL4 + sizeof(rte_udp_hdr);
  if (m->data_len < kBth + kBthLen) return false;
  // EtherType 0x0800 then version/IHL 0x45, as the bytes sit in memory (TOS masked off).
  const uint32_t w_type = load_le32(p + 12);
  // Fragment offset (flags masked off), TTL (masked off), protocol 17.
  const uint32_t w_frag = load_le32(p + kL3 + 6);
  if ((w_type & 0x00FFFFFF) != 0x00450008 || (w_frag & 0xFF00FF1F) != 0x11000000) return false;
  const uint32_t tot = load_be16(p + kL3 + 2);
  const uint32_t ulen = load_be16(p + kL4 + 4);
  // ulen >= 8 and 20 + ulen <= tot imply tot >= 28.
  if (ulen < sizeof(rte_udp_hdr) || 20 + ulen > tot || kL3 + tot > m->pkt_len) return false;
  uint32_t ports;
  __builtin_memcpy(&ports, p + kL4, 4);
  const bool roce = (ports >> 16) == RTE_BE16(kRoceUdpPort);
  if (roce && ulen < sizeof(rte_udp_hdr) + kBthLen + kIcrcLen) return false;
  if (!ipv4_header_sum_ok(m, p + kL3, 20)) return false;
  // Every byte the metadata needs, read before the first store to it.
  const uint8_t tos = p[kL3 + 1];
  uint32_t h = rte_hash_crc_4byte(load_le32(p + kL3 + 12), seed);
  h = rte_hash_crc_4byte(load_le32(p + kL3 + 16), h);
  h = rte_hash_crc_4byte(ports, h);
  const uint8_t opcode = p[kBth];
  const uint32_t dest_qp = load_be32(p + kBth + 4) & 0xFFFFFF;
  const uint32_t psn = load_be32(p + kBth + 8) & 0xFFFFFF;
  PacketMeta& pm = meta(m);
  const uint16_t in_port = pm.in_port;
  // The constant part in a few wide copies from a template, then the per-packet fields. Not
  // a PacketMeta built on the stack and copied whole: the copy's wide loads would wait on the
  // byte stores that built it (no store-to-load forwarding from several narrower stores).
  pm = kFastTemplate;
  pm.in_port = in_port;
  pm.dscp = tos >> 2;
  pm.ecn = tos & 0x3;
  pm.flow_hash = rte_hash_crc_1byte(IPPROTO_UDP, h);
  ++t.ipv4;
  if (roce) {
    const bool cnp = opcode == kCnpOpcode;
    pm.flags = static_cast<uint8_t>(meta_flag::kUdp | meta_flag::kRoce | (cnp ? meta_flag::kCnp : 0));
    pm.bth_opcode = opcode;
    pm.dest_qp = dest_qp;
    pm.psn = psn;
    ++t.roce;
    t.cnp += cnp;
  }
  return true;
}

}  // namespace rs::parse
