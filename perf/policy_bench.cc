// ns/packet of each registered routing policy's select(), called as nexthop_select calls it:
// bursts of 32 packets of one eight-member group, every member up, through the RoutingPolicy
// interface (one virtual call per burst). The load view is uneven and stays so: queues from
// empty to 150 KB, so bands from 7 to 0, a different depth in each egress queue. 1024 flows
// (RoCE hashes over 8 host pairs) in rotation; the clock moves 100 ns a burst, so a flow comes
// back well within a flowlet's idle time and flowlet tables are mostly hit, as in a steady
// transfer. One timed iteration is 32 bursts, in thread CPU time. The `/calls:8` rows split
// each burst into 8 calls of 4 packets, as a burst spread over 8 groups is (perf/linerate's
// workload): what a policy spends once a call shows there.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <array>
#include <memory>
#include <string>
#include <vector>

#include "dataplane/routing/routing_policy.h"
#include "dataplane/stages/parse.h"
#include "perf/bench_world.h"

namespace rs::bench {
namespace {

constexpr uint16_t kMembers = 8;  // on ports 1..8
constexpr uint32_t kFlows = 1024;

struct PolicyWorld {
  PolicyGroup group;
  std::unique_ptr<LoadView> load = std::make_unique<LoadView>();
  std::vector<PacketMeta> pkts;

  PolicyWorld() {
    for (uint16_t m = 0; m < kMembers; ++m) {
      group.nexthop.push_back(m);
      group.port.push_back(static_cast<uint16_t>(m + 1));
    }
    for (uint16_t s = 0; s < 256; ++s) group.slot.push_back(s % kMembers);
    group.mask = 255;
    // Each member's queues a different depth, queue by queue; its band from the deepest.
    constexpr std::array<uint64_t, kMembers> depth = {0, 1500, 9000, 40000, 3000, 150000, 600, 20000};
    for (uint16_t m = 0; m < kMembers; ++m) {
      PortLoadRow& row = load->row(group.port[m]);
      uint64_t deepest = 0;
      for (unsigned q = 0; q < 8; ++q) {
        const uint64_t b = depth[(m + q) % kMembers];
        row.queue_bytes[q].store(b);
        deepest = std::max(deepest, b);
      }
      row.quality.store(load->band(deepest / 2, 40.0 + 7 * m));
    }
    for (uint32_t f = 0; f < kFlows; ++f) {
      PacketMeta p{};
      uint32_t h = parse::crc32c_u32(0x0A000001 + f % 8, 0);
      h = parse::crc32c_u32(0x0A010001 + f % 8, h);
      h = parse::crc32c_u32(uint32_t{static_cast<uint16_t>(0xC000 + f)} | uint32_t{__builtin_bswap16(4791)} << 16, h);
      p.flow_hash = parse::flow_hash_final(parse::crc32c_u8(17, h));
      p.tc = p.queue = static_cast<uint8_t>(f % 4 == 0 ? 0 : 3);  // mostly the RoCE class
      p.flags = meta_flag::kUdp | meta_flag::kRoce;
      p.dest_qp = 0x100 + f;
      pkts.push_back(p);
    }
  }
};

void bm_policy(benchmark::State& state, std::size_t id, ParamValues params, uint16_t calls) {
  static PolicyWorld w;
  const RoutingPolicyEntry& e = RoutingPolicyRegistry::at(id);
  const std::unique_ptr<RoutingPolicy> policy = e.make(PolicyInit{w.group, params, 42, 0});
  const uint64_t up = (uint64_t{1} << kMembers) - 1;
  std::array<PacketMeta*, kFlows> ptr;
  for (uint32_t f = 0; f < kFlows; ++f) ptr[f] = &w.pkts[f];
  uint16_t member[kBenchBurst];
  uint64_t now = 1'000'000, bad = 0;
  BatchTimer timer;
  for (auto _ : state) {
    timer.start();
    for (uint32_t k = 0; k < kBurstsPerBatch; ++k) {
      const uint16_t per_call = kBenchBurst / calls;
      for (uint16_t c = 0; c < calls; ++c)
        policy->select(&ptr[(k * kBenchBurst + c * per_call) % kFlows], per_call, SelectEnv{*w.load, now, up},
                       member + c * per_call);
      now += 100;
      benchmark::DoNotOptimize(member);
      benchmark::ClobberMemory();
    }
    timer.stop(state);
    for (uint16_t i = 0; i < kBenchBurst; ++i) bad += member[i] >= kMembers;
  }
  if (bad) state.SkipWithError("the policy answered a member outside the group");
  report_packets(state, kPktsPerBatch);
}

// Every registered policy with its defaults, and spray's other mode: a policy registered
// later is measured with no change here.
void register_policies() {
  const auto& all = RoutingPolicyRegistry::all();
  for (std::size_t id = 0; id < all.size(); ++id) {
    const std::string name = "policy/" + std::string(all[id].name);
    const ParamValues def = default_params(all[id].params);
    for (uint16_t calls : {1, 8}) {
      const std::string suffix = calls == 1 ? "" : "/calls:8";
      benchmark::RegisterBenchmark((name + suffix).c_str(), bm_policy, id, def, calls)->UseManualTime();
      const int mode = param_index(all[id].params, "mode");
      if (all[id].name == "spray" && mode >= 0) {
        ParamValues random = def;
        random.v[static_cast<std::size_t>(mode)] = 1;
        benchmark::RegisterBenchmark((name + "/mode:random" + suffix).c_str(), bm_policy, id, random, calls)->UseManualTime();
      }
    }
  }
}

}  // namespace
}  // namespace rs::bench

// Its own main(), unlike the other perf binaries: the benchmarks are made from the policy
// registry, which static initialisers fill in an order C++ leaves open (this file's could run
// first), and main() runs after all of them. bench_main.cc's main is then not linked in (a
// static library's member is only taken for a symbol still missing). No EAL: select() needs
// no mbuf.
int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  rs::bench::register_policies();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
