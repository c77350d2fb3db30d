// ns/packet of each stage of l3_roce's IPv4 path, in bursts of 32 64-byte RoCEv2 packets:
// l3_input (parse + classify; and its general form, which never takes the common shape's
// shortcut), ipv4_route (LPM over 1000 routes, the ECMP member chosen inline), nexthop_select
// (the member chosen by the group's policy, as for groups that are not plain ECMP), and
// rewrite_enqueue into the traffic manager (then egress transmit to a null port); and the
// ipv4_forward chain, which runs l3_input, ipv4_route and rewrite_enqueue packet by packet.
// Each timed iteration is 32 bursts, in thread CPU time; restoring the packets from templates
// is not timed.
#include <benchmark/benchmark.h>

#include <cstring>
#include <memory>
#include <vector>

#include "dataplane/stages/ip_route.h"
#include "dataplane/stages/l3_input.h"
#include "dataplane/stages/nexthop_select.h"
#include "dataplane/stages/rewrite_enqueue.h"
#include "perf/bench_world.h"

namespace rs::bench {
namespace {

// One stage over the same 1024 mbufs, restored before each batch. The stage is called through
// its concrete (final) type, as cheap as the pipeline's one virtual call per burst.
template <typename S, int kStage>
void bm_stage(benchmark::State& state) {
  World& w = world();
  WorkerContext& ctx = w.ctx();
  S stage(w.env);
  std::vector<rte_mbuf*> pkts(kPktsPerBatch);
  uint32_t cursor = 0;
  alloc_restore(pkts.data(), kPktsPerBatch, kStage, &cursor);
  uint8_t next[kBenchBurst];
  uint64_t bad = 0;
  BatchTimer timer;
  for (auto _ : state) {
    restore(pkts.data(), kPktsPerBatch, kStage, &cursor);
    uint8_t whole = kNextMixed;
    timer.start();
    for (uint32_t k = 0; k < kBurstsPerBatch; ++k) {
      Burst b;
      std::memcpy(b.pkts, &pkts[k * kBenchBurst], kBenchBurst * sizeof(rte_mbuf*));
      b.n = kBenchBurst;
      whole = stage.process(b, next, ctx);
      benchmark::DoNotOptimize(whole);
      benchmark::DoNotOptimize(next);
      benchmark::ClobberMemory();
    }
    timer.stop(state);
    if (whole == kNextDrop) ++bad;
    if (whole == kNextMixed)
      for (uint16_t i = 0; i < kBenchBurst; ++i) bad += next[i] == kNextDrop;
  }
  rte_pktmbuf_free_bulk(pkts.data(), kPktsPerBatch);
  // Every template passes every stage: a drop means the set-up, not the stage, is measured.
  if (bad) state.SkipWithError("the stage dropped packets");
  report_packets(state, kPktsPerBatch);
}

// A stage that queues every packet (rewrite_enqueue, or a chain from the received frame) as
// the worker drives it: the stage for a burst, then one transmit call per egress port. Fresh
// mbufs each batch (the null ports free what they send).
template <int kStage, bool kTransmit, typename S>
void run_queueing(benchmark::State& state, S& stage) {
  World& w = world();
  WorkerContext& ctx = w.ctx();
  std::vector<rte_mbuf*> pkts(kPktsPerBatch);
  uint32_t cursor = 0;
  uint8_t next[kBenchBurst];
  const uint64_t sent0 = w.sent();
  BatchTimer timer;
  for (auto _ : state) {
    alloc_restore(pkts.data(), kPktsPerBatch, kStage, &cursor);
    timer.start();
    for (uint32_t k = 0; k < kBurstsPerBatch; ++k) {
      Burst b;
      std::memcpy(b.pkts, &pkts[k * kBenchBurst], kBenchBurst * sizeof(rte_mbuf*));
      b.n = kBenchBurst;
      ctx.rx_port = kInPort;
      stage.process(b, next, ctx);
      if constexpr (kTransmit) {
        ctx.now_ns += 1000;  // 1 us of 400 Gb/s credit per burst: the shaper never holds packets
        for (uint16_t p = 1; p <= kOutPorts; ++p) w.egress(p)->transmit(ctx);
      }
    }
    timer.stop(state);
    if constexpr (!kTransmit) drain_egress(ctx);
  }
  drain_egress(ctx);
  if (w.sent() - sent0 != static_cast<uint64_t>(state.iterations()) * kPktsPerBatch)
    state.SkipWithError("packets were lost on the way to the queues");
  report_packets(state, kPktsPerBatch);
}

// The stage called through its concrete (final) type.
template <typename S, int kStage, bool kTransmit>
void bm_queueing(benchmark::State& state) {
  S stage(world().env);
  run_queueing<kStage, kTransmit>(state, stage);
}

// A stage built by name from the registry, called through Stage as the pipeline calls it: the
// ipv4_forward chain (l3_input, ipv4_route and rewrite_enqueue run to completion per packet)
// from the received frame to the queue; compare with the rows above summed.
template <bool kTransmit>
void bm_registered(benchmark::State& state, const char* name) {
  const StageFactory make = StageRegistry::find(name);
  if (!make) {
    state.SkipWithError("stage not registered");
    for (auto _ : state) {
    }
    return;
  }
  const std::unique_ptr<Stage> stage = make(world().env);
  run_queueing<kL3Input, kTransmit>(state, *stage);
}
template <bool kTransmit>
void bm_ipv4_forward(benchmark::State& state) {
  bm_registered<kTransmit>(state, "ipv4_forward");
}

BENCHMARK(bm_stage<L3Input, kL3Input>)->Name("l3_input")->UseManualTime();
BENCHMARK(bm_stage<L3InputGeneral, kL3Input>)->Name("l3_input_general")->UseManualTime();
BENCHMARK(bm_stage<Ipv4Route, kIpv4Route>)->Name("ipv4_route/routes:1000")->UseManualTime();
BENCHMARK(bm_stage<NexthopSelect, kNexthopSelect>)->Name("nexthop_select/ecmp_8way")->UseManualTime();
BENCHMARK(bm_queueing<RewriteEnqueue, kRewriteEnqueue, false>)->Name("rewrite_enqueue")->UseManualTime();
BENCHMARK(bm_queueing<RewriteEnqueue, kRewriteEnqueue, true>)->Name("rewrite_enqueue+transmit")->UseManualTime();
BENCHMARK(bm_ipv4_forward<false>)->Name("ipv4_forward")->UseManualTime();
BENCHMARK(bm_ipv4_forward<true>)->Name("ipv4_forward+transmit")->UseManualTime();

}  // namespace
}  // namespace rs::bench
