#include "tests/support/worker_rig.h"

#include <algorithm>
#include <stdexcept>

#include "tests/support/eal_env.h"

namespace rs::test {

WorkerRig::WorkerRig(const RigConfig& cfg) : TestWorld(cfg.ports), config(cfg) {
  if (cfg.ports == 0 || cfg.ports > kMaxPorts) throw std::invalid_argument("WorkerRig: bad port count");
  if (!cfg.owners.empty() && cfg.owners.size() != cfg.ports) throw std::invalid_argument("WorkerRig: owners per port");
  uint16_t workers = static_cast<uint16_t>(cfg.worker + 1);
  for (uint16_t p = 0; p < cfg.ports; ++p) {
    port_owner[p] = cfg.owners.empty() ? static_cast<uint8_t>(cfg.worker) : cfg.owners[p];
    if (port_owner[p] >= kMaxWorkers) throw std::invalid_argument("WorkerRig: owner out of range");
    workers = std::max<uint16_t>(workers, static_cast<uint16_t>(port_owner[p] + 1));
  }
  if (cfg.mmu) {
    std::vector<PortLosslessConfig> lossless = cfg.lossless;
    lossless.resize(cfg.ports);
    sb = std::make_unique<SharedBuffer>(*cfg.mmu, lossless, workers, cfg.static_limits, cfg.any_dynamic);
  }
  for (uint16_t p = 0; p < cfg.ports; ++p) {
    ports.push_back(std::make_unique<FakePort>(p, cfg.egress.speed_gbps));
    ports.back()->mac = port_mac[p];
    if (sb) {
      const PortLosslessConfig lc = p < cfg.lossless.size() ? cfg.lossless[p] : PortLosslessConfig{};
      egress_ports.push_back(std::make_unique<EgressPort>(p, ports.back().get(), cfg.egress, cfg.now_ns, sb.get(),
                                                          port_owner[p], lc, test_pool()));
    } else {
      egress_ports.push_back(std::make_unique<EgressPort>(p, ports.back().get(), cfg.egress, cfg.now_ns));
    }
    egress_ports.back()->set_load_view(&load);  // as the Switch does
    if (port_owner[p] == cfg.worker) egress_by_port[p] = egress_ports.back().get();
  }
  // What Worker's constructor and the Switch set; TestWorld did the tables' part.
  ctx.worker = cfg.worker;
  ctx.now_ns = cfg.now_ns;
  ctx.egress = egress_by_port;
  ctx.handoff = handoff;
  ctx.tracer = &tracer;
  if (sb && sb->any_lossless()) ctx.sb = sb.get();
}

WorkerRig::~WorkerRig() {
  for (auto& b : handoff) {
    for (uint16_t i = 0; i < b.n; ++i) rte_pktmbuf_free(b.pkts[i]);
    b.clear();
  }
  for (auto& e : egress_ports) e->flush(ctx, DropReason::Shutdown);
  pipeline.reset();
  egress_ports.clear();
}

void WorkerRig::load_pipeline(const std::string& yaml, const StageEnv& env, const std::string& source) {
  set_pipeline(parse_pipeline(yaml, source), env);
}

void WorkerRig::set_pipeline(const PipelineSpec& spec, const StageEnv& env) {
  pipeline = std::make_unique<Pipeline>(spec, env);
}

std::vector<rte_mbuf*> WorkerRig::run(const std::vector<PacketSpec>& specs, uint16_t in_port) {
  std::vector<rte_mbuf*> v;
  for (const auto& s : specs) {
    rte_mbuf* m = s.mbuf(test_pool(), in_port);
    EXPECT_NE(m, nullptr) << "test pool exhausted";
    if (m) v.push_back(m);
  }
  run_mbufs(v, in_port);
  return v;
}

void WorkerRig::run_mbufs(const std::vector<rte_mbuf*>& pkts, uint16_t in_port) {
  if (!pipeline) {
    ADD_FAILURE() << "WorkerRig::run without a pipeline (load_pipeline first)";
    for (auto* m : pkts) rte_pktmbuf_free(m);
    return;
  }
  ctx.fib = fib.get();
  ctx.rx_port = in_port;  // as the worker says which port a burst came in on
  for (std::size_t at = 0; at < pkts.size(); at += kBurst) {
    Burst b;
    for (std::size_t i = at; i < pkts.size() && b.n < kBurst; ++i) b.push(pkts[i]);
    pipeline->run(b, ctx);
  }
}

uint32_t WorkerRig::transmit(uint64_t now_ns) {
  ctx.now_ns = now_ns;
  uint32_t n = 0;
  for (uint16_t p = 0; p < config.ports; ++p)
    if (egress_by_port[p]) n += egress_by_port[p]->transmit(ctx);
  return n;
}

void WorkerRig::publish() {
  for (auto& e : egress_ports) e->publish_counters();
}

std::vector<rte_mbuf*> WorkerRig::take_handoff(uint8_t w) {
  Burst& b = handoff[w];
  std::vector<rte_mbuf*> v(b.pkts, b.pkts + b.n);
  b.clear();
  return v;
}

}  // namespace rs::test
