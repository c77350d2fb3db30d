// ns/packet of each stage of l3_roce's IPv4 path, in bursts of 32 64-byte RoCEv2 packets:
// parser, qos_classify, ipv4_lpm (1000 routes), nexthop_group (8-way ECMP groups),
// egress_rewrite, and the traffic manager (tm_enqueue, then egress transmit to a null port);
// and ipv4_fastpath, which does all of them in one stage, from the received frame to the queue.
// Each timed iteration is 32 bursts, in thread CPU time; restoring the packets from templates
// is not timed.
#include <benchmark/benchmark.h>

#include <cstring>
#include <vector>

#include "dataplane/stages/classify/qos_classify.h"
#include "dataplane/stages/egress/egress_rewrite.h"
#include "dataplane/stages/egress/tm_enqueue.h"
#include "dataplane/stages/fast/ipv4_fastpath.h"
#include "dataplane/stages/parse/parser.h"
#include "dataplane/stages/route/ipv4_lpm.h"
#include "dataplane/stages/route/nexthop_group.h"
#include "perf/bench_world.h"

namespace rs::bench {
namespace {

// One stage over the same 256 mbufs, restored before each batch. The stage is called through
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
    timer.start();
    for (uint32_t k = 0; k < kBurstsPerBatch; ++k) {
      Burst b;
      std::memcpy(b.pkts, &pkts[k * kBenchBurst], kBenchBurst * sizeof(rte_mbuf*));
      b.n = kBenchBurst;
      stage.process(b, next, ctx);
      benchmark::DoNotOptimize(next);
      benchmark::ClobberMemory();
    }
    timer.stop(state);
    for (uint16_t i = 0; i < kBenchBurst; ++i) bad += next[i] == kNextDrop;
  }
  rte_pktmbuf_free_bulk(pkts.data(), kPktsPerBatch);
  // Every template passes every stage: a drop means the set-up, not the stage, is measured.
  if (bad) state.SkipWithError("the stage dropped packets");
  report_packets(state, kPktsPerBatch);
}

// A stage that queues every packet (tm_enqueue, or ipv4_fastpath from the received frame) as
// the worker drives it: the stage for a burst, then one transmit call per egress port. Fresh
// mbufs each batch (the null ports free what they send).
template <typename S, int kStage, bool kTransmit>
void bm_queueing(benchmark::State& state) {
  World& w = world();
  WorkerContext& ctx = w.ctx();
  S stage(w.env);
  std::vector<rte_mbuf*> pkts(kPktsPerBatch);
  uint32_t cursor = 0;
  uint8_t next[kBenchBurst];
  uint64_t sent0 = 0;
  for (auto& p : w.null_ports) sent0 += p.sent;
  BatchTimer timer;
  for (auto _ : state) {
    alloc_restore(pkts.data(), kPktsPerBatch, kStage, &cursor);
    timer.start();
    for (uint32_t k = 0; k < kBurstsPerBatch; ++k) {
      Burst b;
      std::memcpy(b.pkts, &pkts[k * kBenchBurst], kBenchBurst * sizeof(rte_mbuf*));
      b.n = kBenchBurst;
      ctx.single_next = WorkerContext::kNoSingleNext;
      stage.process(b, next, ctx);
      if constexpr (kTransmit) {
        ctx.now_ns += 1000;  // 1 us of 400 Gb/s credit per burst: the shaper never holds packets
        for (uint16_t p = 1; p <= kOutPorts; ++p) w.egress_by_port[p]->transmit(ctx);
      }
    }
    timer.stop(state);
    if constexpr (!kTransmit) drain_egress(ctx);
  }
  drain_egress(ctx);
  uint64_t sent = 0;
  for (auto& p : w.null_ports) sent += p.sent;
  if (sent - sent0 != static_cast<uint64_t>(state.iterations()) * kPktsPerBatch) state.SkipWithError("packets were lost in the traffic manager");
  report_packets(state, kPktsPerBatch);
}

BENCHMARK(bm_stage<Parser, kParser>)->Name("parser")->UseManualTime();
BENCHMARK(bm_stage<QosClassify, kQosClassify>)->Name("qos_classify")->UseManualTime();
BENCHMARK(bm_stage<Ipv4Lpm, kIpv4Lpm>)->Name("ipv4_lpm/routes:1000")->UseManualTime();
BENCHMARK(bm_stage<NexthopGroup, kNexthopGroup>)->Name("nexthop_group/ecmp_8way")->UseManualTime();
BENCHMARK(bm_stage<EgressRewrite, kEgressRewrite>)->Name("egress_rewrite")->UseManualTime();
BENCHMARK(bm_queueing<TmEnqueue, kTmEnqueue, false>)->Name("tm_enqueue")->UseManualTime();
BENCHMARK(bm_queueing<TmEnqueue, kTmEnqueue, true>)->Name("tm_enqueue+transmit")->UseManualTime();
// The whole path of l3_roce for these packets in one stage; compare with the rows above summed.
BENCHMARK(bm_queueing<Ipv4Fastpath, kParser, false>)->Name("ipv4_fastpath")->UseManualTime();
BENCHMARK(bm_queueing<Ipv4Fastpath, kParser, true>)->Name("ipv4_fastpath+transmit")->UseManualTime();

}  // namespace
}  // namespace rs::bench
