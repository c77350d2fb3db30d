#include "perf/bench_world.h"

#include <fmt/core.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "dataplane/policies/routing/routing_policy.h"
#include "dataplane/stages/classify/qos_classify.h"
#include "dataplane/stages/egress/egress_rewrite.h"
#include "dataplane/stages/parse/parser.h"
#include "dataplane/stages/route/ipv4_lpm.h"
#include "dataplane/stages/route/nexthop_group.h"
#include "tests/support/eal_env.h"

namespace rs::bench {
namespace {

[[noreturn]] void die(const std::string& why) {
  std::fprintf(stderr, "bench set-up: %s\n", why.c_str());
  std::exit(1);
}

// Route r covers 10.(r >> 8).(r & 255).0/24.
std::string host_in_route(uint32_t r, uint32_t host) { return fmt::format("10.{}.{}.{}", r >> 8, r & 255, host); }

std::unique_ptr<World> g_world;

}  // namespace

World::World() {
  // RoCE data on DSCP 26 goes to the lossless TC3, as in the demo configuration.
  qos = QosMaps::sonic_default();
  qos.dscp_to_tc[26] = 3;
  env.qos = &qos;
  env.hash_seed = 7;

  Fib& fib = *tw.fib;
  const int ecmp = RoutingPolicyRegistry::find("ecmp_hash");
  if (ecmp < 0) die("routing policy ecmp_hash is not registered");
  for (uint32_t g = 0; g < kGroups; ++g) {
    NextHopGroup grp;
    grp.name = fmt::format("g{}", g);
    grp.policy = static_cast<uint16_t>(ecmp);
    for (uint16_t p = 1; p <= kOutPorts; ++p)
      grp.members.push_back(fib.add_nexthop({p, rte_ether_addr{{0x02, 0xAA, 0, 0, static_cast<uint8_t>(g), static_cast<uint8_t>(p)}}}));
    fib.add_group(std::move(grp));
  }
  for (uint32_t r = 0; r < kRoutes; ++r) {
    RouteSpec rs;
    rs.addr[0] = 10;
    rs.addr[1] = static_cast<uint8_t>(r >> 8);
    rs.addr[2] = static_cast<uint8_t>(r & 255);
    rs.depth = 24;
    rs.group = r % kGroups;
    fib.add_route(rs);
  }

  // Queue limits far above what a batch can queue: the benchmarks measure work, not tail drops.
  EgressConfig ec;
  ec.speed_gbps = 400;
  for (auto& l : ec.limits) {
    l.packets = 1 << 16;
    l.bytes = uint64_t{1} << 30;
  }
  for (uint16_t p = 0; p <= kOutPorts; ++p) {
    null_ports[p].id = p;
    null_ports[p].speed_gbps = ec.speed_gbps;
    egress.push_back(std::make_unique<EgressPort>(p, &null_ports[p], ec, 0));
    egress.back()->set_load_view(&tw.load);  // as the Switch does, so publish_depth costs the same
    egress_by_port[p] = egress.back().get();
  }
  tw.ctx.egress = egress_by_port;
  tw.ctx.fib = tw.fib.get();

  // Templates: run the real stages once per packet and keep the metadata each stage sees.
  Parser parser(env);
  QosClassify classify(env);
  Ipv4Lpm lpm(env);
  NexthopGroup nhg(env);
  EgressRewrite rewrite(env);
  Stage* chain[] = {&parser, &classify, &lpm, &nhg, &rewrite};
  rte_mbuf* m = rte_pktmbuf_alloc(test::test_pool());
  if (!m) die("mbuf pool empty");
  templates.resize(kTemplates);
  for (uint32_t t = 0; t < kTemplates; ++t) {
    const uint32_t route = (t * 7919u) % kRoutes;
    const auto spec = test::Eth{.dst = "02:52:53:00:00:00", .src = "02:00:00:00:aa:01"} /
                      test::Ipv4{.src = "10.200.0.2", .dst = host_in_route(route, 2 + t % 250), .dscp = 26, .ecn = 2} /
                      test::Udp{.sport = static_cast<uint16_t>(0xC000 | ((t * 2654435761u) >> 18))} /
                      test::Bth{.dest_qp = 0x100 + t, .psn = t};
    const auto bytes = spec.bytes();
    if (bytes.size() != kFrameLen) die(fmt::format("template frame is {} bytes, expected {}", bytes.size(), kFrameLen));
    Template& tp = templates[t];
    std::memcpy(tp.bytes.data(), bytes.data(), kFrameLen);
    std::memcpy(rte_pktmbuf_mtod(m, void*), bytes.data(), kFrameLen);
    m->data_len = kFrameLen;
    m->pkt_len = kFrameLen;
    meta(m) = PacketMeta{};
    meta(m).in_port = kInPort;
    for (int s = 0; s < kNumStages; ++s) {
      tp.meta_before[s] = meta(m);
      if (s == kTmEnqueue) break;
      Burst b;
      b.push(m);
      uint8_t next = kNextDrop;
      chain[s]->process(b, &next, tw.ctx);
      if (next == kNextDrop || next == kNextConsumed)
        die(fmt::format("template {} did not pass stage {} ({})", t, chain[s]->name(), static_cast<int>(meta(m).drop_reason)));
    }
  }
  rte_pktmbuf_free(m);
}

World& world() {
  if (!g_world) g_world = std::make_unique<World>();
  return *g_world;
}

void destroy_world() { g_world.reset(); }

void restore(rte_mbuf* const* pkts, uint32_t n, int stage, uint32_t* cursor) {
  const auto& tpl = world().templates;
  for (uint32_t i = 0; i < n; ++i) {
    const Template& t = tpl[(*cursor)++ & (kTemplates - 1)];
    rte_mbuf* m = pkts[i];
    std::memcpy(rte_pktmbuf_mtod(m, void*), t.bytes.data(), kFrameLen);
    m->data_len = kFrameLen;
    m->pkt_len = kFrameLen;
    meta(m) = t.meta_before[stage];
  }
}

void alloc_restore(rte_mbuf** pkts, uint32_t n, int stage, uint32_t* cursor) {
  if (rte_pktmbuf_alloc_bulk(test::test_pool(), pkts, n) != 0) die("mbuf pool exhausted: a benchmark leaks mbufs");
  restore(pkts, n, stage, cursor);
}

void drain_egress(WorkerContext& ctx) {
  World& w = world();
  for (;;) {
    uint64_t left = 0;
    ctx.now_ns += 1'000'000;  // a millisecond of credit at 400 Gb/s is far more than a batch
    for (auto& e : w.egress) {
      e->transmit(ctx);
      left += e->queued_packets();
    }
    if (left == 0) return;
  }
}

void report_packets(benchmark::State& state, uint64_t per_iteration) {
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * per_iteration));
  // Seconds per packet; the console shows it with an SI prefix (e.g. 12.3n = 12.3 ns).
  state.counters["t_per_pkt"] =
      benchmark::Counter(static_cast<double>(per_iteration), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

}  // namespace rs::bench
