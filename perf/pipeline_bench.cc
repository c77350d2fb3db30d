// ns/packet of the whole l3_roce pipeline (rs::Pipeline built from the embedded
// pipelines/l3_roce.yaml) plus egress transmit to null ports, as one worker poll does it, in
// bursts of 32 64-byte RoCEv2 packets over 1000 routes and 8-way ECMP. "pipeline" leaves the
// mbuf allocation and frame copy (an rx PMD's work) untimed; "pipeline+rx_alloc" times it too;
// "l3_roce_general" is the same graph with every stage in its general form.
#include <benchmark/benchmark.h>

#include <cstring>
#include <vector>

#include "dataplane/core/pipeline.h"
#include "perf/bench_world.h"
#include "pipelines_embedded.h"

namespace rs::bench {
namespace {

template <bool kTimeAlloc, bool kGeneral = false>
void bm_pipeline(benchmark::State& state) {
  World& w = world();
  WorkerContext& ctx = w.ctx();
  Pipeline pipeline(parse_pipeline(kGeneral ? kPipelineL3RoceGeneral : kPipelineL3Roce,
                                   kGeneral ? "pipelines/l3_roce_general.yaml" : "pipelines/l3_roce.yaml"), w.env);
  std::vector<rte_mbuf*> pkts(kPktsPerBatch);
  uint32_t cursor = 0;
  const uint64_t sent0 = w.sent();
  BatchTimer timer;
  for (auto _ : state) {
    if constexpr (!kTimeAlloc) alloc_restore(pkts.data(), kPktsPerBatch, kL3Input, &cursor);
    timer.start();
    if constexpr (kTimeAlloc) alloc_restore(pkts.data(), kPktsPerBatch, kL3Input, &cursor);
    for (uint32_t k = 0; k < kBurstsPerBatch; ++k) {
      Burst b;
      std::memcpy(b.pkts, &pkts[k * kBenchBurst], kBenchBurst * sizeof(rte_mbuf*));
      b.n = kBenchBurst;
      ctx.rx_port = kInPort;
      ctx.now_ns += 1000;  // 1 us of 400 Gb/s credit per burst: the shaper never holds packets
      pipeline.run(b, ctx);
      // The worker transmits on every port it owns, the ingress port included.
      for (uint16_t p = 0; p <= kOutPorts; ++p) w.egress(p)->transmit(ctx);
    }
    timer.stop(state);
  }
  drain_egress(ctx);
  const uint64_t sent = w.sent();
  // Every packet must reach a null port: a drop would mean a shorter path is being measured.
  if (sent - sent0 != static_cast<uint64_t>(state.iterations()) * kPktsPerBatch) state.SkipWithError("packets were dropped in the pipeline");
  report_packets(state, kPktsPerBatch);
}

BENCHMARK(bm_pipeline<false>)->Name("pipeline/l3_roce")->UseManualTime();
BENCHMARK(bm_pipeline<true>)->Name("pipeline/l3_roce+rx_alloc")->UseManualTime();
BENCHMARK(bm_pipeline<false, true>)->Name("pipeline/l3_roce_general")->UseManualTime();

}  // namespace
}  // namespace rs::bench
