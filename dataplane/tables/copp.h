// Control-plane policing (SONiC's CoPP trap groups, an ASIC's CPU queue policers): how many
// packets a second each port may send up to the control plane, per kind. The punt stage
// enforces it per port; what is over is dropped and counted. The defaults are SONiC's
// (files/image_config/copp/copp_cfg.j2: ARP and ND 600/s, ip2me 6000/s, LLDP 100/s), with the committed
// burst equal to a second's rate as there.
#pragma once
#include <array>
#include <cstdint>
#include <string_view>

#include "dataplane/core/gcra.h"

namespace rs {

enum class CoppClass : uint8_t { Arp, Ip2me, IcmpError, NeighMiss, Lldp, Count };
inline constexpr std::size_t kCoppClasses = static_cast<std::size_t>(CoppClass::Count);
// arp: ARP and IPv6 neighbour discovery; ip2me: other packets to the switch's addresses (ping);
// icmp_error: expired TTLs and misses answered with ICMP errors; neigh_miss: packets to a next
// hop whose MAC is being resolved; lldp: LLDP frames.
inline constexpr std::array<std::string_view, kCoppClasses> kCoppClassNames = {"arp", "ip2me", "icmp_error", "neigh_miss", "lldp"};

struct CoppPolicer {
  uint32_t pps = 0;    // 0: nothing of this kind goes up
  uint32_t burst = 0;  // packets let through at once after a quiet time
  bool operator==(const CoppPolicer&) const = default;
};

struct CoppConfig {
  std::array<CoppPolicer, kCoppClasses> policer = {{{600, 600}, {6000, 6000}, {600, 600}, {600, 600}, {100, 100}}};
  bool operator==(const CoppConfig&) const = default;
};

// What the workers read of the switch's control-plane settings, published as the FIB is so that
// a change at run time reaches every worker at its next loop, never half written: each kind's
// policer (the punt stage), and the ports whose misses are answered with ICMP destination
// unreachable (ip_route), one bit a port.
struct PuntPolicy {
  std::array<GcraRate, kCoppClasses> rate{};
  uint64_t unreachable_ports = 0;

  static PuntPolicy of(const CoppConfig& c, uint64_t unreachable_ports) {
    PuntPolicy p;
    for (std::size_t k = 0; k < kCoppClasses; ++k) p.rate[k] = GcraRate::of(c.policer[k].pps, c.policer[k].burst);
    p.unreachable_ports = unreachable_ports;
    return p;
  }
};

}  // namespace rs
