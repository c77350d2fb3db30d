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
#include "app/routing_stats.h"
#include "app/stats_json.h"
#include "dataplane/core/log.h"

namespace rs {

namespace {

// Virtual time run between two looks at the wall clock (the progress line, nothing else).
constexpr uint64_t kSliceNs = 20'000;

nlohmann::json totals_json(const FabricTotals& t) {
  return {{"from_hosts", t.from_hosts}, {"made", t.made}, {"to_hosts", t.to_hosts}, {"queued", t.queued},
          {"in_flight", t.in_flight}, {"dropped", t.dropped}, {"held", t.held}, {"cable_in_flight", t.cable_in_flight},
          {"cable_lost", t.cable_lost}, {"balanced", t.balanced()}};
}

// The run's scale and speed (issue 23's figures): frames moved counts every frame a switch port
// received, so a frame crossing three switches counts three times, as htsim counts switch frames.
struct Speed {
  std::size_t switches = 0, hosts = 0, links = 0;
  double sim_s = 0, wall_s = 0;
  uint64_t frames = 0;
  double frames_per_wall_s() const { return wall_s > 0 ? static_cast<double>(frames) / wall_s : 0; }
  double slowdown() const { return sim_s > 0 ? wall_s / sim_s : 0; }
};

Speed speed_of(const Fabric& fab, double wall_s) {
  Speed s;
  s.switches = fab.num_switches();
  s.links = fab.num_cables();
  s.sim_s = static_cast<double>(fab.now() - fab.start()) / 1e9;
  s.wall_s = wall_s;
  for (std::size_t i = 0; i < fab.num_switches(); ++i)
    for (std::size_t p = 0; p < fab.at(i).num_ports(); ++p) {
      s.frames += fab.at(i).rx_packets(p);
      if (fab.at(i).config().ports[p].kind == PortKind::EmulatedHost) ++s.hosts;
    }
  return s;
}

nlohmann::json fabric_json(const Fabric& fab, const Speed& sp, const FabricTotals& before_shutdown) {
  nlohmann::json j;
  // Everything but `wall` is the same on every run of a spec.
  j["fabric"] = {{"switches", sp.switches},
                 {"hosts", sp.hosts},
                 {"links", sp.links},
                 {"virtual_s", sp.sim_s},
                 {"frames", sp.frames},
                 {"steps", fab.steps()},
                 {"jumps", fab.jumps()},
                 {"wall", {{"real_s", sp.wall_s}, {"slowdown", sp.slowdown()}, {"frames_per_wall_s", sp.frames_per_wall_s()}}},
                 {"totals", totals_json(fab.totals())},
                 {"before_shutdown", totals_json(before_shutdown)}};
  auto& sw = j["switches"];
  sw = nlohmann::json::array();
  for (std::size_t i = 0; i < fab.num_switches(); ++i) {
    nlohmann::json s = stats_json(fab.at(i));
    s["name"] = fab.switch_name(i);
    sw.push_back(std::move(s));
  }
  auto& cables = j["cables"];
  cables = nlohmann::json::array();
  for (std::size_t i = 0; i < fab.num_cables(); ++i) {
    nlohmann::json c;
    fab.cable(i).stats(c);
    cables.push_back(std::move(c));
  }
  return j;
}

nlohmann::json series_line(const Fabric& fab) {
  const double t = static_cast<double>(fab.now() - fab.start()) / 1e9;
  nlohmann::json j{{"t_s", t}, {"switches", nlohmann::json::array()}};
  for (std::size_t i = 0; i < fab.num_switches(); ++i) {
    nlohmann::json s = series_sample(fab.at(i), t);
    s["name"] = fab.switch_name(i);
    j["switches"].push_back(std::move(s));
  }
  return j;
}

std::string summary(const Fabric& fab) {
  const double span = static_cast<double>(fab.now() - fab.start());
  std::string out = fmt::format("{:<10} {:>12} {:>12} {:>10} {:>10} {:>8}\n", "switch", "rx Gb/s", "tx Gb/s", "drops", "PFC sent",
                                "lossless");
  for (std::size_t i = 0; i < fab.num_switches(); ++i) {
    const Switch& s = fab.at(i);
    uint64_t rx = 0, tx = 0, drops = 0, pfc = 0;
    for (std::size_t p = 0; p < s.num_ports(); ++p) {
      rx += s.rx_bytes(p);
      tx += s.tx_bytes(p);
      pfc += s.egress(p).pfc_gen().counters().frames.get();
      for (std::size_t r = 1; r < kNumDropReasons; ++r)
        if (static_cast<DropReason>(r) != DropReason::MacControl && static_cast<DropReason>(r) != DropReason::Shutdown)
          drops += s.drops(p, static_cast<DropReason>(r));
    }
    out += fmt::format("{:<10} {:>12.3f} {:>12.3f} {:>10} {:>10} {:>8}\n", fab.switch_name(i), span ? rx * 8 / span : 0.0,
                       span ? tx * 8 / span : 0.0, drops, pfc, s.lossless_drops());
  }
  out += fmt::format("\n{:<28} {:>10} {:>10} {:>8} {:>6}\n", "cable", "a->b Gb/s", "b->a Gb/s", "lost", "up");
  for (std::size_t i = 0; i < fab.num_cables(); ++i) {
    nlohmann::json c;
    fab.cable(i).stats(c);
    const auto& d = c["directions"];
    const double ab = span ? d[0]["sent_bytes"].get<double>() * 8 / span : 0, ba = span ? d[1]["sent_bytes"].get<double>() * 8 / span : 0;
    out += fmt::format("{:<28} {:>10.3f} {:>10.3f} {:>8} {:>6}\n", c["name"].get<std::string>(), ab, ba,
                       d[0]["lost"].get<uint64_t>() + d[1]["lost"].get<uint64_t>() + d[0]["lost_link_down"].get<uint64_t>() +
                           d[1]["lost_link_down"].get<uint64_t>(),
                       c["up"].get<bool>() ? "yes" : "no");
  }
  return out;
}

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
    fmt::print("\n{}\n", summary(*fab));
    fmt::print("virtual {:.3f} ms in {:.2f} s real ({:.0f}x slower than real time), {} steps, {} jumps\n", sp.sim_s * 1e3, real_s,
               sp.slowdown(), fab->steps(), fab->jumps());
    fmt::print("books: from hosts {} + made {} = to hosts {} + dropped {} + on cables {} + lost {}: {}\n", t.from_hosts, t.made,
               t.to_hosts, t.dropped, t.cable_in_flight, t.cable_lost, t.balanced() ? "balanced" : "NOT BALANCED");
    fmt::print("switches={} hosts={} links={} sim_s={:.6f} wall_s={:.3f} frames={} frames_per_wall_s={:.0f} slowdown={:.1f}\n",
               sp.switches, sp.hosts, sp.links, sp.sim_s, sp.wall_s, sp.frames, sp.frames_per_wall_s(), sp.slowdown());
    if (!t.balanced()) rc = 1;
    if (!o.stats_json.empty()) {
      std::ofstream f(o.stats_json);
      f << fabric_json(*fab, sp, before).dump(1) << "\n";
      if (!f) {
        fmt::print(stderr, "roceswitch: cannot write {}\n", o.stats_json);
        rc = 1;
      }
    }
  }
  rte_eal_cleanup();
  return rc;
}

}  // namespace rs
