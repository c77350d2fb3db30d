#include "dataplane/switch/switch.h"

#include <fmt/core.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_rcu_qsbr.h>
#include <rte_ring.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "dataplane/core/mbuf_pool.h"
#include "dataplane/core/object_name.h"
#include "dataplane/emu/wired_host.h"
#include "dataplane/ports/ethdev_port.h"
#include "dataplane/routing/policy_set.h"
#include "dataplane/switch/mirror_sessions.h"
#include "dataplane/switch/switch_tables.h"
#include "pipelines_embedded.h"

namespace rs {
Switch::Switch(const SwitchConfig& cfg, uint64_t now_ns) : cfg_(cfg) {
  if (cfg.ports.size() > kMaxPorts) throw std::runtime_error("too many ports");
  if (cfg.workers == 0 || cfg.workers > kMaxWorkers) throw std::runtime_error("bad worker count");
  start_ns_ = now_ns;
  for (const LinkEvent& ev : cfg.link_events)
    if (ev.port >= cfg.ports.size()) throw std::runtime_error(fmt::format("link event on port {}: the switch has {} ports", ev.port, cfg.ports.size()));
  std::stable_sort(cfg_.link_events.begin(), cfg_.link_events.end(), [](auto& a, auto& b) { return a.at_ns < b.at_ns; });
  load_.configure(cfg.load_view);
  for (std::size_t i = 0; i < cfg.ports.size(); ++i) {
    admin_up_[i] = cfg.ports[i].admin_up;
    load_.set_link(static_cast<uint16_t>(i), admin_up_[i]);
  }
  PipelineSpec spec = parse_pipeline(cfg.pipeline_text.empty() ? std::string(kPipelineL3Roce) : cfg.pipeline_text,
                                     cfg.pipeline_text.empty() ? "pipelines/l3_roce.yaml" : cfg.pipeline_source);
  // Per-lcore caches as large as DPDK allows, so a poll's worth of packets (kRxBurstsPerPoll
  // rx bursts) is allocated and freed within the cache, never through the shared ring; but
  // together (each may hold 1.5 x its size) they keep at most about a fifth of a small pool.
  const unsigned cache = std::min<unsigned>(RTE_MEMPOOL_CACHE_MAX_SIZE, cfg.mbufs / (8 * (cfg.workers + 1)));
  // Emulated NICs with a path MTU above 1 KiB put frames in the pool's mbufs whole (one segment).
  uint32_t room = RTE_MBUF_DEFAULT_BUF_SIZE;
  for (auto& ps : cfg.ports)
    if ((ps.kind == PortKind::EmulatedHost || ps.kind == PortKind::Nic) && ps.host.nic.enabled)
      room = std::max<uint32_t>(room, RTE_PKTMBUF_HEADROOM + nic::kHeaders + nic::kRethLen + ps.host.nic.rc.mtu + 4);
  pool_ = create_mbuf_pool({.name = unique_object_name("rs_pool"), .mbufs = cfg.mbufs, .cache = cache, .priv_size = kMbufPrivSize,
                            .data_room = static_cast<uint16_t>(room)});
  if (!pool_) throw std::runtime_error(fmt::format("mbuf pool: {}", rte_strerror(rte_errno)));
  try {
    const BufferInputs in = buffer_inputs(cfg);
    sb_ = std::make_unique<SharedBuffer>(cfg.mmu, in.lossless, cfg.workers, in.static_sum, in.dynamic);
    for (std::size_t i = 0; i < cfg.ports.size(); ++i) {
      const PortSpec& ps = cfg.ports[i];
      std::unique_ptr<Port> p;
      if (ps.kind == PortKind::Ethdev) {
        p = std::make_unique<EthdevPort>(ps.devargs, pool_);
      } else if (ps.kind == PortKind::Link) {
        if (!ps.make_link) throw std::runtime_error(fmt::format("port {}: a link port with no cable", ps.name));
        p = ps.make_link();
      } else {
        // A host pauses a flow on the priority the switch puts it in, unless told otherwise.
        HostSpec hs = ps.host;
        for (auto& f : hs.flows)
          if (f.priority < 0) f.priority = static_cast<int8_t>(cfg.mmu.tc_to_pg[cfg.qos.dscp_to_tc[f.dscp & 63] & 7]);
        for (std::size_t d = 0; d < 64; ++d) hs.priority_of_dscp[d] = cfg.mmu.tc_to_pg[cfg.qos.dscp_to_tc[d] & 7] & 7;
        // A receiver group's ports share the first one's flow tracker, which has one writer:
        // the worker that owns them all (unpinned members follow the first port, below).
        const EmulatedHost* leader = nullptr;
        for (std::size_t j = 0; j < i && !leader && !hs.receiver.empty(); ++j)
          if (cfg.ports[j].kind == PortKind::EmulatedHost && cfg.ports[j].host.receiver == hs.receiver) {
            const Port* q = ports_[j].get();
            if (auto* f = dynamic_cast<const FaultPort*>(q)) q = &f->inner();
            leader = static_cast<const EmulatedHost*>(q);
            if (ps.worker >= 0 && ps.worker % cfg.workers != port_owner_[j])
              throw std::runtime_error(fmt::format("port {}: receiver '{}' spans workers (port {} is on worker {})", ps.name,
                                                   hs.receiver, cfg.ports[j].name, port_owner_[j]));
          }
        if (ps.kind == PortKind::Nic)
          p = std::make_unique<WiredHost>(std::make_unique<EthdevPort>(ps.devargs, pool_),
                                          std::make_unique<EmulatedHost>(hs, hs.gateway, ps.egress.speed_gbps, pool_, now_ns));
        else
          p = std::make_unique<EmulatedHost>(hs, ps.mac, ps.egress.speed_gbps, pool_, now_ns, leader);
      }
      p->name = ps.name;
      p->mac = ps.mac;
      p->speed_gbps = ps.egress.speed_gbps;
      p->id = static_cast<uint16_t>(i);
      if (ps.faults.any()) p = std::make_unique<FaultPort>(std::move(p), ps.faults, pool_, cfg.seed * 0x100000001b3ull + i);
      port_owner_[i] = static_cast<uint8_t>(ps.worker >= 0 ? ps.worker % cfg.workers : i % cfg.workers);
      // An unpinned port of a receiver group goes where the group's first port went.
      for (std::size_t j = 0; j < i && ps.worker < 0 && ps.kind == PortKind::EmulatedHost && !ps.host.receiver.empty(); ++j)
        if (cfg.ports[j].kind == PortKind::EmulatedHost && cfg.ports[j].host.receiver == ps.host.receiver) {
          port_owner_[i] = port_owner_[j];
          break;
        }
      ports_.push_back(std::move(p));
      egress_.push_back(std::make_unique<EgressPort>(static_cast<uint16_t>(i), ports_.back().get(), ps.egress, now_ns,
                                                     sb_.get(), port_owner_[i], ps.lossless, pool_));
      egress_.back()->set_load_view(&load_);
    }
    const std::size_t sz = rte_rcu_qsbr_get_memsize(cfg.workers);
    qsbr_ = static_cast<rte_rcu_qsbr*>(rte_zmalloc("rs_qsbr", sz, RTE_CACHE_LINE_SIZE));
    if (!qsbr_ || rte_rcu_qsbr_init(qsbr_, cfg.workers) != 0) throw std::runtime_error("rcu init failed");
    fib_.set_qsbr(qsbr_);
    classify_.set_qsbr(qsbr_);
    port_macs_.set_qsbr(qsbr_);
    punt_policy_.set_qsbr(qsbr_);
    {
      auto macs = std::make_unique<PortMacs>();
      for (std::size_t i = 0; i < cfg.ports.size(); ++i) macs->mac[i] = cfg.ports[i].mac;
      port_macs_.publish(std::move(macs));
    }
    sb_->set_qsbr(qsbr_);
    tap_ = std::make_unique<CaptureTap>(cfg.workers);
    mirror_ = std::make_unique<PortMirror>(cfg.workers);
    if (auto bad = check_mirror_sessions(cfg.mirror_sessions, cfg.ports.size(), cfg.mmu))
      throw std::runtime_error(fmt::format("mirror_sessions[{}].{}: {}", bad->session, bad->field, bad->reason));
    apply_mirror_sessions(*mirror_, cfg.mirror_sessions, cfg.ports.size());
    publish_qos(cfg.qos);
    RouteLimits limits = cfg.route_limits;  // at least what the configuration starts with
    limits.v4 = std::max<uint32_t>(limits.v4, static_cast<uint32_t>(std::count_if(cfg.routes.begin(), cfg.routes.end(), [](auto& r) { return !r.ipv6; })));
    limits.v6 = std::max<uint32_t>(limits.v6, static_cast<uint32_t>(std::count_if(cfg.routes.begin(), cfg.routes.end(), [](auto& r) { return r.ipv6; })));
    writer_ = std::make_unique<FibWriter>(fib_, qsbr_, limits);
    writer_->load(build_groups(group_slots(cfg), [&] {
                    std::size_t n = 0;
                    for (auto& g : cfg.groups) n += g.members.size();
                    return n;
                  }(), cfg.workers, cfg.seed, nullptr, {}), cfg.routes);

    if (cfg.has_addresses()) {
      local_ = std::make_unique<LocalPath>(cfg.workers, port_owner_, static_cast<uint16_t>(ports_.size()), pool_);
      punt_policy_.publish(std::make_unique<PuntPolicy>(PuntPolicy::of(cfg.copp, unreachable_ports(cfg))));
    }
    if (cfg.has_bridge()) {
      vlans_.set_qsbr(qsbr_);
      vlans_.publish(vlan_table(cfg));
      fdb_ = std::make_unique<Fdb>(cfg.bridge.fdb_size, cfg.workers, qsbr_);
    }
    StageEnv env;
    env.qos = &cfg_.qos;
    env.copp = &cfg_.copp;
    env.hash_seed = cfg.seed;
    for (uint16_t w = 0; w < cfg.workers; ++w) {
      auto wk = std::make_unique<Worker>(w, spec, env, cfg.seed);
      wk->fib = &fib_;
      wk->classify = &classify_;
      wk->ctx.tap = tap_.get();
      wk->ctx.mirror = mirror_.get();
      wk->qsbr = qsbr_;
      wk->wd_poll_ns = cfg.mmu.pfcwd.enabled ? cfg.mmu.pfcwd.poll_ns : 0;
      if (sb_->any_lossless()) wk->ctx.sb = sb_.get();
      wk->ctx.lossless_tcs = lossless_tcs(cfg.mmu);
      rte_rcu_qsbr_thread_register(qsbr_, w);
      rte_rcu_qsbr_thread_online(qsbr_, w);
      wk->ctx.fib = fib_.load();
      wk->ctx.load = &load_;
      wk->port_macs = &port_macs_;
      wk->ctx.port_mac = port_macs_.load()->mac.data();
      wk->ctx.port_owner = port_owner_;
      wk->ctx.num_ports = static_cast<uint16_t>(ports_.size());
      if (fdb_) {
        wk->vlans = &vlans_;
        wk->ctx.vlans = vlans_.load();
      }
      wk->ctx.fdb = fdb_.get();
      if (local_) {
        wk->ctx.punt = local_->punt_ring(w);
        wk->inject = local_->inject_ring(w);
        wk->punt_policy = &punt_policy_;
        wk->ctx.unreachable_ports = punt_policy_.load()->unreachable_ports;
        wk->ctx.copp_rate = punt_policy_.load()->rate.data();
      }
      workers_.push_back(std::move(wk));
    }
    for (std::size_t i = 0; i < ports_.size(); ++i) {
      Worker& wk = *workers_[port_owner_[i]];
      wk.rx_ports.push_back(ports_[i].get());
      wk.tx_ports.push_back(egress_[i].get());
      wk.egress_by_port[i] = egress_[i].get();
    }
    for (uint16_t s = 0; s < cfg.workers; ++s)
      for (uint16_t d = 0; d < cfg.workers; ++d) {
        if (s == d) continue;
        rte_ring* r = rte_ring_create(unique_object_name("rs_hand").c_str(), 4096, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
        if (!r) throw std::runtime_error(fmt::format("handoff ring: {}", rte_strerror(rte_errno)));
        rings_.push_back(r);
        workers_[s]->outbox[d] = r;
        workers_[d]->inbox.push_back(r);
      }
  } catch (...) {
    // Undo in reverse so a bad config never leaves ports probed or memory held.
    for (auto* r : rings_) rte_ring_free(r);
    workers_.clear();
    local_.reset();
    fdb_.reset();
    egress_.clear();
    ports_.clear();
    sb_.reset();
    fib_.clear();
    classify_.clear();
    port_macs_.clear();
    punt_policy_.clear();
    vlans_.clear();
    writer_.reset();
    rte_free(qsbr_);
    rte_mempool_free(pool_);
    throw;
  }
}

Switch::~Switch() {
  for (auto& p : ports_) p->stop();
  for (auto* r : rings_) {
    void* m;
    while (rte_ring_dequeue(r, &m) == 0) rte_pktmbuf_free(static_cast<rte_mbuf*>(m));
    rte_ring_free(r);
  }
  if (!workers_.empty()) {
    for (auto& e : egress_) e->flush(workers_[0]->ctx, DropReason::Shutdown);
  }
  workers_.clear();
  local_.reset();
  fdb_.reset();
  egress_.clear();
  ports_.clear();
  fib_.clear();
  classify_.clear();
  port_macs_.clear();
  punt_policy_.clear();
  vlans_.clear();
  writer_.reset();
  rte_free(qsbr_);
  rte_mempool_free(pool_);
}

void Switch::shutdown(uint64_t now_ns) {
  if (local_) local_->flush_punted();  // never answered: the control thread has stopped too
  for (auto& w : workers_) {
    w->ctx.now_ns = now_ns;
    std::vector<rte_ring*> rings = w->inbox;
    if (w->inject) rings.push_back(w->inject);
    for (rte_ring* r : rings) {
      void* m;
      while (rte_ring_sc_dequeue(r, &m) == 0) {
        auto* mb = static_cast<rte_mbuf*>(m);
        w->egress_by_port[meta(mb).out_port]->enqueue(mb, w->ctx);
      }
    }
  }
  // What a full ring turned back came after the ring's contents.
  for (auto& s : workers_)
    for (auto& d : workers_)
      if (d != s)
        s->drain_held(d->id, [&](rte_mbuf* m) { d->egress_by_port[meta(m).out_port]->enqueue(m, d->ctx); });
  // A storm in progress ends with the switch (no stale storm state), then the queues empty.
  for (auto& w : workers_)
    for (EgressPort* e : w->tx_ports) {
      e->set_pfcwd(e->pfcwd(), w->ctx);
      e->flush(w->ctx, DropReason::Shutdown);
    }
  for (auto& p : ports_) p->stop();
}

void Switch::set_trace(uint32_t first, uint32_t every) {
  for (auto& w : workers_) w->tracer.configure(first, every);
}

void Switch::trace_request(uint32_t first, uint32_t every, bool keep) {
  for (auto& w : workers_) {
    w->trace_req.keep.store(keep, std::memory_order_relaxed);
    w->trace_req.first.store(first, std::memory_order_relaxed);
    w->trace_req.every.store(every, std::memory_order_relaxed);
    w->trace_req.seq.fetch_add(1, std::memory_order_release);
  }
}

bool Switch::trace_ready() const {
  for (auto& w : workers_)
    if (w->trace_req.seen.load(std::memory_order_acquire) != w->trace_req.seq.load(std::memory_order_relaxed) ||
        !w->trace_req.idle.load(std::memory_order_acquire))
      return false;
  return true;
}

std::string Switch::trace_text() const {
  std::vector<std::string> names;
  for (auto& p : ports_) names.push_back(p->name);
  std::string out;
  for (auto& w : workers_) out += w->pipeline.format_trace(w->tracer, w->id, names);
  return out;
}

#define RS_SUM(field, port)                                        \
  uint64_t s = 0;                                                  \
  for (auto& w : workers_) s += w->counters.field[port].get();     \
  return s

uint64_t Switch::rx_packets(std::size_t p) const { RS_SUM(port_rx_pkts, p); }
uint64_t Switch::rx_bytes(std::size_t p) const { RS_SUM(port_rx_bytes, p); }
uint64_t Switch::tx_packets(std::size_t p) const { RS_SUM(port_tx_pkts, p); }
uint64_t Switch::tx_bytes(std::size_t p) const { RS_SUM(port_tx_bytes, p); }
#undef RS_SUM

uint64_t Switch::drops(std::size_t p, DropReason r) const {
  uint64_t s = local_ ? local_->drops(p, r) : 0;
  for (auto& w : workers_) s += w->counters.port_drops[p][static_cast<std::size_t>(r)].get();
  return s;
}

uint64_t Switch::drops(DropReason r) const {
  uint64_t s = 0;
  for (std::size_t p = 0; p < ports_.size(); ++p) s += drops(p, r);
  return s;
}

void Switch::quiesce_stepped() {
  for (std::size_t w = 0; w < workers_.size(); ++w) rte_rcu_qsbr_quiescent(qsbr_, static_cast<unsigned>(w));
}

uint64_t Switch::lossless_drops_before_queue(std::size_t p) const {
  uint64_t s = 0;
  for (auto& w : workers_) s += w->counters.lossless_before_queue[p].get();
  return s;
}

uint64_t Switch::lossless_drops_before_queue() const {
  uint64_t s = 0;
  for (std::size_t p = 0; p < ports_.size(); ++p) s += lossless_drops_before_queue(p);
  return s;
}

uint64_t Switch::lossless_drops() const {
  // Every drop at a queue a lossless priority maps to, lossless packets refused at admission
  // (charged to those queues too), and those lost before any queue (a group black-holed by a
  // link failure loses the lossless class's packets as surely): the number the demo must keep
  // at 0. MAC control frames and frames refused before classification have no class.
  uint64_t n = lossless_drops_before_queue();
  const MmuConfig& mc = sb_->config();
  for (std::size_t p = 0; p < egress_.size(); ++p)
    for (int pr = 0; pr < 8; ++pr) {
      if (!(mc.pfc_enable & (1u << pr))) continue;
      const QueueCounters& c = egress_[p]->queue(mc.pfc_to_queue[pr] & 7);
      for (std::size_t r = 1; r < kNumDropReasons; ++r)
        if (static_cast<DropReason>(r) != DropReason::Shutdown) n += c.drops[r].get();
    }
  return n;
}

void Switch::poll_links(uint64_t now_ns) {
  const auto& ev = cfg_.link_events;
  for (; next_event_ < ev.size() && now_ns >= start_ns_ + ev[next_event_].at_ns; ++next_event_)
    admin_up_[ev[next_event_].port] = ev[next_event_].up;
  // Learning first, so a station reported just before its port went down is flushed with it.
  if (fdb_) fdb_->poll(now_ns, static_cast<uint64_t>(cfg_.bridge.ageing_s * 1e9), vlans_.load());
  for (std::size_t p = 0; p < ports_.size(); ++p) {
    const auto port = static_cast<uint16_t>(p);
    const bool up = admin_up_[p] && ports_[p]->carrier();
    if (up == load_.link_up(port)) continue;
    if (!up) {
      link_down_events_[p].inc();
      if (fdb_) fdb_->flush_port(port);  // its stations are no longer behind it
    }
    load_.set_link(port, up);
  }
}

uint64_t Switch::nexthop_packets(uint32_t nh) const {
  uint64_t s = 0;
  for (auto& w : workers_) s += w->nexthop_counters[nh].pkts.get();
  return s;
}

uint64_t Switch::nexthop_bytes(uint32_t nh) const {
  uint64_t s = 0;
  for (auto& w : workers_) s += w->nexthop_counters[nh].bytes.get();
  return s;
}

uint64_t Switch::policy_counter(uint32_t group, uint8_t choice, std::size_t k) const {
  uint64_t s = 0;
  const Fib& f = fib();
  for (uint16_t w = 0; w < workers_.size(); ++w)
    for (auto& in : f.policies(w).instances())
      if (in.group == group && in.choice == choice) s += in.policy->counters[k].get();
  return s;
}

SwitchTotals Switch::totals() const {
  SwitchTotals t;
  for (std::size_t p = 0; p < ports_.size(); ++p) {
    t.received += rx_packets(p);
    t.sent += tx_packets(p);
    t.queued += egress_[p]->queued_packets();
    for (std::size_t r = 0; r < kNumDropReasons; ++r) t.dropped += drops(p, static_cast<DropReason>(r));
  }
  for (auto* r : rings_) t.in_flight += rte_ring_count(r);
  for (auto& w : workers_) t.in_flight += w->held_now();
  t.mirrored = mirror_->copies();
  for (auto& w : workers_) t.replicated += w->counters.flood_copies.get();
  if (local_) {
    t.in_flight += local_->in_flight();
    t.originated = local_->originated();
    t.held = local_->held_now();
  }
  return t;
}

}  // namespace rs
