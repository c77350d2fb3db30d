// The Switch's run-time settings (the control plane's port.set, buffer.set, qos.set, system.set):
// each reaches the workers as a table published under RCU or as a block its owner takes
// between two bursts, never as a field written under a running worker.
#include <fmt/core.h>
#include <rte_malloc.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "dataplane/switch/switch.h"
#include "dataplane/switch/switch_tables.h"

namespace rs {

void Switch::reconfigure_ports(const SwitchConfig& next, const std::function<void()>& wait) {
  if (next.ports.size() != ports_.size()) throw std::runtime_error("the ports are set at start-up");
  if (next.mmu.pool.cell_size != cfg_.mmu.pool.cell_size) throw std::runtime_error("buffer.pool.cell_size is set at start-up");
  auto all_applied = [&] { return std::all_of(egress_.begin(), egress_.end(), [](auto& e) { return e->applied(); }); };
  while (!all_applied())
    if (wait) wait();
  // Every port gets its settings, changed or not: each owner re-reads the pool's admission
  // mode. The blocks (and any larger ring) are made before anything is published.
  struct Blocks {
    std::vector<std::unique_ptr<EgressPort::Settings>> v;
    ~Blocks() {
      for (auto& s : v)
        if (s)
          for (auto* slots : s->slots) rte_free(slots);
    }
  } blocks;
  for (std::size_t p = 0; p < ports_.size(); ++p) {
    auto& s = blocks.v.emplace_back(std::make_unique<EgressPort::Settings>());
    s->egress = next.ports[p].egress;
    s->lossless = next.ports[p].lossless;
    s->pfcwd = next.mmu.pfcwd;
    for (int q = 0; q < 8; ++q) {
      const uint32_t cap = PacketFifo::capacity_for(s->egress.limits[q].packets);
      if (cap <= egress_[p]->fifo(q).capacity()) continue;  // the ring holds the new limit
      s->slots[q] = static_cast<rte_mbuf**>(rte_zmalloc("pkt_fifo", sizeof(rte_mbuf*) * cap, 64));
      if (!s->slots[q]) throw std::runtime_error(fmt::format("port {} queue {}: no memory for {} packets", next.ports[p].name, q, cap));
      s->capacity[q] = cap;
    }
  }
  const BufferInputs in = buffer_inputs(next);
  sb_->reconfigure(next.mmu, in.lossless, in.static_sum, in.dynamic);  // throws before anything changed
  bool macs_changed = false;
  for (std::size_t p = 0; p < ports_.size(); ++p) {
    blocks.v[p]->mac = next.ports[p].mac;
    blocks.v[p]->load_view = next.load_view;
    macs_changed |= !rte_is_same_ether_addr(&next.ports[p].mac, &cfg_.ports[p].mac);
  }
  if (macs_changed) {
    auto macs = std::make_unique<PortMacs>();
    for (std::size_t p = 0; p < ports_.size(); ++p) macs->mac[p] = next.ports[p].mac;
    port_macs_.publish(std::move(macs));
  }
  for (std::size_t p = 0; p < ports_.size(); ++p) egress_[p]->offer(std::move(blocks.v[p]));  // all applied above: accepted
  for (auto& w : workers_) w->wd_poll_ns.store(next.mmu.pfcwd.enabled ? next.mmu.pfcwd.poll_ns : 0, std::memory_order_relaxed);
  for (std::size_t p = 0; p < ports_.size(); ++p) {
    cfg_.ports[p].egress = next.ports[p].egress;
    cfg_.ports[p].lossless = next.ports[p].lossless;
    cfg_.ports[p].mac = next.ports[p].mac;
  }
  cfg_.mmu = next.mmu;
  cfg_.load_view = next.load_view;
  load_.configure(next.load_view);  // the record; each owner has its copy in its block
  while (!all_applied())
    if (wait) wait();
  for (auto& e : egress_) e->collect();
}

void Switch::set_host_settings(const SwitchConfig& next) {
  // Without a bridge the VLAN sections are empty (RunningState::host_set refuses them).
  const std::unique_ptr<VlanTable> before = fdb_ ? vlan_table(cfg_) : nullptr;
  copy_host_settings(cfg_, next);
  if (local_) punt_policy_.publish(std::make_unique<PuntPolicy>(PuntPolicy::of(cfg_.copp, unreachable_ports(cfg_))));
  // The VLAN table and the FDB only when the table changed (an address does not change it).
  if (auto t = fdb_ ? vlan_table(cfg_) : nullptr; t && std::memcmp(t.get(), before.get(), sizeof(VlanTable)) != 0) {
    vlans_.publish(std::move(t));
    // A station learned on a port that left its VLAN is no longer behind it there: unicast to
    // it floods again (and is learned anew) rather than being filtered. What workers still on
    // the old table report is not learned (Fdb::poll checks the new one).
    const VlanTable& now = *vlans_.load();
    fdb_->flush_if([&now](uint16_t vlan, uint16_t port) { return !((now.vlan[vlan].members >> (port & 63)) & 1); });
  }
  ++host_generation_;
}

void Switch::publish_qos(const QosMaps& maps) {
  qos_ = maps;
  classify_.publish(std::make_unique<TcQueueMap>(maps));
}

}  // namespace rs
