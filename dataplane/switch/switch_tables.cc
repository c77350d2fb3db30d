// What the Switch builds from its configuration for the workers, at start-up and again when
// the control plane changes it (switch_tables.h).
#include "dataplane/switch/switch_tables.h"

#include <algorithm>

namespace rs {

uint64_t unreachable_ports(const SwitchConfig& cfg) {
  uint64_t m = 0;
  for (std::size_t i = 0; i < cfg.ports.size(); ++i)
    if (cfg.ports[i].icmp_unreachable) m |= uint64_t{1} << i;
  return m;
}

std::unique_ptr<VlanTable> vlan_table(const SwitchConfig& cfg) {
  auto t = std::make_unique<VlanTable>();
  for (std::size_t i = 0; i < cfg.ports.size(); ++i) {
    const PortSpec& ps = cfg.ports[i];
    const uint64_t bit = uint64_t{1} << i;
    if (ps.access_vlan) {
      t->access[i] = ps.access_vlan;
      t->vlan[ps.access_vlan].members |= bit;
    }
    for (uint16_t v : ps.tagged_vlans) {
      t->vlan[v].members |= bit;
      t->vlan[v].tagged |= bit;
    }
    if (ps.bridged()) t->bridged |= bit;
  }
  for (auto& v : cfg.vlan_interfaces) t->vlan[v.vlan].router = VlanTable::mac_word(v.mac.addr_bytes);
  t->flood = GcraRate::of(cfg.bridge.flood_pps, cfg.bridge.flood_burst);
  t->refresh_ns = std::min<uint64_t>(1'000'000'000, static_cast<uint64_t>(cfg.bridge.ageing_s * 1e9 / 4));
  return t;
}

BufferInputs buffer_inputs(const SwitchConfig& cfg) {
  BufferInputs in;
  for (auto& ps : cfg.ports) {
    in.lossless.push_back(ps.lossless);
    for (int q = 0; q < 8; ++q) {
      // A queue's bytes are charged in cells: its packet limit bounds the rounding.
      in.static_sum += ps.egress.limits[q].bytes + uint64_t{ps.egress.limits[q].packets} * cfg.mmu.pool.cell_size;
      in.dynamic |= ps.lossless.dynamic_th[q] != kNoDynamicTh;
    }
  }
  return in;
}
uint8_t lossless_tcs(const MmuConfig& mc) {
  uint8_t m = 0;
  for (int t = 0; t < 8; ++t)
    if (mc.pfc_enable & (1u << (mc.tc_to_pg[t] & 7))) m |= static_cast<uint8_t>(1u << t);
  return m;
}

}  // namespace rs
