// Per-packet metadata in the mbuf private area: written by the stages, read by the ones after
// them and by the traffic manager. Kept within one cache line (the mbuf's third).
#pragma once
#include <rte_mbuf.h>

#include <cstdint>

#include "dataplane/core/drop_reason.h"

namespace rs {

enum class L3Type : uint8_t { None = 0, Ipv4 = 1, Ipv6 = 2 };

namespace meta_flag {
inline constexpr uint8_t kVlan = 1u << 0;
inline constexpr uint8_t kUdp = 1u << 1;
inline constexpr uint8_t kRoce = 1u << 2;  // UDP 4791 with a complete BTH and ICRC
inline constexpr uint8_t kCnp = 1u << 3;   // BTH opcode 0x81
// Charged to its ingress PG by the ingress worker before a handoff (the egress owner must
// not charge it again, and gives it back when the packet leaves).
inline constexpr uint8_t kPgCharged = 1u << 4;
// A mirror session's copy (ports/port_mirror.h): lossy whatever its class, charged to no PG,
// never mirrored again.
inline constexpr uint8_t kMirrorCopy = 1u << 5;
// Made or sent by the switch's control plane (an ARP reply, an ICMP error, a packet held while
// its next hop was resolved): lossy whatever its class and charged to no PG, as a CPU port's
// traffic is.
inline constexpr uint8_t kLocalOrigin = 1u << 6;
// What an egress queue charges to no ingress PG.
inline constexpr uint8_t kNoPg = kMirrorCopy | kLocalOrigin;
}  // namespace meta_flag

// Why a packet leaves the pipeline for the control plane (the `local` edges to the punt stage).
enum class PuntReason : uint8_t {
  None = 0,
  Arp,         // an ARP frame
  Local,       // to one of the switch's addresses (ping, neighbour discovery)
  Glean,       // its next hop's MAC is not known yet
  TtlExpired,  // TTL / hop limit ran out: ICMP time exceeded
  NoRoute,     // no route, on a port that answers with ICMP destination unreachable
  Lldp,        // an LLDP frame (the neighbour's identity and its DCBX settings)
};

struct PacketMeta {
  // Written by the pipeline for every packet it receives (Pipeline::run); the first stage
  // keeps them when it fills in the rest.
  uint16_t in_port;
  uint16_t trace;      // 0: not traced; else the packet's id in its worker's trace (core/trace.h)
  uint16_t out_port;
  uint16_t l3_offset;  // bytes from the start of the frame
  uint16_t l4_offset;  // 0 when there is no L4 header we understand
  uint16_t group;      // next-hop group from the route lookup
  uint32_t flow_hash;  // 5-tuple hash; the UDP source port carries RoCE's entropy
  uint32_t nexthop;    // index into Fib::nexthops once a member is chosen
  L3Type l3;
  uint8_t flags;
  uint8_t pcp;
  uint8_t dscp;
  uint8_t ecn;
  uint8_t tc;     // traffic class; also the ingress priority group
  uint8_t queue;  // egress queue 0..7
  uint8_t ip_proto;
  uint8_t bth_opcode;
  DropReason drop_reason;
  PuntReason punt;  // set by the stage that takes a `local` edge
  uint32_t dest_qp;
  uint32_t psn;
  // The VLAN of a frame the bridge hands to the router (a VLAN interface's, SVI): where the
  // switch answers it from; 0 for every other frame.
  uint16_t vlan;
};
static_assert(sizeof(PacketMeta) <= 48, "PacketMeta must stay within the mbuf private area budget");
// What the pipeline stamps at entry is one 32-bit word (Pipeline::run).
static_assert(offsetof(PacketMeta, in_port) == 0 && offsetof(PacketMeta, trace) == 2);
inline constexpr std::size_t kMetaStampBytes = 4;

// A whole cache line, not just the 8-byte alignment rte_pktmbuf_pool_create demands: the
// packet data starts at mbuf + 128 + priv + headroom, and with a 40-byte area a 64-byte frame
// straddles two cache lines (one more line for the PMD to copy into and for us to parse).
inline constexpr uint16_t kMbufPrivSize = static_cast<uint16_t>(RTE_CACHE_LINE_ROUNDUP(sizeof(PacketMeta)));

inline PacketMeta& meta(rte_mbuf* m) { return *static_cast<PacketMeta*>(rte_mbuf_to_priv(m)); }
// The mbuf whose private area holds pm (its inverse).
inline rte_mbuf* mbuf_of(PacketMeta* pm) { return reinterpret_cast<rte_mbuf*>(reinterpret_cast<char*>(pm) - sizeof(rte_mbuf)); }
inline const rte_mbuf* mbuf_of(const PacketMeta* pm) {
  return reinterpret_cast<const rte_mbuf*>(reinterpret_cast<const char*>(pm) - sizeof(rte_mbuf));
}

}  // namespace rs
