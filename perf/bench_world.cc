#include "perf/bench_world.h"

#include <fmt/core.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "dataplane/routing/routing_policy.h"
#include "dataplane/stages/ip_route.h"
#include "dataplane/stages/l3_input.h"
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

// Ports 0..8 at 400 Gb/s, all this worker's; queue limits far above what a batch can queue:
// the benchmarks measure work, not tail drops.
test::RigConfig rig_config() {
  test::RigConfig c;
  c.ports = 1 + kOutPorts;
  c.egress.speed_gbps = 400;
  for (auto& l : c.egress.limits) {
    l.packets = 1 << 16;
    l.bytes = uint64_t{1} << 30;
  }
  return c;
}

// Runs one packet through `stage`; dies unless it takes `edge`.
void step(Stage& stage, rte_mbuf* m, WorkerContext& ctx, uint8_t edge, uint32_t t) {
  Burst b;
  b.push(m);
  uint8_t next[1] = {kNextDrop};
  const uint8_t whole = stage.process(b, next, ctx);
  const uint8_t took = whole == kNextMixed ? next[0] : whole;
  if (took != edge)
    die(fmt::format("template {} took edge {} of stage {}, not {} ({})", t, static_cast<int>(took), stage.name(),
                    static_cast<int>(edge), drop_reason_name(meta(m).drop_reason)));
}

}  // namespace

World::World() : rig(rig_config()) {
  // RoCE data on DSCP 26 goes to the lossless TC3, as in the demo configuration.
  qos = QosMaps::sonic_default();
  qos.dscp_to_tc[26] = 3;
  env.qos = &qos;
  env.hash_seed = 7;

  Fib& fib = *rig.fib;
  for (uint32_t g = 0; g < kGroups; ++g) {
    NextHopGroup grp;
    grp.name = fmt::format("g{}", g);
    grp.choices = {resolve_policy(PolicySpec{"ecmp", {}}, grp.name)};
    for (uint16_t p = 1; p <= kOutPorts; ++p)
      grp.members.push_back(fib.add_nexthop({p, rte_ether_addr{{0x02, 0xAA, 0, 0, static_cast<uint8_t>(g), static_cast<uint8_t>(p)}}}));
    fib.add_group(std::move(grp));
  }
  if (!fib.group(0).inline_member) die("ecmp groups should have their member chosen in ipv4_route");
  for (uint32_t r = 0; r < kRoutes; ++r) {
    RouteSpec rs;
    rs.addr[0] = 10;
    rs.addr[1] = static_cast<uint8_t>(r >> 8);
    rs.addr[2] = static_cast<uint8_t>(r & 255);
    rs.depth = 24;
    rs.group = r % kGroups;
    fib.add_route(rs);
  }
  fib.attach_policies(1, 7);
  rig.ctx.fib = rig.fib.get();
  for (uint16_t p = 0; p <= kOutPorts; ++p) rig.port(p).record = false;  // net_null: free and count

  // Templates: run the real stages once per packet and keep the metadata each stage sees.
  L3Input input(env);
  Ipv4Route route(env);
  Ipv4RouteGeneral route_general(env);
  rte_mbuf* m = rte_pktmbuf_alloc(test::test_pool());
  if (!m) die("mbuf pool empty");
  templates.resize(kTemplates);
  for (uint32_t t = 0; t < kTemplates; ++t) {
    const uint32_t route_no = (t * 7919u) % kRoutes;
    const auto spec = test::Eth{.dst = "02:52:53:00:00:00", .src = "02:00:00:00:aa:01"} /
                      test::Ipv4{.src = "10.200.0.2", .dst = host_in_route(route_no, 2 + t % 250), .dscp = 26, .ecn = 2} /
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
    tp.meta_before[kL3Input] = meta(m);
    step(input, m, rig.ctx, L3Input::Ipv4, t);
    tp.meta_before[kIpv4Route] = meta(m);
    // The general route stage leaves the member to nexthop_select; its output is that
    // stage's input. Neither route stage touches the frame, only the metadata.
    step(route_general, m, rig.ctx, Ipv4RouteGeneral::Select, t);
    tp.meta_before[kNexthopSelect] = meta(m);
    meta(m) = tp.meta_before[kIpv4Route];
    step(route, m, rig.ctx, Ipv4Route::Rewrite, t);
    tp.meta_before[kRewriteEnqueue] = meta(m);
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

uint64_t World::sent() const {
  uint64_t n = 0;
  for (const auto& p : rig.ports) n += p->packets;
  return n;
}

void drain_egress(WorkerContext& ctx) {
  World& w = world();
  for (;;) {
    uint64_t left = 0;
    ctx.now_ns += 1'000'000;  // a millisecond of credit at 400 Gb/s is far more than a batch
    for (auto& e : w.rig.egress_ports) {
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
