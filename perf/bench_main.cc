// main() for the perf binaries: Google Benchmark's flags first, then the test EAL (--no-huge,
// per-process file prefix) that the packet builder's mbuf pool needs.
#include <benchmark/benchmark.h>

#include "perf/bench_world.h"
#include "tests/support/eal_env.h"

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  rs::test::init_test_eal();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  rs::bench::destroy_world();  // rte_lpm and the egress queues go before the EAL does
  rs::test::shutdown_test_eal();
  return 0;
}
