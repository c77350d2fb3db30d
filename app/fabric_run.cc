#include "app/fabric_run.h"

#include <fmt/core.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_log.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <string_view>

#include "app/eal_args.h"
#include "app/fabric_stats.h"
#include "control/fabric/fabric_routing.h"
#include "dataplane/core/log.h"

namespace rs {

namespace {

// Virtual time run between two looks at the wall clock (the progress line, nothing else).
constexpr uint64_t kSliceNs = 20'000;

}  // namespace

int run_fabric(const FabricRunSpec& spec, const FabricRunOptions& o) {
  const double duration = o.duration_s >= 0 ? o.duration_s : spec.duration_s;
  // Without hugepages the heap is sized for the switches: each holds its own route tables
  // (rte_lpm's first level alone is 64 MiB) and mbuf pool.
  uint64_t mb = 256;
  for (const FabricSwitch& s : spec.fabric.switches) mb += 160 + uint64_t{s.cfg.mbufs} * 2560 / (1 << 20);
  mb = std::max<uint64_t>(mb, 1024);
  EalPlan plan = plan_eal_args(o.eal_user, 0, -1, static_cast<unsigned>(mb));
  if (mb > 1024)
    for (const auto& a : plan.args)
      if (a == fmt::format("-m{}", mb)) plan.notes.push_back(fmt::format("a fabric of {} switches: {} MiB of heap", spec.fabric.switches.size(), mb));
  for (auto& n : plan.notes) fmt::print(stderr, "roceswitch: {}\n", n);
  std::vector<char*> argv;
  for (auto& s : plan.args) argv.push_back(s.data());
  if (log_level() < LogLevel::Debug) rte_log_set_global_level(RTE_LOG_WARNING);
  if (rte_eal_init(static_cast<int>(argv.size()), argv.data()) < 0) {
    fmt::print(stderr, "roceswitch: EAL init failed: {}\n", rte_strerror(rte_errno));
    return 1;
  }
  int rc = 0;
  {
    std::unique_ptr<Fabric> fab;
    try {
      fab = std::make_unique<Fabric>(spec.fabric, 0);
    } catch (const std::exception& e) {
      fmt::print(stderr, "roceswitch: cannot start the fabric: {}\n", e.what());
      rte_eal_cleanup();
      return 1;
    }
    // Routes reconverge after cable events (none scheduled: nothing to do).
    std::unique_ptr<FabricRouting> routing;
    bool events = false;
    for (std::size_t c = 0; c < fab->num_cables(); ++c) events |= !fab->cable_spec(c).events.empty();
    if (events && spec.convergence_ns) routing = std::make_unique<FabricRouting>(*fab, *spec.convergence_ns);
    log(LogLevel::Info, "{}: fabric of {} switches and {} cables, step {} ns, running {} ms of virtual time", spec.source,
        fab->num_switches(), fab->num_cables(), spec.fabric.step_ns, duration * 1e3);
    const auto t0 = std::chrono::steady_clock::now();
    auto last = t0;
    const uint64_t end = static_cast<uint64_t>(duration * 1e9);
    std::ofstream series;
    if (!o.series.empty()) {
      series.open(o.series);
      if (!series) fmt::print(stderr, "roceswitch: cannot write {}\n", o.series);
    }
    const uint64_t every = static_cast<uint64_t>(o.series_ms * 1e6);
    uint64_t next_sample = every;
    while (fab->now() < end) {
      fab->run_until(std::min({end, fab->now() + kSliceNs, series ? next_sample : end}));
      if (series && fab->now() >= next_sample) {
        series << series_line(*fab).dump() << "\n";
        next_sample += every;
      }
      const auto now = std::chrono::steady_clock::now();
      if (!o.quiet && now - last >= std::chrono::seconds(1)) {
        last = now;
        const double real = std::chrono::duration<double>(now - t0).count(), virt = static_cast<double>(fab->now()) / 1e9;
        fmt::print("fabric: {:.3f} of {:.3f} ms virtual, {:.1f} s real ({:.0f}x slower than real time)\n", virt * 1e3,
                   duration * 1e3, real, virt > 0 ? real / virt : 0.0);
        std::fflush(stdout);
      }
    }
    const double real_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (series && fab->now() + every > next_sample) series << series_line(*fab).dump() << "\n";  // the last figures
    if (series) {
      series.close();
      if (!series) fmt::print(stderr, "roceswitch: cannot write {}\n", o.series);
    }
    const FabricTotals before = fab->totals();
    const Speed sp = speed_of(*fab, real_s);
    fab->shutdown();
    const FabricTotals t = fab->totals();
    nlohmann::json stats = fabric_json(*fab, spec, sp, before);
    if (routing) stats["fabric"]["routing"] = routing->json();
    fmt::print("\n{}\n", summary(*fab, stats));
    if (routing)
      for (const auto& u : routing->updates()) {
        fmt::print("routes converged at {:.1f} us ({:.1f} us after a cable event): {} switches changed {} host routes, {} withdrawn\n",
                   static_cast<double>(u.at_ns) / 1e3, static_cast<double>(routing->convergence_ns()) / 1e3, u.switches, u.routes, u.withdrawn);
        for (const auto& e : u.errors) fmt::print(stderr, "roceswitch: a route update was refused: {}\n", e);
      }
    fmt::print("virtual {:.3f} ms in {:.2f} s real ({:.0f}x slower than real time), {} steps, {} jumps\n", sp.sim_s * 1e3, real_s,
               sp.slowdown(), fab->steps(), fab->jumps());
    fmt::print("books: from hosts {} + made {} = to hosts {} + dropped {} + on cables {} + lost {}: {}\n", t.from_hosts, t.made,
               t.to_hosts, t.dropped, t.cable_in_flight, t.cable_lost, t.balanced() ? "balanced" : "NOT BALANCED");
    fmt::print("switches={} hosts={} links={} sim_s={:.6f} wall_s={:.3f} frames={} frames_per_wall_s={:.0f} slowdown={:.1f}\n",
               sp.switches, sp.hosts, sp.links, sp.sim_s, sp.wall_s, sp.frames, sp.frames_per_wall_s(), sp.slowdown());
    if (!t.balanced()) rc = 1;
    if (!o.stats_json.empty()) {
      std::ofstream f(o.stats_json);
      f << stats.dump(1) << "\n";
      if (!f) {
        fmt::print(stderr, "roceswitch: cannot write {}\n", o.stats_json);
        rc = 1;
      }
    }
    // The switches are stopped and counted; their memory goes back with the process's. Freeing
    // it would cost more than most runs: DPDK zeroes the heap memory it frees when it had kept
    // it clean, so freeing a switch's route table (rte_lpm's 64 MiB first level, mostly never
    // touched) faults in every page of it.
    (void)fab.release();
  }
  rte_eal_cleanup();
  return rc;
}

}  // namespace rs
