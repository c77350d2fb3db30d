// Emulated-host capacity on one worker core: how much RoCE traffic emulated NICs
// (dataplane/nic/roce_nic.h) and the switch between them carry per CPU second.
//
// A switch with one worker and 2N emulated hosts on links of --gbps: host i < N runs one RC
// queue pair of endless RDMA WRITE messages to host N + i, which answers with ACKs (every
// `ack_req_every` packets and each message's last). Every pair has its own egress port, so
// nothing congests and nothing should be dropped or resent: what is measured is the cost of the
// traffic itself (the NICs segmenting, building and checking frames with their ICRC, the
// transport's bookkeeping, the switch's pipeline and queues), not a congestion episode. The
// switch is stepped in virtual time, one worker poll every --step-us (as the whole-switch
// tests do) and the link monitor every emulated millisecond (as the main lcore does in
// production), for --emulated-ms, while the thread's CPU time is read: CPU time, not wall time,
// so that other processes on the machine do not inflate the figures.
//
// A case is one (path MTU, congestion control) pair. It prints, per case:
//   goodput      bytes of acknowledged messages x 8 over the emulated time (the emulation's own
//                figure; against `ideal`, the links' rate times the MTU's share of a packet on
//                the wire), a check that the hosts ran at the link rate
//   Gb/s/core    the same bytes x 8 over the CPU time: the goodput one core can emulate in
//                real time
//   Mpps         packets the switch sent (data and ACKs) over the CPU time, and its inverse
//   speed        emulated time over CPU time: above 1 the emulation runs faster than real time
// With one queue pair per uncongested pair, DCQCN never gets a CNP: its case shows what the
// reaction point's timers cost a poll, not a congestion episode.
//
// The books are checked after each case (no drops, no failed mbuf allocation, every packet the
// switch took accounted for); a case that fails them is marked and the exit status is 1.
#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/stats_json.h"
#include "dataplane/switch/switch.h"
#include "tests/support/constants.h"
#include "tests/support/eal_env.h"
#include "tests/support/host_net.h"

namespace rs::bench {
namespace {

using test::kMs;
using test::kT0;

struct Options {
  unsigned pairs = 2;
  double gbps = 100;
  double emulated_ms = 20;
  double step_us = 2;
  std::vector<uint32_t> mtus = {4096, 1024};
  std::vector<bool> dcqcn = {false, true};
  uint32_t message_kib = 1024;
  uint32_t depth = 4;
  uint32_t mbufs = 32768;
  unsigned repetitions = 1;
  bool json = false;
  std::string json_file;  // empty with json: stdout
  bool quiet = false;
};

constexpr const char* kHelp = R"(usage: nic_bench [options]

Emulated-host capacity on one worker core: N sending hosts, each one RC queue pair of endless
RDMA WRITE messages to its own receiving host, through a switch with one worker stepped in
virtual time. Per case (path MTU x congestion control) it prints the emulated goodput, the
goodput and packets per second of CPU time, and emulated time over CPU time; then a summary
table and, last, one line for scripts.

options:
  --pairs N          sender -> receiver host pairs (default 2; at most 32)
  --gbps G           every link's rate, Gb/s (default 100)
  --emulated-ms MS   emulated time a case runs (default 20)
  --step-us US       emulated time between worker polls (default 2, the whole-switch tests')
  --mtu LIST         path MTUs, comma-separated, 256..4096 (default 4096,1024)
  --cc LIST          congestion control: none, dcqcn or both, comma-separated (default none,dcqcn)
  --message-kib K    WRITE message size in KiB (default 1024)
  --depth D          messages outstanding per queue pair (default 4)
  --mbufs N          the switch's mbuf pool (default 32768)
  --repetitions N    run each case N times and report the run of median CPU time (default 1);
                     the emulation is deterministic, so only the CPU time may differ
  --json [FILE]      write the figures as JSON to FILE (default: stdout, the table to stderr)
  --quiet            no progress lines
  --help             this text

The last line: nic_bench: gbps_per_core_<mtu>_<cc>=... mpps_<mtu>_<cc>=... speed_<mtu>_<cc>=...
Exit status 1 when a case drops packets, fails to allocate an mbuf or its books do not balance.
)";

[[noreturn]] void usage_error(const std::string& why) {
  std::fprintf(stderr, "nic_bench: %s (--help for usage)\n", why.c_str());
  std::exit(2);
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::size_t from = 0;
  while (from <= s.size()) {
    const std::size_t comma = s.find(',', from);
    out.push_back(s.substr(from, comma == std::string::npos ? std::string::npos : comma - from));
    if (comma == std::string::npos) break;
    from = comma + 1;
  }
  return out;
}

double number(const std::string& opt, const std::string& v, double lo, double hi) {
  char* end = nullptr;
  const double x = std::strtod(v.c_str(), &end);
  if (v.empty() || *end != '\0' || !(x >= lo && x <= hi)) usage_error(fmt::format("{} wants a number in [{}, {}], not '{}'", opt, lo, hi, v));
  return x;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage_error(a + " needs a value");
      return argv[++i];
    };
    if (a == "--help" || a == "-h") {
      std::fputs(kHelp, stdout);
      std::exit(0);
    } else if (a == "--pairs") {
      o.pairs = static_cast<unsigned>(number(a, value(), 1, kMaxPorts / 2));
    } else if (a == "--gbps") {
      o.gbps = number(a, value(), 1, 800);
    } else if (a == "--emulated-ms") {
      o.emulated_ms = number(a, value(), 0.1, 10000);
    } else if (a == "--step-us") {
      o.step_us = number(a, value(), 0.01, 1000);
    } else if (a == "--mtu") {
      o.mtus.clear();
      for (const auto& m : split(value())) {
        const auto mtu = static_cast<uint32_t>(number("--mtu", m, 256, 4096));
        if ((mtu & (mtu - 1)) != 0) usage_error(fmt::format("--mtu {}: a power of two from 256 to 4096", mtu));
        o.mtus.push_back(mtu);
      }
    } else if (a == "--cc") {
      o.dcqcn.clear();
      for (const auto& c : split(value())) {
        if (c == "none") o.dcqcn.push_back(false);
        else if (c == "dcqcn") o.dcqcn.push_back(true);
        else if (c == "both") o.dcqcn.insert(o.dcqcn.end(), {false, true});
        else usage_error("--cc: none, dcqcn or both, not '" + c + "'");
      }
    } else if (a == "--message-kib") {
      o.message_kib = static_cast<uint32_t>(number(a, value(), 1, 1 << 20));
    } else if (a == "--depth") {
      o.depth = static_cast<uint32_t>(number(a, value(), 1, 1024));
    } else if (a == "--mbufs") {
      o.mbufs = static_cast<uint32_t>(number(a, value(), 1024, 1 << 20));
    } else if (a == "--repetitions") {
      o.repetitions = static_cast<unsigned>(number(a, value(), 1, 100));
    } else if (a == "--json") {
      o.json = true;
      if (i + 1 < argc && argv[i + 1][0] != '-') o.json_file = argv[++i];
    } else if (a == "--quiet") {
      o.quiet = true;
    } else {
      usage_error("unknown option " + a);
    }
  }
  if (o.mtus.empty() || o.dcqcn.empty()) usage_error("no case to run");
  return o;
}

double thread_cpu_s() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

struct Result {
  uint32_t mtu = 0;
  bool dcqcn = false;
  double emulated_s = 0, cpu_s = 0, wall_s = 0;
  uint64_t polls = 0;
  uint64_t acked_bytes = 0, delivered_bytes = 0, data_packets = 0, retransmitted = 0, timeouts = 0;
  uint64_t switch_rx = 0, switch_tx = 0, dropped = 0, nic_bad = 0, host_alloc_fail = 0;
  double ideal_gbps = 0;
  bool balanced = false;
  std::vector<double> cpu_runs;  // every repetition's CPU time, sorted
  std::string error;
  std::string name() const { return fmt::format("{}_{}", mtu, dcqcn ? "dcqcn" : "none"); }
  double goodput_gbps() const { return static_cast<double>(acked_bytes) * 8 / emulated_s * 1e-9; }
  double gbps_per_core() const { return static_cast<double>(acked_bytes) * 8 / cpu_s * 1e-9; }
  double mpps() const { return static_cast<double>(switch_tx) / cpu_s * 1e-6; }
  double ns_per_pkt() const { return switch_tx ? cpu_s * 1e9 / static_cast<double>(switch_tx) : 0; }
  double speed() const { return emulated_s / cpu_s; }
};

// On the wire a WRITE MIDDLE packet is the MTU's payload plus Ethernet, IPv4, UDP, BTH and ICRC
// (58 bytes), plus FCS, preamble and inter-frame gap (24): the share of a link goodput can have.
double ideal_gbps(const Options& o, uint32_t mtu) {
  return o.gbps * o.pairs * static_cast<double>(mtu) / static_cast<double>(mtu + 58 + 24);
}

SwitchConfig make_config(const Options& o, uint32_t mtu, bool dcqcn) {
  SwitchConfig cfg;
  cfg.workers = 1;
  cfg.seed = 7;
  cfg.mbufs = o.mbufs;
  // Queues far deeper than an uncongested pair ever needs: a drop here means something is wrong.
  const QueueLimits limits{.packets = 4096, .bytes = 16u << 20};
  for (unsigned h = 0; h < 2 * o.pairs; ++h) {
    PortSpec& p = test::add_host_port(cfg, o.gbps, limits);
    p.host.nic.enabled = true;
    p.host.nic.rc.mtu = mtu;
    p.host.nic.dcqcn = dcqcn;
  }
  for (unsigned s = 0; s < o.pairs; ++s) {
    nic::QpSpec q;
    q.peer_ip = test::host_ip(static_cast<uint8_t>(o.pairs + s));
    q.qpn = 0x100 + s;
    q.message_bytes = o.message_kib * 1024;
    q.messages = 0;  // for ever
    q.depth = o.depth;
    q.write = true;
    cfg.ports[s].host.qps.push_back(q);
  }
  return cfg;
}

Result run_once(const Options& o, uint32_t mtu, bool dcqcn, std::size_t index, std::size_t cases, unsigned rep) {
  Result r;
  r.mtu = mtu;
  r.dcqcn = dcqcn;
  r.ideal_gbps = ideal_gbps(o, mtu);
  const auto emulated_ns = static_cast<uint64_t>(o.emulated_ms * 1e6);
  const uint64_t step = std::max<uint64_t>(1, static_cast<uint64_t>(o.step_us * 1e3));
  const uint64_t end = kT0 + emulated_ns;
  const std::string label = fmt::format("[{}/{}] mtu {} cc {}{}", index + 1, cases, mtu, dcqcn ? "dcqcn" : "none",
                                        o.repetitions > 1 ? fmt::format(" run {}/{}", rep + 1, o.repetitions) : "");
  const bool tty = isatty(STDERR_FILENO) != 0;
  Switch sw(make_config(o, mtu, dcqcn), kT0);
  if (!o.quiet && !tty) std::fprintf(stderr, "%s: running %.1f ms emulated\n", label.c_str(), o.emulated_ms);

  // A tenth of the run between progress lines: rare enough that printing costs nothing.
  const uint64_t progress_every = std::max<uint64_t>(step, emulated_ns / 10);
  uint64_t next_progress = kT0 + progress_every, next_links = kT0;
  const auto wall0 = std::chrono::steady_clock::now();
  const double cpu0 = thread_cpu_s();
  uint64_t t = kT0;
  for (; t < end; t += step) {
    if (t >= next_links) {
      sw.poll_links(t);
      next_links += kMs;
    }
    sw.poll(0, t);
    ++r.polls;
    if (t >= next_progress && !o.quiet && tty) {
      next_progress += progress_every;
      std::fprintf(stderr, "\r%s: %.1f of %.1f ms emulated, %.2f s CPU, %.1f M packets sent   ", label.c_str(),
                   static_cast<double>(t - kT0) * 1e-6, o.emulated_ms, thread_cpu_s() - cpu0,
                   static_cast<double>(sw.totals().sent) * 1e-6);
      std::fflush(stderr);
    }
  }
  r.cpu_s = thread_cpu_s() - cpu0;
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  r.emulated_s = static_cast<double>(t - kT0) * 1e-9;

  const SwitchTotals tot = sw.totals();
  r.switch_rx = tot.received;
  r.switch_tx = tot.sent;
  r.dropped = tot.dropped;
  const nlohmann::json j = stats_json(sw);
  for (const auto& port : j["ports"]) {
    if (!port.contains("host")) continue;
    const auto& h = port["host"];
    r.host_alloc_fail += h.value("alloc_fail", uint64_t{0});
    if (!h.contains("nic")) continue;
    r.nic_bad += h["nic"].value("bad_frames", uint64_t{0});
    for (const auto& q : h["nic"]["qps"]) {
      if (q["role"] == "requester") {
        r.acked_bytes += q.value("acked_bytes", uint64_t{0});
        r.data_packets += q.value("tx_packets", uint64_t{0});
        r.retransmitted += q.value("retransmitted", uint64_t{0});
        r.timeouts += q.value("timeouts", uint64_t{0});
      } else {
        r.delivered_bytes += q.value("rx_bytes", uint64_t{0});
      }
    }
  }
  sw.shutdown(end);
  r.balanced = sw.totals().balanced();
  if (r.dropped) r.error += fmt::format("{} packets dropped; ", r.dropped);
  if (r.nic_bad || r.host_alloc_fail) r.error += fmt::format("{} NIC frames not made (mbuf pool empty?); ", r.nic_bad + r.host_alloc_fail);
  if (!r.balanced) r.error += "the switch's books do not balance; ";
  if (r.acked_bytes == 0) r.error += "nothing acknowledged; ";
  if (r.delivered_bytes < r.acked_bytes) r.error += "more acknowledged than delivered; ";
  if (!o.quiet) {
    if (tty) std::fputs("\r\033[K", stderr);
    std::fprintf(stderr, "%s: %.1f ms emulated in %.2f s CPU (%.2f s wall): goodput %.1f Gb/s emulated, %.1f Gb/s a core, %.2f Mpps%s%s\n",
                 label.c_str(), r.emulated_s * 1e3, r.cpu_s, r.wall_s, r.goodput_gbps(), r.gbps_per_core(), r.mpps(),
                 r.error.empty() ? "" : ", FAILED: ", r.error.c_str());
  }
  return r;
}

// The case `repetitions` times: the run of median CPU time, with every run's CPU time. Virtual
// time makes every run the same traffic, so differing counts mean the emulation is not
// deterministic, which is an error.
Result run_case(const Options& o, uint32_t mtu, bool dcqcn, std::size_t index, std::size_t cases) {
  std::vector<Result> runs;
  for (unsigned k = 0; k < o.repetitions; ++k) runs.push_back(run_once(o, mtu, dcqcn, index, cases, k));
  std::vector<double> cpu;
  for (const Result& r : runs) cpu.push_back(r.cpu_s);
  std::sort(runs.begin(), runs.end(), [](const Result& a, const Result& b) { return a.cpu_s < b.cpu_s; });
  Result r = runs[runs.size() / 2];
  std::sort(cpu.begin(), cpu.end());
  r.cpu_runs = cpu;
  for (const Result& x : runs) {
    if (!x.error.empty() && r.error.empty()) r.error = x.error;
    if (x.acked_bytes != r.acked_bytes || x.switch_tx != r.switch_tx) {
      r.error += "repetitions differ in what they sent (not deterministic); ";
      break;
    }
  }
  return r;
}

void print_table(std::FILE* out, const Options& o, const std::vector<Result>& rs) {
  fmt::print(out, "\n{} pairs at {} Gb/s, one QP each of {} KiB WRITEs (depth {}), one worker polled every {} us, {} ms emulated{}\n",
             o.pairs, o.gbps, o.message_kib, o.depth, o.step_us, o.emulated_ms,
             o.repetitions > 1 ? fmt::format(", median CPU time of {} runs", o.repetitions) : "");
  fmt::print(out, "{:<6} {:<6} {:>9} {:>8} {:>10} {:>8} {:>8} {:>7} {:>8} {:>7} {:>9} {:>7} {:>6}\n", "mtu", "cc", "goodput", "ideal",
             "Gb/s/core", "Mpps", "ns/pkt", "speed", "data/s", "ack %", "resent", "spread", "books");
  for (const Result& r : rs) {
    const double acks = r.switch_tx > r.data_packets ? static_cast<double>(r.switch_tx - r.data_packets) : 0;
    const double spread = r.cpu_runs.empty() ? 0 : 100.0 * (r.cpu_runs.back() - r.cpu_runs.front()) / r.cpu_s;
    fmt::print(out, "{:<6} {:<6} {:>9.1f} {:>8.1f} {:>10.1f} {:>8.2f} {:>8.1f} {:>7.3f} {:>8.2f} {:>7.1f} {:>9} {:>6.1f}% {:>6}\n", r.mtu,
               r.dcqcn ? "dcqcn" : "none", r.goodput_gbps(), r.ideal_gbps, r.gbps_per_core(), r.mpps(), r.ns_per_pkt(), r.speed(),
               static_cast<double>(r.data_packets) / r.cpu_s * 1e-6, 100.0 * acks / static_cast<double>(std::max<uint64_t>(1, r.switch_tx)),
               r.retransmitted, spread, r.error.empty() ? "ok" : "FAILED");
  }
  fmt::print(out,
             "goodput: emulated Gb/s (ideal: the links' share for payload); Gb/s/core and Mpps (all packets the switch\n"
             "sent) per CPU second; speed: emulated time over CPU time; data/s: millions of data packets per CPU second;\n"
             "spread: the repetitions' CPU times, slowest minus fastest over the median\n");
}

nlohmann::json to_json(const Options& o, const std::vector<Result>& rs) {
  nlohmann::json j;
  j["options"] = {{"pairs", o.pairs}, {"gbps", o.gbps},   {"emulated_ms", o.emulated_ms}, {"step_us", o.step_us}, {"message_kib", o.message_kib},
                  {"depth", o.depth}, {"mbufs", o.mbufs}, {"repetitions", o.repetitions}};
  j["cases"] = nlohmann::json::array();
  for (const Result& r : rs) {
    j["cases"].push_back({{"name", r.name()},
                          {"mtu", r.mtu},
                          {"cc", r.dcqcn ? "dcqcn" : "none"},
                          {"emulated_s", r.emulated_s},
                          {"cpu_s", r.cpu_s},
                          {"cpu_s_runs", r.cpu_runs},
                          {"wall_s", r.wall_s},
                          {"polls", r.polls},
                          {"goodput_gbps", r.goodput_gbps()},
                          {"ideal_gbps", r.ideal_gbps},
                          {"gbps_per_core", r.gbps_per_core()},
                          {"mpps", r.mpps()},
                          {"ns_per_pkt", r.ns_per_pkt()},
                          {"speed", r.speed()},
                          {"acked_bytes", r.acked_bytes},
                          {"delivered_bytes", r.delivered_bytes},
                          {"data_packets", r.data_packets},
                          {"switch_received", r.switch_rx},
                          {"switch_sent", r.switch_tx},
                          {"dropped", r.dropped},
                          {"retransmitted", r.retransmitted},
                          {"timeouts", r.timeouts},
                          {"balanced", r.balanced},
                          {"ok", r.error.empty()},
                          {"error", r.error}});
  }
  return j;
}

int run(int argc, char** argv) {
  const Options o = parse(argc, argv);
  test::init_test_eal();
  std::vector<Result> rs;
  const std::size_t cases = o.mtus.size() * o.dcqcn.size();
  for (uint32_t mtu : o.mtus)
    for (bool cc : o.dcqcn) {
      try {
        rs.push_back(run_case(o, mtu, cc, rs.size(), cases));
      } catch (const std::exception& e) {
        std::fprintf(stderr, "nic_bench: mtu %u cc %s: the switch was not built: %s\n", mtu, cc ? "dcqcn" : "none", e.what());
        test::shutdown_test_eal();
        return 1;
      }
    }
  // With --json to stdout the table goes to stderr, so stdout stays one JSON document.
  std::FILE* table = o.json && o.json_file.empty() ? stderr : stdout;
  print_table(table, o, rs);
  std::string last = "nic_bench:";
  for (const Result& r : rs)
    last += fmt::format(" gbps_per_core_{0}={1:.1f} mpps_{0}={2:.2f} speed_{0}={3:.3f}", r.name(), r.gbps_per_core(), r.mpps(), r.speed());
  fmt::print(table, "{}\n", last);
  bool ok = true;
  for (const Result& r : rs) ok &= r.error.empty();
  if (o.json) {
    const std::string text = to_json(o, rs).dump(2) + "\n";
    if (o.json_file.empty()) {
      std::fputs(text.c_str(), stdout);
    } else {
      std::ofstream f(o.json_file);
      f << text;
      if (!f) {
        std::fprintf(stderr, "nic_bench: cannot write %s\n", o.json_file.c_str());
        ok = false;
      }
    }
  }
  test::shutdown_test_eal();
  return ok ? 0 : 1;
}

}  // namespace
}  // namespace rs::bench

int main(int argc, char** argv) { return rs::bench::run(argc, argv); }
