// The 802.1Q tag a frame leaves a port with, in its VLAN: kept with the VLAN's id, popped, or
// pushed, as the egress port carries the VLAN (tagged or not). One inline body for the bridge
// (switched frames), rewrite_enqueue (routed frames out of a VLAN interface) and the control
// plane's frames and held packets on a VLAN interface. Offsets in the metadata follow the tag.
#pragma once
#include <rte_ether.h>
#include <rte_mbuf.h>

#include <cstring>

#include "dataplane/core/packet_meta.h"

namespace rs {

enum class Retag : uint8_t { Kept, Pushed, Popped, NoRoom };

[[gnu::always_inline]] inline Retag retag_frame(rte_mbuf* m, PacketMeta& pm, uint16_t vlan, bool tagged_out) {
  const bool tagged_in = pm.flags & meta_flag::kVlan;
  if (tagged_in && tagged_out) {
    // Kept, with the VLAN's id: a priority-tagged frame (VID 0) or one tagged with an access
    // VLAN leaves a trunk in its VLAN. The PCP stays.
    uint8_t* p = rte_pktmbuf_mtod(m, uint8_t*);
    p[14] = static_cast<uint8_t>((p[14] & 0xF0) | (vlan >> 8));
    p[15] = static_cast<uint8_t>(vlan);
    return Retag::Kept;
  }
  if (tagged_in) {
    uint8_t* p = rte_pktmbuf_mtod(m, uint8_t*);
    std::memmove(p + 4, p, 2 * RTE_ETHER_ADDR_LEN);
    rte_pktmbuf_adj(m, 4);
    pm.flags &= static_cast<uint8_t>(~meta_flag::kVlan);
    pm.l3_offset = static_cast<uint16_t>(pm.l3_offset - 4);
    if (pm.l4_offset) pm.l4_offset = static_cast<uint16_t>(pm.l4_offset - 4);
    return Retag::Popped;
  }
  if (!tagged_out) return Retag::Kept;
  uint8_t* p = reinterpret_cast<uint8_t*>(rte_pktmbuf_prepend(m, 4));
  if (!p) [[unlikely]]  // no headroom: never with DPDK's default, but not a crash either
    return Retag::NoRoom;
  std::memmove(p, p + 4, 2 * RTE_ETHER_ADDR_LEN);
  // The priority the class pauses on downstream: the traffic class (SONiC's maps are identity).
  const uint16_t tci = static_cast<uint16_t>((pm.tc & 7) << 13 | vlan);
  p[12] = 0x81, p[13] = 0x00, p[14] = static_cast<uint8_t>(tci >> 8), p[15] = static_cast<uint8_t>(tci);
  pm.flags |= meta_flag::kVlan;
  pm.pcp = pm.tc & 7;
  pm.l3_offset = static_cast<uint16_t>(pm.l3_offset + 4);
  if (pm.l4_offset) pm.l4_offset = static_cast<uint16_t>(pm.l4_offset + 4);
  return Retag::Pushed;
}

}  // namespace rs
