#include "dataplane/core/switch.h"

#include <fmt/core.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_rcu_qsbr.h>
#include <rte_ring.h>

#include <algorithm>
#include <atomic>
#include <stdexcept>

#include "dataplane/core/mbuf_pool.h"
#include "dataplane/io/ethdev_port.h"
#include "dataplane/stages/egress/egress_rewrite.h"
#include "pipelines_embedded.h"

namespace rs {
namespace {
std::string unique(const char* what) {
  static std::atomic<uint32_t> seq{0};
  return fmt::format("{}{}", what, seq.fetch_add(1));
}
}  // namespace

std::unique_ptr<Fib> build_fib(const SwitchConfig& cfg) {
  auto fib = std::make_unique<Fib>();
  for (auto& g : cfg.groups) {
    NextHopGroup ng;
    ng.name = g.name;
    const int pol = RoutingPolicyRegistry::find(g.policy);
    if (pol < 0) throw std::runtime_error(fmt::format("group '{}': unknown routing policy '{}'", g.name, g.policy));
    ng.policy = static_cast<uint16_t>(pol);
    std::vector<uint32_t> weighted;
    for (auto& m : g.members) {
      const uint32_t nh = fib->add_nexthop({m.port, m.mac});
      ng.members.push_back(nh);
      for (uint32_t k = 0; k < m.weight; ++k) weighted.push_back(nh);
    }
    // SwitchConfig is also built without the YAML loader: check what build_table divides by.
    if (weighted.empty()) throw std::runtime_error(fmt::format("group '{}': no member with a weight above 0", g.name));
    ng.table = Fib::build_table(weighted, g.table_size);
    fib->add_group(std::move(ng));
  }
  for (auto& r : cfg.routes) fib->add_route(r, static_cast<uint32_t>(cfg.routes.size() + 16));
  return fib;
}

Switch::Switch(const SwitchConfig& cfg, uint64_t now_ns) : cfg_(cfg) {
  if (cfg.ports.size() > kMaxPorts) throw std::runtime_error("too many ports");
  if (cfg.workers == 0 || cfg.workers > kMaxWorkers) throw std::runtime_error("bad worker count");
  PipelineSpec spec = parse_pipeline(cfg.pipeline_text.empty() ? std::string(kPipelineL3Roce) : cfg.pipeline_text,
                                     cfg.pipeline_text.empty() ? "pipelines/l3_roce.yaml" : cfg.pipeline_source);
  // Per-lcore caches as large as DPDK allows, so a poll's worth of packets (kRxBurstsPerPoll
  // rx bursts) is allocated and freed within the cache, never through the shared ring; but
  // together (each may hold 1.5 x its size) they keep at most about a fifth of a small pool.
  const unsigned cache = std::min<unsigned>(RTE_MEMPOOL_CACHE_MAX_SIZE, cfg.mbufs / (8 * (cfg.workers + 1)));
  pool_ = create_mbuf_pool({.name = unique("rs_pool"), .mbufs = cfg.mbufs, .cache = cache, .priv_size = kMbufPrivSize});
  if (!pool_) throw std::runtime_error(fmt::format("mbuf pool: {}", rte_strerror(rte_errno)));
  try {
    std::vector<PortLosslessConfig> lossless;
    for (auto& ps : cfg.ports) lossless.push_back(ps.lossless);
    uint64_t static_sum = 0;
    bool dynamic = false;
    for (auto& ps : cfg.ports)
      for (int q = 0; q < 8; ++q) {
        // A queue's bytes are charged in cells: its packet limit bounds the rounding.
        static_sum += ps.egress.limits[q].bytes + uint64_t{ps.egress.limits[q].packets} * cfg.mmu.pool.cell_size;
        dynamic |= ps.lossless.dynamic_th[q] != kNoDynamicTh;
      }
    sb_ = std::make_unique<SharedBuffer>(cfg.mmu, lossless, cfg.workers, static_sum, dynamic);
    for (std::size_t i = 0; i < cfg.ports.size(); ++i) {
      const PortSpec& ps = cfg.ports[i];
      std::unique_ptr<Port> p;
      if (ps.kind == PortKind::Ethdev) {
        p = std::make_unique<EthdevPort>(ps.devargs, pool_);
      } else {
        // A host pauses a flow on the priority the switch puts it in, unless told otherwise.
        HostSpec hs = ps.host;
        for (auto& f : hs.flows)
          if (f.priority < 0) f.priority = static_cast<int8_t>(cfg.mmu.tc_to_pg[cfg.qos.dscp_to_tc[f.dscp & 63] & 7]);
        p = std::make_unique<EmulatedHost>(hs, ps.mac, ps.egress.speed_gbps, pool_, now_ns);
      }
      p->name = ps.name;
      p->mac = ps.mac;
      p->speed_gbps = ps.egress.speed_gbps;
      p->id = static_cast<uint16_t>(i);
      port_mac_[i] = ps.mac;
      port_src_ipv4_[i] = port_src_ipv4_word(ps.mac);
      port_owner_[i] = static_cast<uint8_t>(ps.worker >= 0 ? ps.worker % cfg.workers : i % cfg.workers);
      ports_.push_back(std::move(p));
      egress_.push_back(std::make_unique<EgressPort>(static_cast<uint16_t>(i), ports_.back().get(), ps.egress, now_ns,
                                                     sb_.get(), port_owner_[i], ps.lossless, pool_));
      egress_.back()->set_load_view(&load_);
    }
    fib_owned_ = build_fib(cfg);
    fib_.store(fib_owned_.get(), std::memory_order_release);

    const std::size_t sz = rte_rcu_qsbr_get_memsize(cfg.workers);
    qsbr_ = static_cast<rte_rcu_qsbr*>(rte_zmalloc("rs_qsbr", sz, RTE_CACHE_LINE_SIZE));
    if (!qsbr_ || rte_rcu_qsbr_init(qsbr_, cfg.workers) != 0) throw std::runtime_error("rcu init failed");

    StageEnv env;
    env.qos = &cfg_.qos;
    env.hash_seed = cfg.seed;
    for (uint16_t w = 0; w < cfg.workers; ++w) {
      auto wk = std::make_unique<Worker>(w, spec, env, cfg.seed);
      wk->fib = &fib_;
      wk->qsbr = qsbr_;
      wk->wd_poll_ns = cfg.mmu.pfcwd.enabled ? cfg.mmu.pfcwd.poll_ns : 0;
      if (sb_->any_lossless()) wk->ctx.sb = sb_.get();
      rte_rcu_qsbr_thread_register(qsbr_, w);
      rte_rcu_qsbr_thread_online(qsbr_, w);
      wk->ctx.fib = fib_owned_.get();
      wk->ctx.load = &load_;
      wk->ctx.port_mac = port_mac_;
      wk->ctx.port_src_ipv4 = port_src_ipv4_;
      wk->ctx.port_owner = port_owner_;
      wk->ctx.num_ports = static_cast<uint16_t>(ports_.size());
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
        rte_ring* r = rte_ring_create(unique("rs_hand").c_str(), 4096, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
        if (!r) throw std::runtime_error(fmt::format("handoff ring: {}", rte_strerror(rte_errno)));
        rings_.push_back(r);
        workers_[s]->outbox[d] = r;
        workers_[d]->inbox.push_back(r);
      }
  } catch (...) {
    // Undo in reverse so a bad config never leaves ports probed or memory held.
    for (auto* r : rings_) rte_ring_free(r);
    workers_.clear();
    egress_.clear();
    ports_.clear();
    sb_.reset();
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
  egress_.clear();
  ports_.clear();
  retired_.clear();
  fib_owned_.reset();
  rte_free(qsbr_);
  rte_mempool_free(pool_);
}

void Switch::shutdown(uint64_t now_ns) {
  for (auto& w : workers_) {
    w->ctx.now_ns = now_ns;
    for (rte_ring* r : w->inbox) {
      void* m;
      while (rte_ring_sc_dequeue(r, &m) == 0) {
        auto* mb = static_cast<rte_mbuf*>(m);
        w->egress_by_port[meta(mb).out_port]->enqueue(mb, w->ctx);
      }
    }
  }
  // A storm in progress ends with the switch (no stale storm state), then the queues empty.
  for (auto& w : workers_)
    for (EgressPort* e : w->tx_ports) {
      e->set_pfcwd(e->pfcwd(), w->ctx);
      e->flush(w->ctx, DropReason::Shutdown);
    }
  for (auto& p : ports_) p->stop();
}

void Switch::publish_fib(std::unique_ptr<Fib> fib) {
  // One pointer store publishes; the grace period starts after it, so a worker that still
  // holds the old snapshot is waited for.
  fib_.store(fib.get(), std::memory_order_release);
  retired_.push_back({std::move(fib_owned_), rte_rcu_qsbr_start(qsbr_)});
  fib_owned_ = std::move(fib);
}

void Switch::reclaim() {
  std::erase_if(retired_, [&](Retired& r) { return rte_rcu_qsbr_check(qsbr_, r.token, false) == 1; });
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
  uint64_t s = 0;
  for (auto& w : workers_) s += w->counters.port_drops[p][static_cast<std::size_t>(r)].get();
  return s;
}

uint64_t Switch::drops(DropReason r) const {
  uint64_t s = 0;
  for (std::size_t p = 0; p < ports_.size(); ++p) s += drops(p, r);
  return s;
}

uint64_t Switch::lossless_drops() const {
  // Every drop at a queue a lossless priority maps to, plus lossless packets refused at
  // admission (they are charged to those queues too): the number the demo must keep at 0.
  uint64_t n = 0;
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

nlohmann::json Switch::pfc_stats(std::size_t p) const {
  using nlohmann::json;
  const EgressPort& e = *egress_[p];
  const PfcGenerator& g = e.pfc_gen();
  const PfcRxCounters& rx = e.pfc_rx();
  json pj;
  json pgs = json::array();
  for (uint8_t pg = 0; pg < 8; ++pg) {
    const PgSettings& s = sb_->pg(static_cast<uint16_t>(p), pg);
    json x = {{"pg", pg}, {"lossless", s.lossless}, {"level_bytes", sb_->pg_level(static_cast<uint16_t>(p), pg)}};
    if (s.lossless) {
      x["xoff"] = s.xoff;
      x["xon"] = s.xon;
      x["headroom"] = s.headroom;
      x["headroom_min"] = s.headroom_min;
      x["xoff_sent"] = g.counters().xoff_sent[pg].get();
      x["xon_sent"] = g.counters().xon_sent[pg].get();
      x["assert_ns"] = g.counters().assert_ns[pg].get();
      x["asserting"] = static_cast<bool>(g.asserted_published() & (1u << pg));
    }
    pgs.push_back(x);
  }
  pj["pg"] = pgs;
  pj["frames_sent"] = g.counters().frames.get();
  pj["send_failures"] = g.counters().tx_fail.get();
  json rxo = json::array(), rxn = json::array();
  for (int pr = 0; pr < 8; ++pr) {
    rxo.push_back(rx.xoff[pr].get());
    rxn.push_back(rx.xon[pr].get());
  }
  pj["rx_xoff"] = rxo;
  pj["rx_xon"] = rxn;
  pj["rx_pause"] = rx.pause.get();
  pj["rx_ignored_priorities"] = rx.ignored.get();
  return pj;
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
  return t;
}

nlohmann::json Switch::stats() const {
  using nlohmann::json;
  json j;
  auto drop_map = [](auto get) {
    json d = json::object();
    for (std::size_t r = 1; r < kNumDropReasons; ++r)
      if (uint64_t v = get(static_cast<DropReason>(r))) d[std::string(kDropReasonNames[r])] = v;
    return d;
  };
  json ports = json::array();
  for (std::size_t p = 0; p < ports_.size(); ++p) {
    json pj;
    pj["name"] = ports_[p]->name;
    pj["kind"] = ports_[p]->kind();
    pj["speed_gbps"] = ports_[p]->speed_gbps;
    pj["rx_packets"] = rx_packets(p);
    pj["rx_bytes"] = rx_bytes(p);
    pj["tx_packets"] = tx_packets(p);
    pj["tx_bytes"] = tx_bytes(p);
    pj["drops"] = drop_map([&](DropReason r) { return drops(p, r); });
    json qs = json::array();
    for (int q = 0; q < 8; ++q) {
      const QueueCounters& c = egress_[p]->queue(q);
      json qj = {{"queue", q},
                 {"enqueued_packets", c.enq_packets.get()},
                 {"enqueued_bytes", c.enq_bytes.get()},
                 {"dequeued_packets", c.deq_packets.get()},
                 {"dequeued_bytes", c.deq_bytes.get()},
                 {"depth_packets", c.depth_packets.get()},
                 {"depth_bytes", c.depth_bytes.get()},
                 {"peak_packets", c.peak_packets.get()},
                 {"peak_bytes", c.peak_bytes.get()},
                 {"ecn_marked", c.ecn_marked.get()},
                 {"paused_ns", c.paused_ns.get()},
                 {"paused_now", egress_[p]->paused(q)},
                 {"pfcwd_storms_detected", c.storms_detected.get()},
                 {"pfcwd_storms_restored", c.storms_restored.get()}};
      qj["drops"] = drop_map([&](DropReason r) { return c.drops[static_cast<std::size_t>(r)].get(); });
      qs.push_back(qj);
    }
    pj["queues"] = qs;
    pj["pfc"] = pfc_stats(p);
    ports_[p]->stats(pj);
    ports.push_back(pj);
  }
  j["ports"] = ports;
  j["drops"] = drop_map([&](DropReason r) { return drops(r); });
  j["buffer"] = {{"pool_bytes", sb_->config().pool.size},     {"cell_bytes", sb_->config().pool.cell_size},
                 {"headroom_reserved_bytes", sb_->headroom_reserved()}, {"shared_bytes", sb_->shared_size()},
                 {"used_bytes", sb_->used()},                  {"pfc_enable", sb_->config().pfc_enable}};
  j["lossless_drops"] = lossless_drops();
  json stages = json::array();
  const auto& nodes0 = workers_[0]->pipeline.nodes();
  for (std::size_t n = 0; n < nodes0.size(); ++n) {
    json sj;
    sj["node"] = nodes0[n].name;
    sj["stage"] = std::string(nodes0[n].stage->name());
    uint64_t calls = 0, pkts = 0;
    json ctr = json::object();
    auto names = nodes0[n].stage->counter_names();
    std::vector<uint64_t> sums(names.size(), 0);
    for (auto& w : workers_) {
      const auto& node = w->pipeline.nodes()[n];
      calls += node.calls.get();
      pkts += node.packets.get();
      auto c = node.stage->counters();
      for (std::size_t k = 0; k < c.size(); ++k) sums[k] += c[k].get();
    }
    for (std::size_t k = 0; k < names.size(); ++k) ctr[std::string(names[k])] = sums[k];
    sj["calls"] = calls;
    sj["packets"] = pkts;
    sj["counters"] = ctr;
    stages.push_back(sj);
  }
  j["stages"] = stages;
  json workers = json::array();
  for (auto& w : workers_) workers.push_back({{"worker", w->id}, {"loops", w->counters.loops.get()}, {"rx_bursts", w->counters.rx_bursts.get()}});
  j["workers"] = workers;
  const SwitchTotals t = totals();
  j["totals"] = {{"received", t.received}, {"sent", t.sent},         {"queued", t.queued},
                 {"in_flight", t.in_flight}, {"dropped", t.dropped}, {"balanced", t.balanced()}};
  return j;
}

}  // namespace rs
