#include "dataplane/stages/parse/parser.h"

#include "dataplane/stages/parse/ipv4_udp_fast.h"

#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_hash_crc.h>
#include <rte_ip.h>
#include <rte_udp.h>

namespace rs {
namespace {

using parse::kBthLen;
using parse::kCnpOpcode;
using parse::kIcrcLen;
using parse::kRoceUdpPort;
using parse::load_be32;

inline uint8_t drop(PacketMeta& pm, DropReason r) {
  pm.drop_reason = r;
  return kNextDrop;
}

}  // namespace

uint8_t Parser::classify(rte_mbuf* m) {
  PacketMeta& pm = meta(m);
  const uint16_t in_port = pm.in_port;
  pm = PacketMeta{};
  pm.in_port = in_port;
  pm.out_port = kInvalidPort;
  // Headers must sit in the first segment; jumbo chains still carry them there.
  const uint8_t* p = rte_pktmbuf_mtod(m, const uint8_t*);
  const uint32_t len = m->data_len;
  if (len < sizeof(rte_ether_hdr)) return drop(pm, DropReason::MalformedEth);
  uint16_t type = rte_be_to_cpu_16(reinterpret_cast<const rte_ether_hdr*>(p)->ether_type);
  uint32_t off = sizeof(rte_ether_hdr);
  if (type == RTE_ETHER_TYPE_VLAN || type == RTE_ETHER_TYPE_QINQ) {
    if (type == RTE_ETHER_TYPE_QINQ) return drop(pm, DropReason::StackedVlan);
    if (len < off + 4) return drop(pm, DropReason::MalformedVlan);
    pm.pcp = p[off] >> 5;
    pm.flags |= meta_flag::kVlan;
    type = static_cast<uint16_t>(p[off + 2] << 8 | p[off + 3]);
    off += 4;
    ++tally_[Vlan];
    if (type == RTE_ETHER_TYPE_VLAN || type == RTE_ETHER_TYPE_QINQ) return drop(pm, DropReason::StackedVlan);
  }
  pm.l3_offset = static_cast<uint16_t>(off);
  uint32_t l3_end;  // end of the IP datagram per its own length field
  uint32_t h = 0;
  if (type == RTE_ETHER_TYPE_IPV4) {
    if (len < off + sizeof(rte_ipv4_hdr)) return drop(pm, DropReason::MalformedIpv4);
    auto* ip = reinterpret_cast<const rte_ipv4_hdr*>(p + off);
    if ((ip->version_ihl >> 4) != 4) return drop(pm, DropReason::MalformedIpv4);
    const uint32_t ihl = (ip->version_ihl & 0x0F) * 4u;
    if (ihl < 20 || len < off + ihl) return drop(pm, DropReason::BadIpv4Ihl);
    const uint32_t tot = rte_be_to_cpu_16(ip->total_length);
    if (tot < ihl || off + tot > m->pkt_len) return drop(pm, DropReason::BadIpv4Length);
    // RFC 1812 5.2.2: a router verifies the header checksum; the sum over a valid header,
    // checksum included, is 0xFFFF. Forwarding a bad one would only move the error downstream.
    if (!parse::ipv4_header_sum_ok(m, reinterpret_cast<const uint8_t*>(ip), ihl)) return drop(pm, DropReason::BadIpv4Checksum);
    pm.l3 = L3Type::Ipv4;
    pm.dscp = ip->type_of_service >> 2;
    pm.ecn = ip->type_of_service & 0x3;
    pm.ip_proto = ip->next_proto_id;
    h = rte_hash_crc_4byte(ip->src_addr, seed_);
    h = rte_hash_crc_4byte(ip->dst_addr, h);
    l3_end = off + tot;
    // Non-first fragments carry no L4 header.
    const bool later_fragment = (rte_be_to_cpu_16(ip->fragment_offset) & RTE_IPV4_HDR_OFFSET_MASK) != 0;
    off += ihl;
    ++tally_[Ipv4];
    if (later_fragment) pm.ip_proto = 0;
  } else if (type == RTE_ETHER_TYPE_IPV6) {
    if (len < off + sizeof(rte_ipv6_hdr)) return drop(pm, DropReason::MalformedIpv6);
    auto* ip = reinterpret_cast<const rte_ipv6_hdr*>(p + off);
    const uint32_t vtc = rte_be_to_cpu_32(ip->vtc_flow);
    if ((vtc >> 28) != 6) return drop(pm, DropReason::MalformedIpv6);
    const uint32_t plen = rte_be_to_cpu_16(ip->payload_len);
    if (off + sizeof(rte_ipv6_hdr) + plen > m->pkt_len) return drop(pm, DropReason::BadIpv6Length);
    pm.l3 = L3Type::Ipv6;
    const uint8_t tclass = static_cast<uint8_t>(vtc >> 20);
    pm.dscp = tclass >> 2;
    pm.ecn = tclass & 0x3;
    pm.ip_proto = ip->proto;
    // Addresses sit at 2-byte alignment in the frame; rte_hash_crc() would load them as
    // uint64_t in place, so copy them out first.
    uint64_t a[4];
    __builtin_memcpy(a, ip->src_addr, 16);
    __builtin_memcpy(a + 2, ip->dst_addr, 16);
    h = rte_hash_crc_8byte(a[0], seed_);
    for (int k = 1; k < 4; ++k) h = rte_hash_crc_8byte(a[k], h);
    l3_end = off + sizeof(rte_ipv6_hdr) + plen;
    off += sizeof(rte_ipv6_hdr);
    ++tally_[Ipv6];
  } else if (type == 0x8808) {
    // MAC control (PAUSE/PFC): link-local, never routed.
    if (m->pkt_len < off + 2) return drop(pm, DropReason::MalformedMacControl);
    return MacControl;
  } else {
    return drop(pm, DropReason::NonIp);
  }
  if (pm.ip_proto == IPPROTO_UDP) {
    if (len < off + sizeof(rte_udp_hdr) || off + sizeof(rte_udp_hdr) > l3_end) return drop(pm, DropReason::MalformedUdp);
    auto* udp = reinterpret_cast<const rte_udp_hdr*>(p + off);
    const uint32_t ulen = rte_be_to_cpu_16(udp->dgram_len);
    if (ulen < sizeof(rte_udp_hdr) || off + ulen > l3_end) return drop(pm, DropReason::MalformedUdp);
    pm.flags |= meta_flag::kUdp;
    pm.l4_offset = static_cast<uint16_t>(off);
    // Source and destination port in one 4-byte word; for RoCE the source port is the entropy.
    uint32_t ports;
    __builtin_memcpy(&ports, &udp->src_port, 4);
    h = rte_hash_crc_4byte(ports, h);
    ++tally_[Udp];
    if (rte_be_to_cpu_16(udp->dst_port) == kRoceUdpPort) {
      const uint32_t bth = off + sizeof(rte_udp_hdr);
      if (ulen < sizeof(rte_udp_hdr) + kBthLen + kIcrcLen || len < bth + kBthLen) return drop(pm, DropReason::MalformedBth);
      pm.flags |= meta_flag::kRoce;
      pm.bth_opcode = p[bth];
      pm.dest_qp = load_be32(p + bth + 4) & 0xFFFFFF;
      pm.psn = load_be32(p + bth + 8) & 0xFFFFFF;
      ++tally_[Roce];
      if (pm.bth_opcode == kCnpOpcode) {
        pm.flags |= meta_flag::kCnp;
        ++tally_[Cnp];
      }
    }
  }
  pm.flow_hash = rte_hash_crc_1byte(pm.ip_proto, h);
  return Ip;
}

void Parser::flush_tally(const parse::FastTally& t) {
  // Every fast-path packet is IPv4 and UDP.
  tally_[Ipv4] += t.ipv4;
  tally_[Udp] += t.ipv4;
  tally_[Roce] += t.roce;
  tally_[Cnp] += t.cnp;
  for (std::size_t c = 0; c < tally_.size(); ++c) {
    if (tally_[c]) count(static_cast<Ctr>(c), tally_[c]);
    tally_[c] = 0;
  }
}

uint8_t Parser::parse_one(rte_mbuf* m) {
  parse::FastTally t;
  const uint8_t e = parse::ipv4_udp_fast(m, seed_, t) ? uint8_t{Ip} : classify(m);
  flush_tally(t);
  return e;
}

void Parser::process(Burst& in, uint8_t* next, WorkerContext&) {
  parse::FastTally t;
  const uint16_t n = in.n;
  for (uint16_t i = 0; i < n; ++i) {
    rte_mbuf* m = in.pkts[i];
    next[i] = parse::ipv4_udp_fast(m, seed_, t) ? uint8_t{Ip} : classify(m);
  }
  flush_tally(t);  // counters are shared-line stores: once per burst, not per packet
}

REGISTER_STAGE(Parser);

}  // namespace rs
