// What the Switch builds from its configuration for the workers, at start-up and again when the
// control plane changes it (switch_settings.cc): the shared buffer's inputs, the lossless
// classes, the ports that answer a miss with ICMP unreachable, the VLAN table.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "dataplane/switch/switch_config.h"
#include "dataplane/tables/vlan_table.h"

namespace rs {

// What the shared buffer is sized from: each port's lossless settings, every queue's static
// byte limit summed, and whether a queue uses a dynamic threshold.
struct BufferInputs {
  std::vector<PortLosslessConfig> lossless;
  uint64_t static_sum = 0;
  bool dynamic = false;
};
BufferInputs buffer_inputs(const SwitchConfig& cfg);
// The traffic classes whose priority (their PG) is in pfc_enable: what a worker counts as a
// lossless drop before a queue, the priorities lossless_drops() reads the queues of.
uint8_t lossless_tcs(const MmuConfig& mc);
// The ports with icmp_unreachable, one bit a port (PuntPolicy::unreachable_ports).
uint64_t unreachable_ports(const SwitchConfig& cfg);
// VLAN membership, the VLAN interfaces' MACs and the bridge's limits as the workers read them.
std::unique_ptr<VlanTable> vlan_table(const SwitchConfig& cfg);

}  // namespace rs
