// VLAN membership as the bridge stage reads it: per VLAN the member ports and which of them
// carry it tagged, one bit a port, and its router MAC when it has an interface (SVI); per port
// its access VLAN; and the bridge's flood limit and refresh interval. Published whole under RCU
// (RcuSnapshot<VlanTable>, built by the Switch from the config's vlans, ports[].vlan and
// bridge), so a change at run time reaches every worker at its next loop, never half made.
#pragma once
#include <array>
#include <cstdint>
#include <cstring>

#include "dataplane/core/gcra.h"
#include "dataplane/core/types.h"

namespace rs {

inline constexpr uint16_t kMaxVlanId = 4094;

// The bridge (L2 switching within VLANs): MAC ageing, the flood storm limit per port (broadcast,
// multicast and unknown unicast, SONiC's PORT_STORM_CONTROL), the FDB's size.
struct BridgeConfig {
  double ageing_s = 300;        // SONiC's and Linux's default
  uint32_t flood_pps = 100000;  // per ingress port; over it is dropped (bridge_storm); 0: no limit
  uint32_t flood_burst = 1000;
  uint32_t fdb_size = 16384;
  bool operator==(const BridgeConfig&) const = default;
};

struct VlanTable {
  struct Vlan {
    uint64_t members = 0;  // ports in the VLAN
    uint64_t tagged = 0;   // of them, those that carry it tagged
    // The VLAN's router interface (SVI): frames to this MAC (mac_word) are routed; 0 = none.
    uint64_t router = 0;
  };
  // A MAC as one word to compare, never 0 (bit 48 set).
  static uint64_t mac_word(const uint8_t* mac) {
    uint64_t w = 0;
    std::memcpy(&w, mac, 6);
    return w | uint64_t{1} << 48;
  }
  std::array<Vlan, kMaxVlanId + 1> vlan{};  // by VLAN id; an unused id has no members
  std::array<uint16_t, kMaxPorts> access{};  // per port: its untagged VLAN, 0 = none
  uint64_t bridged = 0;                       // ports in some VLAN
  GcraRate flood{};  // the flood storm limit, per ingress port (pps 0: no limit)
  // How often a known source's last-seen time is written: often enough that an active station
  // never ages out, rarely enough that its entry's line is not written every frame.
  uint64_t refresh_ns = 1'000'000'000;

  // The VLAN a frame on `port` belongs to (`vid` its tag's, 0 when untagged), or 0 when the
  // port does not carry it.
  // A frame tagged with the port's access VLAN belongs to it too, as Linux's bridge takes it.
  uint16_t ingress_vlan(uint16_t port, uint16_t vid) const {
    const uint16_t untagged = access[port & (kMaxPorts - 1)];
    if (vid == 0 || vid == untagged) return untagged;
    if (vid > kMaxVlanId) return 0;
    const Vlan& v = vlan[vid];
    return ((v.members & v.tagged) >> (port & 63)) & 1 ? vid : 0;
  }
};

}  // namespace rs
