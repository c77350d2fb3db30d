// RunningState::settings_set: port and buffer settings at run time, checked by the config
// loader itself (one model: what a request may set is what a file may say, with the same
// checks and the same key paths in its errors).
#include <fmt/core.h>

#include <stdexcept>
#include <tuple>

#include "control/config/config_dump.h"
#include "control/config/config_loader.h"
#include "control/runtime/running_state.h"

namespace rs {

void RunningState::settings_set(std::size_t op, SwitchConfig next) {
  require_txn();
  next.groups.clear();  // routes and groups are the FIB's; only what the dump needs to load stays
  next.routes.clear();
  SwitchConfig loaded;
  try {
    loaded = load_config_text(dump_config(next), "request");
  } catch (const ConfigError& e) {
    throw OpError{e.path, e.reason};
  } catch (const std::invalid_argument& e) {  // a value no file can hold
    throw OpError{"", e.what()};
  }
  // What the packets in the buffer were accounted by stays as the switch started.
  if (loaded.mmu.pool.cell_size != base_.mmu.pool.cell_size)
    throw OpError{"buffer.pool.cell_size", fmt::format("set at start-up ({} bytes): queued packets are counted in cells", base_.mmu.pool.cell_size)};
  if (loaded.mmu.pfc_enable != base_.mmu.pfc_enable || loaded.mmu.tc_to_pg != base_.mmu.tc_to_pg ||
      loaded.mmu.pfc_to_queue != base_.mmu.pfc_to_queue)
    throw OpError{"qos", "pfc_enable, tc_to_pg and pfc_to_queue are set at start-up: the buffer's PG accounting follows them"};
  for (std::size_t p = 0; p < base_.ports.size(); ++p)
    for (int g = 0; g < 8; ++g)
      if (loaded.ports[p].lossless.pg[g].lossless != base_.ports[p].lossless.pg[g].lossless)
        throw OpError{"buffer.pg", fmt::format("port {} PG {} would become {}: which PGs are lossless is set at start-up", base_.ports[p].name, g,
                                               loaded.ports[p].lossless.pg[g].lossless ? "lossless" : "lossy")};
  struct Saved {
    std::vector<std::tuple<EgressConfig, PortLosslessConfig, rte_ether_addr>> ports;
    MmuConfig mmu;
    LoadViewConfig load_view;
  } before;
  for (auto& ps : base_.ports) before.ports.emplace_back(ps.egress, ps.lossless, ps.mac);
  before.mmu = base_.mmu;
  before.load_view = base_.load_view;
  txn_.undo.push_back([this, before] {
    for (std::size_t p = 0; p < base_.ports.size(); ++p)
      std::tie(base_.ports[p].egress, base_.ports[p].lossless, base_.ports[p].mac) = before.ports[p];
    base_.mmu = before.mmu;
    base_.load_view = before.load_view;
  });
  for (std::size_t p = 0; p < base_.ports.size(); ++p) {
    base_.ports[p].egress = loaded.ports[p].egress;
    base_.ports[p].lossless = loaded.ports[p].lossless;
    base_.ports[p].mac = loaded.ports[p].mac;
  }
  base_.mmu = loaded.mmu;
  base_.load_view = loaded.load_view;
  txn_.settings_ops.push_back(op);
}

}  // namespace rs
