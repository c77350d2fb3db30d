// A switch port on a RingPeer (fake_port.h), as the tests that build a Switch of ring ethdevs
// describe it: named p<index>, MAC 02:00:00:00:00:(0x10 + index).
#pragma once
#include <fmt/core.h>

#include "dataplane/switch/switch_config.h"
#include "tests/support/fake_port.h"

namespace rs::test {

inline PortSpec ring_port_spec(const RingPeer& peer, std::size_t index, double gbps) {
  PortSpec ps;
  ps.name = fmt::format("p{}", index);
  ps.kind = PortKind::Ethdev;
  ps.devargs = peer.devname();
  ps.mac = rte_ether_addr{{0x02, 0, 0, 0, 0, static_cast<uint8_t>(0x10 + index)}};
  ps.egress.speed_gbps = gbps;
  return ps;
}

}  // namespace rs::test
