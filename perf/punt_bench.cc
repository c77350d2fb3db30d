// The punt path under an ARP flood (issue 21): the forwarding rate of the l3_roce pipeline on
// one worker, RoCE traffic as in pipeline_bench (perf/bench_world.h), and what the punt stage
// lets up to the control plane. The cases share one FIB (1000 /24 routes, 16 eight-way ecmp
// groups), built by build_fib from a SwitchConfig as the switch builds it:
//   punt/no_addresses    no port has an address: no punt ring, the punt stage never reached
//   punt/addresses       port 0 (the ingress) has 10.200.0.1/24: its host and connected routes,
//                        a punt ring; RoCE only
//   punt/arp_flood:P     the same with P % of the input packets ARP requests for 10.200.0.1
//                        (broadcast, from 64 hosts of the subnet) at seeded random places;
//                        P = 100 is what a policed ARP costs alone
//   punt/no_addresses+arp:10  10 % of the same ARP frames without addresses: non_ip drops in
//                        l3_input, no punt stage (what any drop in a mixed burst costs)
// An iteration is 32 bursts of 32 packets through the pipeline plus transmit() on every port,
// timed in the thread's CPU time; mbuf allocation and the frame copy stay outside. The worker's
// clock (ctx.now_ns) is the TSC, read once a burst as Worker::poll does, so the policer (CoPP's
// default for ARP: 600 pps, burst 600, per port) sees real time. What goes up is dequeued from
// the punt ring after each iteration, untimed, and freed (LocalPath::take, as the control thread
// would; answering it is the control thread's work, not measured here).
//
// items_per_second is RoCE packets forwarded per CPU second; in_pps counts every input packet.
// The last line, for scripts:
//   punt_flood: roce_mpps_base=... roce_mpps_addr=... roce_mpps_flood10=... roce_mpps_flood50=...
//               ratio_addr=... ratio_flood10=... ratio_flood50=... in_ratio_flood10=... ...
// ratio_*: that case's RoCE Mpps over no_addresses'; in_ratio_*: its input Mpps (RoCE + ARP)
// over no_addresses' (above 1: a policed ARP costs less than a forwarded RoCE packet).
#include <benchmark/benchmark.h>
#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "dataplane/core/clock.h"
#include "dataplane/core/pipeline.h"
#include "dataplane/proto/arp.h"
#include "dataplane/proto/ip_addr.h"
#include "dataplane/stages/punt.h"
#include "dataplane/switch/local_path.h"
#include "dataplane/switch/switch_config.h"
#include "perf/bench_world.h"
#include "pipelines_embedded.h"
#include "tests/support/eal_env.h"

namespace rs::bench {
namespace {

constexpr const char* kPortAddr = "10.200.0.1";  // port 0's; the RoCE senders are 10.200.0.2
constexpr uint8_t kPortDepth = 24;
constexpr uint32_t kArpTemplates = 64;

[[noreturn]] void die(const std::string& why) {
  std::fprintf(stderr, "punt_bench set-up: %s\n", why.c_str());
  std::exit(1);
}

// The FIB of bench_world.cc (same groups, members and routes) as a SwitchConfig, so that the
// addressed variant gets its routes from add_interface_routes and its groups from build_fib,
// exactly as the switch does.
SwitchConfig fib_config(bool addressed) {
  SwitchConfig cfg;
  cfg.workers = 1;
  cfg.seed = 7;
  for (uint16_t p = 0; p <= kOutPorts; ++p) {
    PortSpec ps;
    ps.name = fmt::format("p{}", p);
    ps.mac = rte_ether_addr{{0x02, 0x52, 0x53, 0, 0, static_cast<uint8_t>(p)}};
    cfg.ports.push_back(ps);
  }
  if (addressed) cfg.ports[kInPort].addrs.push_back({*parse_ip(kPortAddr), kPortDepth});
  for (uint32_t g = 0; g < kGroups; ++g) {
    GroupSpec gs;
    gs.name = fmt::format("g{}", g);
    gs.policy.name = "ecmp";
    for (uint16_t p = 1; p <= kOutPorts; ++p) {
      GroupMemberSpec m;
      m.port = p;
      m.mac = rte_ether_addr{{0x02, 0xAA, 0, 0, static_cast<uint8_t>(g), static_cast<uint8_t>(p)}};
      gs.members.push_back(m);
    }
    cfg.groups.push_back(gs);
  }
  for (uint32_t r = 0; r < kRoutes; ++r) {
    RouteSpec rs;
    rs.addr[0] = 10;
    rs.addr[1] = static_cast<uint8_t>(r >> 8);
    rs.addr[2] = static_cast<uint8_t>(r & 255);
    rs.depth = 24;
    rs.group = r % kGroups;
    cfg.routes.push_back(rs);
  }
  add_interface_routes(cfg);
  return cfg;
}

struct PuntWorld {
  PuntWorld()
      : plain(build_fib(fib_config(false))),
        addressed(build_fib(fib_config(true))),
        local(1, world().rig.port_owner, static_cast<uint16_t>(1 + kOutPorts), test::test_pool()) {
    const SwitchConfig cfg = fib_config(true);
    if (!cfg.has_addresses() || cfg.groups.size() != kGroups + 2) die("port 0's address made no local and connected groups");
    uint32_t g;
    const IpAddr a = *parse_ip(kPortAddr);
    if (!addressed->lookup4(a.v4_be(), g) || addressed->group(g).punt != PuntReason::Local) die("no local route to the port's address");
    // ARP requests for the port's address from hosts of its subnet, broadcast, padded to 60.
    const rte_ether_addr bcast{{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}};
    arp.resize(kArpTemplates);
    for (uint32_t t = 0; t < kArpTemplates; ++t) {
      proto::ArpPacket req;
      req.op = proto::kArpOpRequest;
      req.sha = rte_ether_addr{{0x02, 0, 0, 0, 0xBB, static_cast<uint8_t>(t)}};
      req.spa = IpAddr::v4(htonl((10u << 24) | (200u << 16) | (2 + t))).v4_be();
      req.tpa = a.v4_be();
      if (proto::build_arp(arp[t].data(), kFrameLen, bcast, req.sha, req) != kFrameLen) die("ARP frame is not 60 bytes");
    }
  }
  std::unique_ptr<Fib> plain, addressed;
  LocalPath local;
  std::vector<std::array<uint8_t, kFrameLen>> arp;
};

std::unique_ptr<PuntWorld> g_punt;
PuntWorld& punt_world() {
  if (!g_punt) g_punt = std::make_unique<PuntWorld>();
  return *g_punt;
}

uint64_t stage_counter(const Pipeline& p, std::string_view node, std::string_view name) {
  for (const auto& n : p.nodes()) {
    if (n.name != node) continue;
    const auto names = n.stage->counter_names();
    for (std::size_t i = 0; i < names.size(); ++i)
      if (names[i] == name) return n.stage->counters()[i].get();
  }
  die(std::string("no counter ") + std::string(name) + " in node " + std::string(node));
}

uint64_t total_drops(const WorkerContext& ctx) {
  uint64_t s = 0;
  for (std::size_t p = 0; p <= kOutPorts; ++p)
    for (std::size_t r = 0; r < kNumDropReasons; ++r) s += ctx.counters->port_drops[p][r].get();
  return s;
}

void bm_punt(benchmark::State& state, bool addressed, unsigned arp_pct) {
  World& w = world();
  PuntWorld& pw = punt_world();
  WorkerContext& ctx = w.ctx();
  ctx.fib = addressed ? pw.addressed.get() : pw.plain.get();
  ctx.punt = addressed ? pw.local.punt_ring(0) : nullptr;
  static const CoppConfig kCopp{};  // SONiC's defaults: ARP 600 pps, burst 600
  StageEnv env = w.env;
  env.copp = &kCopp;
  // A new pipeline a run: its punt stage's policers start full (the burst of 600 goes up).
  Pipeline pipeline(parse_pipeline(kPipelineL3Roce, "pipelines/l3_roce.yaml"), env);

  // Which packets of a batch are ARP: arp_pct % of them, at places drawn once (seeded), as a
  // flood and the RoCE flows interleave on the wire; the same places every iteration.
  std::vector<uint8_t> is_arp(kPktsPerBatch);
  const uint32_t arp_per_batch = kPktsPerBatch * arp_pct / 100;
  std::fill_n(is_arp.begin(), arp_per_batch, uint8_t{1});
  std::mt19937 rng(arp_pct);
  std::shuffle(is_arp.begin(), is_arp.end(), rng);
  const uint64_t roce_per_batch = kPktsPerBatch - arp_per_batch;

  std::vector<rte_mbuf*> pkts(kPktsPerBatch);
  rte_mbuf* up[LocalPath::kRingSize];
  uint32_t cursor = 0, arp_cursor = 0;
  uint64_t went_up = 0;
  const uint64_t sent0 = w.sent();
  const uint64_t policed0 = ctx.counters->port_drops[kInPort][static_cast<std::size_t>(DropReason::PuntPoliced)].get();
  const uint64_t non_ip0 = ctx.counters->port_drops[kInPort][static_cast<std::size_t>(DropReason::NonIp)].get();
  const uint64_t drops0 = total_drops(ctx);
  const uint64_t base_ns = ctx.now_ns;
  TscClock clock;
  BatchTimer timer;
  for (auto _ : state) {
    if (rte_pktmbuf_alloc_bulk(test::test_pool(), pkts.data(), kPktsPerBatch) != 0) die("mbuf pool exhausted: the benchmark leaks mbufs");
    for (uint32_t i = 0; i < kPktsPerBatch; ++i) {
      rte_mbuf* m = pkts[i];
      if (is_arp[i]) {
        std::memcpy(rte_pktmbuf_mtod(m, void*), pw.arp[arp_cursor++ & (kArpTemplates - 1)].data(), kFrameLen);
        meta(m) = PacketMeta{};
        meta(m).in_port = kInPort;
      } else {
        const Template& t = w.templates[cursor++ & (kTemplates - 1)];
        std::memcpy(rte_pktmbuf_mtod(m, void*), t.bytes.data(), kFrameLen);
        meta(m) = t.meta_before[kL3Input];
      }
      m->data_len = kFrameLen;
      m->pkt_len = kFrameLen;
    }
    timer.start();
    for (uint32_t k = 0; k < kBurstsPerBatch; ++k) {
      Burst b;
      std::memcpy(b.pkts, &pkts[k * kBenchBurst], kBenchBurst * sizeof(rte_mbuf*));
      b.n = kBenchBurst;
      ctx.rx_port = kInPort;
      ctx.now_ns = base_ns + clock.now_ns();  // the worker's clock, once a poll
      pipeline.run(b, ctx);
      for (uint16_t p = 0; p <= kOutPorts; ++p) w.egress(p)->transmit(ctx);
    }
    timer.stop(state);
    // The control thread's side, untimed: take what went up and let it go.
    for (unsigned n; (n = pw.local.take(up, LocalPath::kRingSize)) != 0;) {
      went_up += n;
      rte_pktmbuf_free_bulk(up, n);
    }
  }
  const double wall_s = static_cast<double>(clock.now_ns()) * 1e-9;
  drain_egress(ctx);
  ctx.fib = w.rig.fib.get();
  ctx.punt = nullptr;

  const uint64_t iters = static_cast<uint64_t>(state.iterations());
  const uint64_t roce = iters * roce_per_batch, arps = iters * arp_per_batch;
  const uint64_t sent = w.sent() - sent0;
  const uint64_t policed = ctx.counters->port_drops[kInPort][static_cast<std::size_t>(DropReason::PuntPoliced)].get() - policed0;
  const uint64_t drops = total_drops(ctx) - drops0;
  // The books: every RoCE packet reached a null port, every ARP was policed or went up.
  if (sent != roce) {
    state.SkipWithError("RoCE packets were dropped in the pipeline");
    return;
  }
  // With addresses every ARP is policed or goes up; without, each is a non_ip drop in l3_input.
  const uint64_t non_ip = ctx.counters->port_drops[kInPort][static_cast<std::size_t>(DropReason::NonIp)].get() - non_ip0;
  if (addressed ? (policed + went_up != arps || drops != policed) : (non_ip != arps || drops != arps || went_up != 0)) {
    state.SkipWithError("ARP packets neither policed nor punted, or other drops");
    return;
  }
  if (addressed && (stage_counter(pipeline, "punt", "arp") != went_up || stage_counter(pipeline, "punt", "policed") != policed ||
                    stage_counter(pipeline, "punt", "queue_full") != 0)) {
    state.SkipWithError("the punt stage's counters disagree with the ring and the drop counters");
    return;
  }
  state.SetItemsProcessed(static_cast<int64_t>(roce));
  state.counters["in_pps"] = benchmark::Counter(static_cast<double>(iters * kPktsPerBatch), benchmark::Counter::kIsRate);
  state.counters["t_per_pkt"] =
      benchmark::Counter(static_cast<double>(kPktsPerBatch), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  if (arp_pct && addressed) {
    state.counters["arp_in"] = static_cast<double>(arps);
    state.counters["arp_up"] = static_cast<double>(went_up);
    state.counters["policed"] = static_cast<double>(policed);
    state.counters["policed_pct"] = 100.0 * static_cast<double>(policed) / static_cast<double>(arps);
    // Wall time of the run: the policer lets through its burst plus 600 a second of it.
    state.counters["wall_s"] = wall_s;
  }
}

BENCHMARK_CAPTURE(bm_punt, no_addresses, false, 0)->Name("punt/no_addresses")->UseManualTime();
BENCHMARK_CAPTURE(bm_punt, addresses, true, 0)->Name("punt/addresses")->UseManualTime();
BENCHMARK_CAPTURE(bm_punt, flood10, true, 10)->Name("punt/arp_flood:10")->UseManualTime();
BENCHMARK_CAPTURE(bm_punt, flood50, true, 50)->Name("punt/arp_flood:50")->UseManualTime();
BENCHMARK_CAPTURE(bm_punt, flood100, true, 100)->Name("punt/arp_flood:100")->UseManualTime();
BENCHMARK_CAPTURE(bm_punt, no_addresses_arp10, false, 10)->Name("punt/no_addresses+arp:10")->UseManualTime();

// The console reporter, keeping each case's figures for the summary line: the median
// aggregate when there are repetitions, else the one run.
class Keeper : public benchmark::ConsoleReporter {
 public:
  using ConsoleReporter::ConsoleReporter;
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) {
      if (r.error_occurred) continue;
      const std::string& name = r.run_name.function_name;
      if (r.run_type == Run::RT_Aggregate) {
        if (r.aggregate_name == "median") median_[name] = r.counters;
      } else {
        iterations_[name].push_back(r.counters);
      }
    }
    ConsoleReporter::ReportRuns(runs);
  }
  // A counter of a case (NaN when the case did not run or failed).
  double get(const std::string& name, const std::string& counter) const {
    if (auto it = median_.find(name); it != median_.end()) return value(it->second, counter);
    auto it = iterations_.find(name);
    if (it == iterations_.end() || it->second.empty()) return NAN;
    std::vector<double> v;
    for (auto& c : it->second) v.push_back(value(c, counter));
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  }

 private:
  static double value(const benchmark::UserCounters& c, const std::string& counter) {
    auto it = c.find(counter);
    return it == c.end() ? NAN : it->second.value;
  }
  std::map<std::string, benchmark::UserCounters> median_;
  std::map<std::string, std::vector<benchmark::UserCounters>> iterations_;
};

void print_summary(const Keeper& k) {
  auto mpps = [&](const char* name, const char* counter) { return k.get(name, counter) * 1e-6; };
  const double base = mpps("punt/no_addresses", "items_per_second");
  const double addr = mpps("punt/addresses", "items_per_second");
  const double f10 = mpps("punt/arp_flood:10", "items_per_second");
  const double f50 = mpps("punt/arp_flood:50", "items_per_second");
  const double in10 = mpps("punt/arp_flood:10", "in_pps");
  const double in50 = mpps("punt/arp_flood:50", "in_pps");
  const double nonip10 = mpps("punt/no_addresses+arp:10", "items_per_second");
  std::cout << fmt::format(
      "punt_flood: roce_mpps_base={:.2f} roce_mpps_addr={:.2f} roce_mpps_flood10={:.2f} roce_mpps_flood50={:.2f} "
      "ratio_addr={:.3f} ratio_flood10={:.3f} ratio_flood50={:.3f} in_mpps_flood10={:.2f} in_mpps_flood50={:.2f} "
      "in_ratio_flood10={:.3f} in_ratio_flood50={:.3f} policed_pct10={:.3f} policed_pct50={:.3f} arp_up10={:.0f} "
      "arp_up50={:.0f} roce_mpps_nonip10={:.2f} ns_per_roce={:.1f} ns_per_policed_arp={:.1f}\n",
      base, addr, f10, f50, addr / base, f10 / base, f50 / base, in10, in50, in10 / base, in50 / base,
      k.get("punt/arp_flood:10", "policed_pct"), k.get("punt/arp_flood:50", "policed_pct"), k.get("punt/arp_flood:10", "arp_up"),
      k.get("punt/arp_flood:50", "arp_up"), nonip10, k.get("punt/no_addresses", "t_per_pkt") * 1e9,
      k.get("punt/arp_flood:100", "t_per_pkt") * 1e9);
}

}  // namespace
}  // namespace rs::bench

// main() as bench_main.cc's (Google Benchmark's flags, then the test EAL with --no-huge), with a
// reporter that keeps the figures for the last line.
// Unless told otherwise (--benchmark_min_time), 0.3 s of timed work a case, about 0.6 s of wall
// time with the untimed refills: the six cases and their calibration take about 5 s.
int main(int argc, char** argv) {
  std::vector<char*> args = {argv[0], const_cast<char*>("--benchmark_min_time=0.3")};
  args.insert(args.end(), argv + 1, argv + argc);  // a later flag wins
  args.push_back(nullptr);
  argc = static_cast<int>(args.size() - 1);
  argv = args.data();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  rs::test::init_test_eal();
  rs::bench::Keeper keeper(isatty(STDOUT_FILENO) ? benchmark::ConsoleReporter::OO_Color : benchmark::ConsoleReporter::OO_None);
  benchmark::RunSpecifiedBenchmarks(&keeper);
  benchmark::Shutdown();
  rs::bench::print_summary(keeper);
  std::cout.flush();
  rs::bench::g_punt.reset();   // the FIBs' rte_lpm and the rings before the EAL goes
  rs::bench::destroy_world();
  rs::test::shutdown_test_eal();
  return 0;
}
