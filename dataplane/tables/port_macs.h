// The P4 program's port_mac table: each port's own MAC, the source of every frame it sends
// (rewrite) and of its PFC frames. Published as a whole under RCU (RcuSnapshot<PortMacs>), so
// a MAC changed at run time reaches every worker at its next loop, never half written.
#pragma once
#include <rte_ether.h>

#include <array>

#include "dataplane/core/types.h"

namespace rs {

struct PortMacs {
  std::array<rte_ether_addr, kMaxPorts> mac{};
};

}  // namespace rs
