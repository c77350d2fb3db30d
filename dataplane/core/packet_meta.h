// Per-packet metadata in the mbuf private area: written by the parser and the stages, read by
// the traffic manager. Kept within one cache line (the mbuf's third). One exception: a packet
// that ipv4_fastpath queues on a local port whose admission reads no metadata
// (EgressPort::reads_metadata) carries none but in_port, since nothing past the queue reads
// it; code that starts reading metadata after the queue must make that port report true.
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
inline constexpr uint8_t kTrace = 1u << 7;
}  // namespace meta_flag

struct PacketMeta {
  uint16_t in_port;
  uint16_t out_port;
  uint16_t l3_offset;  // bytes from the start of the frame
  uint16_t l4_offset;  // 0 when there is no L4 header we understand
  uint32_t flow_hash;  // 5-tuple hash; the UDP source port carries RoCE's entropy
  uint32_t nexthop;    // index into Fib::nexthops once a member is chosen
  uint16_t group;      // next-hop group from the route lookup
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
  uint32_t dest_qp;
  uint32_t psn;
};
static_assert(sizeof(PacketMeta) <= 40, "PacketMeta must stay within the mbuf private area budget");

// A whole cache line, not just the 8-byte alignment rte_pktmbuf_pool_create demands: the
// packet data starts at mbuf + 128 + priv + headroom, and with a 40-byte area a 64-byte frame
// straddled two cache lines (one more line for the PMD to copy into and for us to parse).
// Faster in 5 of 5 alternating linerate runs (3-10 %).
inline constexpr uint16_t kMbufPrivSize = static_cast<uint16_t>(RTE_CACHE_LINE_ROUNDUP(sizeof(PacketMeta)));

inline PacketMeta& meta(rte_mbuf* m) { return *static_cast<PacketMeta*>(rte_mbuf_to_priv(m)); }
// The inverse of meta(): the private area follows the mbuf header (rte_mbuf_to_priv).
inline rte_mbuf* mbuf_of(PacketMeta* pm) {
  return reinterpret_cast<rte_mbuf*>(reinterpret_cast<uint8_t*>(pm) - sizeof(rte_mbuf));
}

}  // namespace rs
