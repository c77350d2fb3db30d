#include "app/fabric_run.h"

#include <fmt/core.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_log.h>

#include <chrono>
#include <fstream>
#include <string_view>

#include "app/eal_args.h"
#include "app/stats_json.h"
#include "dataplane/core/log.h"

namespace rs {

namespace {

// Virtual time run between two looks at the wall clock (the progress line, nothing else).
constexpr uint64_t kSliceNs = 20'000;

nlohmann::json fabric_json(const Fabric& fab, double real_s) {
  const FabricTotals t = fab.totals();
  const double virtual_s = static_cast<double>(fab.now() - fab.start()) / 1e9;
  nlohmann::json j;
  j["fabric"] = {{"virtual_s", virtual_s},
                 {"real_s", real_s},
                 {"slowdown", virtual_s > 0 ? real_s / virtual_s : 0.0},
                 {"steps", fab.steps()},
                 {"jumps", fab.jumps()},
                 {"totals",
                  {{"from_hosts", t.from_hosts}, {"made", t.made}, {"to_hosts", t.to_hosts}, {"queued", t.queued},
                   {"in_flight", t.in_flight}, {"dropped", t.dropped}, {"held", t.held}, {"cable_in_flight", t.cable_in_flight},
                   {"cable_lost", t.cable_lost}, {"balanced", t.balanced()}}}};
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
    const_cast<Fabric&>(fab).cable(i).stats(c);
    cables.push_back(std::move(c));
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
    const_cast<Fabric&>(fab).cable(i).stats(c);
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
  EalPlan plan = plan_eal_args(o.eal_user, 0);
  // Without hugepages the plan asks for 1 GiB of heap, one switch's worth: each switch holds its
  // own route tables (rte_lpm's first level alone is 64 MiB) and mbuf pool.
  uint64_t mb = 256;
  for (const FabricSwitch& s : spec.fabric.switches) mb += 160 + uint64_t{s.cfg.mbufs} * 2560 / (1 << 20);
  for (auto& a : plan.args)
    if (a == "-m1024" && mb > 1024) {
      a = fmt::format("-m{}", mb);
      plan.notes.push_back(fmt::format("a fabric of {} switches: {} MiB of heap", spec.fabric.switches.size(), mb));
    }
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
    while (fab->now() < end) {
      fab->run_until(std::min(end, fab->now() + kSliceNs));
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
    const nlohmann::json before = fabric_json(*fab, real_s);
    fab->shutdown();
    const FabricTotals t = fab->totals();
    fmt::print("\n{}\n", summary(*fab));
    fmt::print("virtual {:.3f} ms in {:.2f} s real ({:.0f}x slower than real time), {} steps, {} jumps\n",
               static_cast<double>(fab->now()) / 1e6, real_s, fab->now() ? real_s * 1e9 / static_cast<double>(fab->now()) : 0.0,
               fab->steps(), fab->jumps());
    fmt::print("books: from hosts {} + made {} = to hosts {} + dropped {} + on cables {} + lost {}: {}\n", t.from_hosts, t.made,
               t.to_hosts, t.dropped, t.cable_in_flight, t.cable_lost, t.balanced() ? "balanced" : "NOT BALANCED");
    if (!t.balanced()) rc = 1;
    if (!o.stats_json.empty()) {
      nlohmann::json j = fabric_json(*fab, real_s);
      j["fabric"]["before_shutdown"] = before["fabric"]["totals"];
      std::ofstream f(o.stats_json);
      f << j.dump(1) << "\n";
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
