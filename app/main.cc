// roceswitch: EAL options, then `--`, then the switch's own options. With no --config it runs
// the embedded incast demo on emulated RoCE hosts, so it needs no NIC and no file.
#include <fmt/core.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_log.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <fstream>
#include <thread>

#include <grp.h>

#include "control/config/config_loader.h"
#include "control/runtime/captures.h"
#include "control/local/local_agent.h"
#include "control/runtime/control_api.h"
#include "control/server/control_server.h"
#include "app/eal_args.h"
#include "app/fabric_run.h"
#include "app/observability.h"
#include "app/report.h"
#include "app/routing_stats.h"
#include "app/stats_json.h"
#include "dataplane/core/clock.h"
#include "dataplane/core/log.h"
#include "dataplane/routing/routing_policy.h"
#include "dataplane/switch/switch.h"
#include "configs_embedded.h"
#include "pipelines_embedded.h"

namespace {

std::atomic<bool> g_stop{false};
void on_signal(int) { g_stop.store(true, std::memory_order_relaxed); }

constexpr const char* kUsage = R"(usage: roceswitch [EAL options] -- [options]

A userspace RoCEv2 switch data plane on DPDK. Without --config it runs the embedded demo:
three emulated RoCE hosts incast into a fourth over emulated 1 Gb/s links for 10 s on a
lossless priority (PFC, ECN and the PFC watchdog on), beside a lossy flow that is dropped.

options:
  --config FILE          switch configuration (YAML); see README "Configuration". A file with
                         a top-level `fabric:` is a fabric of switches run on a virtual clock
                         (docs/fabric.md): --duration is then virtual time
  --duration SECONDS     stop after this long (0 = until SIGINT/SIGTERM; default: the config's
                         switch.duration_s, 10 for the demo)
  --stats-json FILE      write every counter as JSON at exit
  --series-ms MS         sample a time series every MS milliseconds (per-port tx bytes, queue
                         depths and quality band, per-member tx, per-flow receive at emulated
                         hosts): one JSON object a line, written to --series FILE (default:
                         the --stats-json path with .series.jsonl); at least 1, or 0.01
                         for a fabric (virtual time: the same series on every run)
  --series FILE          where the time series goes
  --help-policies        list the routing policies with their parameters and counters
  --control-socket PATH  serve the control protocol (newline-delimited JSON; roceswitch-ctl)
                         on this Unix socket, mode 0660 (default /run/roceswitch/roceswitch.sock;
                         "none": no control socket). Peers allowed: root, this user, the
                         socket's group
  --control-group NAME   give the control socket this group (its members may connect)
  --metrics-listen ADDR:PORT
                         serve Prometheus metrics on http://ADDR:PORT/metrics (IPv4); the
                         switch's DPDK telemetry commands (/roceswitch/...) are always on
                         (dpdk-telemetry.py); docs/observability.md
  --workers N            worker lcores (default: the EAL core list minus the main lcore when
                         one is given with -l/-c/--lcores, else switch.workers, else 1)
  --log-level LEVEL      error|warn|info|debug (default info)
  --check-config         validate the configuration and pipeline, then exit (0 ok, 2 bad)
  --print-pipeline FMT   print the pipeline graph (dot|text) and exit
  --quiet                no live progress line
  --trace N              trace the first N packets each worker receives: one line per
                         pipeline stage (what it saw and decided), printed at exit
  --trace-every K        after those, trace 1 packet in K (until the trace buffer is full)
  --trace-file FILE      write the trace there instead of standard output
  --help                 this text

EAL options are DPDK's (see dpdk-testpmd --help). Without free hugepages roceswitch adds
--no-huge itself; without -l/-c/--lcores it adds one lcore per worker plus the main lcore.
Exit codes: 0 ok, 1 runtime failure, 2 bad configuration or usage.
)";

struct Options {
  std::string config;
  double duration = -1;
  std::string stats_json;
  int workers = 0;
  bool check_only = false;
  std::string print_pipeline;
  bool quiet = false;
  uint32_t trace_first = 0;
  uint32_t trace_every = 0;
  std::string trace_file;
  double series_ms = 0;
  std::string series;
  std::string control_socket;  // empty: the default path
  std::string control_group;
  std::string metrics_listen;
};

void print_policies() {
  fmt::print("routing policies (nexthop_groups[].policy: NAME or {{name: NAME, PARAM: VALUE, ...}}):\n");
  for (const rs::RoutingPolicyEntry& e : rs::RoutingPolicyRegistry::all()) {
    fmt::print("\n{}{}\n  {}\n", e.name, e.table_by_flow_hash ? "  (member chosen inline by the route stage with the default parameters)" : "",
               e.summary);
    for (const rs::ParamSpec& p : e.params) fmt::print("  - {}\n", rs::describe_param(p));
    if (!e.counters.empty()) {
      std::string c;
      for (auto n : e.counters) c += (c.empty() ? "" : ", ") + std::string(n);
      fmt::print("  counters: {}\n", c);
    }
  }
}

struct WorkerArg {
  rs::Switch* sw;
  uint16_t worker;
  const rs::TscClock* clock;
};

int worker_main(void* p) {
  auto* a = static_cast<WorkerArg*>(p);
  while (!g_stop.load(std::memory_order_relaxed)) a->sw->poll(a->worker, a->clock->now_ns());
  return 0;
}

[[noreturn]] void usage_error(const std::string& msg) {
  fmt::print(stderr, "roceswitch: {}\n(see roceswitch -- --help)\n", msg);
  std::exit(2);
}

Options parse_options(const std::vector<std::string>& a) {
  Options o;
  for (std::size_t i = 0; i < a.size(); ++i) {
    auto value = [&](const char* name) -> std::string {
      if (i + 1 >= a.size()) usage_error(fmt::format("{} needs a value", name));
      return a[++i];
    };
    auto number = [&](const char* name) -> double {
      const std::string v = value(name);
      try {
        std::size_t used;
        double d = std::stod(v, &used);
        if (used != v.size() || d < 0) throw std::invalid_argument(v);
        return d;
      } catch (const std::exception&) {
        usage_error(fmt::format("{}: expected a non-negative number, got '{}'", name, v));
      }
    };
    const std::string& s = a[i];
    if (s == "--help" || s == "-h") {
      fmt::print("{}", kUsage);
      std::exit(0);
    } else if (s == "--config") o.config = value("--config");
    else if (s == "--duration") o.duration = number("--duration");
    else if (s == "--stats-json") o.stats_json = value("--stats-json");
    else if (s == "--workers") {
      const double w = number("--workers");
      if (w < 1 || w > rs::kMaxWorkers || w != static_cast<int>(w)) usage_error(fmt::format("--workers: 1..{}", rs::kMaxWorkers));
      o.workers = static_cast<int>(w);
    } else if (s == "--log-level") {
      rs::LogLevel l;
      if (!rs::parse_log_level(value("--log-level"), l)) usage_error("--log-level: error|warn|info|debug");
      rs::set_log_level(l);
    } else if (s == "--check-config") o.check_only = true;
    else if (s == "--print-pipeline") o.print_pipeline = value("--print-pipeline");
    else if (s == "--quiet") o.quiet = true;
    else if (s == "--trace" || s == "--trace-every") {
      const double v = number(s.c_str());
      if (v != static_cast<uint32_t>(v)) usage_error(fmt::format("{}: expected a whole number", s));
      (s == "--trace" ? o.trace_first : o.trace_every) = static_cast<uint32_t>(v);
    } else if (s == "--trace-file") o.trace_file = value("--trace-file");
    else if (s == "--series-ms") {
      o.series_ms = number("--series-ms");
      if (o.series_ms < 0.01) usage_error("--series-ms: at least 0.01");
    } else if (s == "--series") o.series = value("--series");
    else if (s == "--control-socket") o.control_socket = value("--control-socket");
    else if (s == "--control-group") o.control_group = value("--control-group");
    else if (s == "--metrics-listen") o.metrics_listen = value("--metrics-listen");
    else if (s == "--help-policies") {
      print_policies();
      std::exit(0);
    }
    else usage_error(fmt::format("unknown option '{}'", s));
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> eal_user, app;
  {
    int i = 0;
    for (; i < argc && std::string(argv[i]) != "--"; ++i) eal_user.push_back(argv[i]);
    for (++i; i < argc; ++i) app.push_back(argv[i]);
  }
  // `roceswitch --help` without the separator is still a request for help.
  for (std::size_t i = 1; i < eal_user.size(); ++i)
    if (eal_user[i] == "--help" || eal_user[i] == "-h") {
      fmt::print("{}", kUsage);
      return 0;
    }
  Options opt = parse_options(app);
  if (opt.series_ms > 0 && opt.series.empty()) {
    if (opt.stats_json.empty()) usage_error("--series-ms needs --series FILE or --stats-json FILE");
    const std::string base = opt.stats_json.size() > 5 && opt.stats_json.ends_with(".json")
                                 ? opt.stats_json.substr(0, opt.stats_json.size() - 5) : opt.stats_json;
    opt.series = base + ".series.jsonl";
  }
  if (!opt.series.empty() && opt.series_ms <= 0) usage_error("--series needs --series-ms");

  // A fabric file: many switches on one virtual clock (docs/fabric.md), its own run loop.
  if (!opt.config.empty() && rs::is_fabric_file(opt.config)) {
    rs::FabricRunSpec fabric;
    try {
      fabric = rs::load_fabric_file(opt.config);
    } catch (const std::exception& e) {
      fmt::print(stderr, "roceswitch: bad configuration: {}\n", e.what());
      return 2;
    }
    if (opt.check_only) {
      fmt::print("{}: ok (fabric: {} switches, {} cables)\n", fabric.source, fabric.fabric.switches.size(),
                 fabric.fabric.cables.size());
      return 0;
    }
    return rs::run_fabric(fabric, {.eal_user = eal_user,
                                   .duration_s = opt.duration,
                                   .stats_json = opt.stats_json,
                                   .series = opt.series,
                                   .series_ms = opt.series_ms,
                                   .quiet = opt.quiet});
  }
  if (opt.series_ms > 0 && opt.series_ms < 1) usage_error("--series-ms: at least 1 (below 1 ms: fabrics only, on virtual time)");
  // Everything the user wrote is validated before DPDK starts: a bad file costs nothing.
  rs::SwitchConfig cfg;
  try {
    cfg = opt.config.empty() ? rs::load_config_text(rs::kDemoConfig, "<embedded demo>") : rs::load_config_file(opt.config);
    if (opt.workers) cfg.workers = static_cast<uint16_t>(opt.workers);
    if (const int i = rs::port_on_missing_worker(cfg); i >= 0)
      throw rs::ConfigError(cfg.source, 0, fmt::format("ports[{}].worker", i),
                            fmt::format("worker {} but --workers is {}", cfg.ports[i].worker, cfg.workers));
    auto spec = rs::parse_pipeline(cfg.pipeline_text.empty() ? std::string(rs::kPipelineL3Roce) : cfg.pipeline_text,
                                   cfg.pipeline_text.empty() ? "pipelines/l3_roce.yaml" : cfg.pipeline_source);
    if (opt.print_pipeline == "dot") {
      fmt::print("{}", rs::pipeline_to_dot(spec));
      return 0;
    } else if (opt.print_pipeline == "text") {
      for (auto& n : spec.nodes) {
        fmt::print("{} ({})", n.name, n.stage);
        for (auto& [e, t] : n.next) fmt::print(" {}->{}", e, t);
        fmt::print("\n");
      }
      return 0;
    } else if (!opt.print_pipeline.empty()) {
      usage_error("--print-pipeline: dot|text");
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "roceswitch: bad configuration: {}\n", e.what());
    return 2;
  }
  if (opt.check_only) {
    fmt::print("{}: ok ({} ports, {} routes, {} groups, {} workers)\n", cfg.source, cfg.ports.size(),
               cfg.routes.size(), cfg.groups.size(), cfg.workers);
    return 0;
  }
  const double duration = opt.duration >= 0 ? opt.duration : cfg.duration_s;

  rs::EalPlan plan = rs::plan_eal_args(eal_user, cfg.workers);
  for (auto& n : plan.notes) fmt::print(stderr, "roceswitch: {}\n", n);
  std::vector<char*> eal_argv;
  for (auto& s : plan.args) eal_argv.push_back(s.data());
  if (rs::log_level() < rs::LogLevel::Debug) rte_log_set_global_level(RTE_LOG_WARNING);
  if (rte_eal_init(static_cast<int>(eal_argv.size()), eal_argv.data()) < 0) {
    fmt::print(stderr, "roceswitch: EAL init failed: {}\n", rte_strerror(rte_errno));
    return 1;
  }
  // --workers wins; else a core list the user gave sets the count (one main lcore, the rest work).
  if (!opt.workers && rs::user_chose_lcores(eal_user) && rte_lcore_count() > 1) {
    cfg.workers = static_cast<uint16_t>(std::min<unsigned>(rs::kMaxWorkers, rte_lcore_count() - 1));
    if (const int i = rs::port_on_missing_worker(cfg); i >= 0) {
      fmt::print(stderr, "roceswitch: bad configuration: {}: ports[{}].worker: worker {} but the core list gives {} workers\n",
                 cfg.source, i, cfg.ports[i].worker, cfg.workers);
      rte_eal_cleanup();
      return 2;
    }
  }
  if (rte_lcore_count() < static_cast<unsigned>(cfg.workers) + 1) {
    fmt::print(stderr, "roceswitch: {} workers need {} lcores (main + workers), EAL has {}\n", cfg.workers,
               cfg.workers + 1, rte_lcore_count());
    rte_eal_cleanup();
    return 2;
  }
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);

  int rc = 0;
  {
    rs::TscClock clock;
    std::unique_ptr<rs::Switch> sw;
    try {
      sw = std::make_unique<rs::Switch>(cfg, clock.now_ns());
    } catch (const std::exception& e) {
      fmt::print(stderr, "roceswitch: cannot start: {}\n", e.what());
      rte_eal_cleanup();
      return 1;
    }
    sw->set_trace(opt.trace_first, opt.trace_every);
    rs::log(rs::LogLevel::Info, "{}: {} ports, {} routes, {} workers{}", cfg.source, cfg.ports.size(), cfg.routes.size(),
            cfg.workers, duration > 0 ? fmt::format(", running {} s", duration) : ", running until SIGINT");
    std::vector<WorkerArg> args(cfg.workers);
    uint16_t w = 0;
    unsigned lcore;
    RTE_LCORE_FOREACH_WORKER(lcore) {
      if (w == cfg.workers) break;
      args[w] = {sw.get(), w, &clock};
      rte_eal_remote_launch(worker_main, &args[w], lcore);
      ++w;
    }
    // The control plane: on this (main) lcore, between the housekeeping steps below.
    rs::RunningState state(*sw);
    std::unique_ptr<rs::LocalAgent> local;
    const auto started = std::chrono::steady_clock::now();
    rs::ControlApi api(state, [] { std::this_thread::yield(); }, [&](const std::string& object) {
      nlohmann::json j = rs::stats_json(*sw);
      // When the counters were read, for rates a client computes between two reads.
      j["t_s"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      if (local) {
        j["neighbours"] = local->neighbours_json();
        j["lldp"] = local->lldp_json();
        j["local"] = local->counters_json();
      }
      if (object.empty()) return j;
      for (auto* list : {&j["ports"], &j["groups"]})
        for (auto& o : *list)
          if (o["name"] == object) {
            o["t_s"] = j["t_s"];
            return o;
          }
      throw rs::OpError{"object", fmt::format("no port or group '{}'", object)};
    });
    rs::Captures captures(*sw, [&clock] { return clock.now_ns(); });
    api.set_captures(&captures);
    // The switch as a host on its links (ARP, ND, ICMP, neighbours, LLDP), when its ports have
    // addresses or send LLDP.
    if (sw->local()) {
      local = std::make_unique<rs::LocalAgent>(*sw, state, [] { std::this_thread::yield(); });
      api.set_local(local.get());
    }
    std::unique_ptr<rs::ControlServer> server;
    if (opt.control_socket != "none") {
      rs::ServerOptions so;
      // One set of limits: what `limits` reports is what the socket enforces.
      so.max_connections = state.limits().connections;
      so.max_request_bytes = state.limits().request_bytes;
      so.path = opt.control_socket.empty() ? rs::default_control_socket() : opt.control_socket;
      if (!opt.control_group.empty()) {
        const group* g = getgrnam(opt.control_group.c_str());
        if (!g) {
          fmt::print(stderr, "roceswitch: --control-group: no group '{}'\n", opt.control_group);
          rc = 2;
        } else {
          so.group = g->gr_gid;
        }
      }
      try {
        if (rc == 0) server = std::make_unique<rs::ControlServer>(api, so);
        if (server) rs::log(rs::LogLevel::Info, "control socket {}", server->path());
      } catch (const std::exception& e) {
        // An explicit path must work; the default one is a convenience (another switch may
        // hold it, or this user may not write /run).
        if (!opt.control_socket.empty()) {
          fmt::print(stderr, "roceswitch: {}\n", e.what());
          rc = 2;
        } else {
          rs::log(rs::LogLevel::Warn, "no control socket: {} (give --control-socket PATH)", e.what());
        }
      }
    }
    // Prometheus and DPDK telemetry: their threads hand requests to this loop (serve_pending).
    std::unique_ptr<rs::Observability> obs;
    if (rc == 0) {
      try {
        obs = std::make_unique<rs::Observability>(*sw, rs::ObservabilityOptions{.metrics_listen = opt.metrics_listen, .telemetry = true});
        if (!opt.metrics_listen.empty()) rs::log(rs::LogLevel::Info, "metrics on http://{}/metrics", opt.metrics_listen);
      } catch (const std::exception& e) {
        fmt::print(stderr, "roceswitch: {}\n", e.what());
        rc = 2;
      }
    }
    if (rc != 0) g_stop.store(true);
    rs::Reporter rep(*sw);
    if (const std::string plan = rep.buffer_plan(); !plan.empty() && !opt.quiet) fmt::print("{}", plan);
    const auto start = std::chrono::steady_clock::now();
    double next_report = 1.0;
    double elapsed = 0;
    // Packet totals once a second for the stats file, for rates that leave out start-up
    // (perf/linerate uses them as dpdk-testpmd's per-second figures are used: the first second
    // dropped). A switch runs for days: the last hour is kept, in a ring sized at start.
    struct Sample {
      double t_s;
      uint64_t received, sent;
    };
    constexpr std::size_t kSamplesKept = 3600;
    std::vector<Sample> samples;
    std::size_t samples_taken = 0;
    if (!opt.stats_json.empty()) samples.resize(kSamplesKept);
    std::ofstream series;
    if (!opt.series.empty()) {
      series.open(opt.series);
      if (!series) fmt::print(stderr, "roceswitch: cannot write {}\n", opt.series);
    }
    double next_sample = 0;
    // Housekeeping on the main lcore only: the link monitor (every millisecond, so a member
    // whose link went down is out of every group within a millisecond and a worker loop),
    // reports, RCU reclamation, the time series, the clock for --duration.
    while (!g_stop.load(std::memory_order_relaxed)) {
      if (server) server->poll(1);  // requests are served here, between housekeeping steps
      else std::this_thread::sleep_for(std::chrono::milliseconds(1));
      if (obs) obs->serve_pending();
      captures.poll();
      if (local) local->poll(clock.now_ns());
      elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      sw->poll_links(clock.now_ns());
      sw->reclaim();
      if (series && elapsed >= next_sample) {
        series << rs::series_sample(*sw, elapsed).dump() << "\n";
        next_sample += opt.series_ms / 1000.0;
        if (next_sample <= elapsed) next_sample = elapsed + opt.series_ms / 1000.0;
      }
      if (elapsed >= next_report) {
        const rs::SwitchTotals t = sw->totals();
        if (!samples.empty()) samples[samples_taken++ % kSamplesKept] = {elapsed, t.received, t.sent};
        if (!opt.quiet) fmt::print("{}\n", rep.progress_line(elapsed));
        std::fflush(stdout);
        next_report += 1.0;
      }
      if (duration > 0 && elapsed >= duration) break;
    }
    obs.reset();  // waiting scrapes get 503, telemetry "switch stopped"
    g_stop.store(true);
    rte_eal_mp_wait_lcore();
    elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    sw->shutdown(clock.now_ns());
    if (series) {
      series << rs::series_sample(*sw, elapsed).dump() << "\n";  // the last figures, after the stop
      series.close();
      if (!series) {
        fmt::print(stderr, "roceswitch: cannot write {}\n", opt.series);
        rc = 1;
      }
    }
    fmt::print("{}", rep.summary(elapsed));
    if (!sw->totals().balanced()) rc = 1;
    if (opt.trace_first || opt.trace_every) {
      const std::string text = sw->trace_text();
      if (opt.trace_file.empty()) {
        fmt::print("trace:\n{}", text);
      } else if (std::ofstream tf(opt.trace_file); !(tf << text)) {
        fmt::print(stderr, "roceswitch: cannot write {}\n", opt.trace_file);
        rc = 1;
      }
    }
    if (!opt.stats_json.empty()) {
      auto j = rs::stats_json(*sw);
      if (local) {
        j["neighbours"] = local->neighbours_json();
        j["lldp"] = local->lldp_json();
        j["local"] = local->counters_json();
      }
      j["elapsed_s"] = elapsed;
      auto& js = j["samples"];
      js = nlohmann::json::array();
      for (std::size_t i = samples_taken > kSamplesKept ? samples_taken - kSamplesKept : 0; i < samples_taken; ++i) {
        const Sample& x = samples[i % kSamplesKept];
        js.push_back({{"t_s", x.t_s}, {"received", x.received}, {"sent", x.sent}});
      }
      j["config"] = cfg.source;
      std::ofstream out(opt.stats_json);
      out << j.dump(2) << "\n";
      if (!out) {
        fmt::print(stderr, "roceswitch: cannot write {}\n", opt.stats_json);
        rc = 1;
      } else {
        fmt::print("stats written to {}\n", opt.stats_json);
      }
    }
  }
  rte_eal_cleanup();
  return rc;
}
