// Observability on a stepped switch of four emulated hosts: the Prometheus text (every family
// with HELP and TYPE, valid names, counters ending in _total and never going back while traffic
// flows, values equal to the switch's own counters, label escaping), the /metrics endpoint
// over real HTTP from another thread while this (main) thread serves the mailbox (404, 405,
// 503 when nobody serves), bad listen addresses, and the DPDK telemetry commands through
// DPDK's own telemetry socket.
#include "app/prometheus.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <rte_eal.h>
#include <rte_telemetry.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <thread>

#include "app/observability.h"
#include "app/stats_json.h"
#include "tests/support/host_net.h"

namespace rs::test {
namespace {

using namespace std::chrono_literals;

constexpr uint32_t kQpA = 0x100, kQpB = 0x200, kQpC = 0x300;
constexpr const char* kWeird = "we\"ird\\port";  // a port name that needs escaping

// h0..h3, h3 named with a quote and a backslash; h1 and h2 send RoCE to h0 (incast on queue 3,
// lossless priority 3), h1 also sends to 10.0.9.2 through the two-member group "spine" (h2, h3).
SwitchConfig rig_config() {
  SwitchConfig cfg;
  for (int h = 0; h < 4; ++h) add_host_port(cfg, 10, QueueLimits{});
  cfg.ports[3].name = kWeird;
  cfg.qos.dscp_to_tc[kRoceDscp] = kRoceQueue;  // RoCE on TC 3 -> queue 3, PG 3
  cfg.mmu.pfc_enable = 1u << kRoceQueue;  // priority 3 lossless: the incast sends PFC to h1 and h2
  for (PortSpec& p : cfg.ports) p.lossless.pg[kRoceQueue] = {.lossless = true, .xoff = 50'000, .xon = 25'600, .headroom = 14'000};
  add_host_flow(cfg, 1, 0, 6, kQpA, 1024);
  add_host_flow(cfg, 2, 0, 6, kQpB, 1024);
  add_host_flow(cfg, 1, 0, 1, kQpC, 1024).dst_ip = rte_cpu_to_be_32(RTE_IPV4(10, 0, 9, 2));
  GroupSpec g;
  g.name = "spine";
  g.members.push_back({.port = 2, .mac = mac_of(2, false), .weight = 1});
  g.members.push_back({.port = 3, .mac = mac_of(3, false), .weight = 1});
  cfg.groups.push_back(g);
  RouteSpec r;
  r.addr[0] = 10;
  r.addr[2] = 9;
  r.depth = 24;
  r.group = static_cast<uint32_t>(cfg.groups.size() - 1);
  cfg.routes.push_back(r);
  return cfg;
}

struct Rig {
  Rig() : sw(rig_config(), kT0) {}
  void step() {
    sw.poll_all(now);
    now += kUs;
  }
  void run(uint64_t ns) {
    for (const uint64_t end = now + ns; now < end;) step();
  }
  uint64_t now = kT0;
  Switch sw;
};

// --- The text format, parsed as Prometheus would -------------------------------------------------

struct Sample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};
struct Exposition {
  std::map<std::string, std::string> type, help;
  std::vector<Sample> samples;
  std::vector<std::string> errors;
  std::optional<double> get(const std::string& name, const std::map<std::string, std::string>& labels) const {
    for (const Sample& s : samples)
      if (s.name == name && s.labels == labels) return s.value;
    return std::nullopt;
  }
  std::map<std::string, double> counters() const {
    std::map<std::string, double> out;
    for (const Sample& s : samples)
      if (type.count(s.name) && type.at(s.name) == "counter") {
        std::string key = s.name;
        for (auto& [k, v] : s.labels) key += "|" + k + "=" + v;
        out[key] = s.value;
      }
    return out;
  }
};

Exposition parse(const std::string& text) {
  Exposition e;
  static const std::regex name_re("^[a-zA-Z_:][a-zA-Z0-9_:]*$");
  static const std::regex label_re("^[a-zA-Z_][a-zA-Z0-9_]*$");
  std::string current;  // the family the last TYPE line declared
  std::set<std::string> closed, series;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) {
      e.errors.push_back("last line has no newline");
      end = text.size();
    }
    const std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    if (line.rfind("# HELP ", 0) == 0) {
      const std::string rest = line.substr(7);
      const std::string n = rest.substr(0, rest.find(' '));
      if (e.help.count(n)) e.errors.push_back("HELP twice: " + n);
      e.help[n] = rest.substr(rest.find(' ') + 1);
      if (!current.empty()) closed.insert(current);
      continue;
    }
    if (line.rfind("# TYPE ", 0) == 0) {
      std::istringstream is(line.substr(7));
      std::string n, t;
      is >> n >> t;
      if (e.type.count(n)) e.errors.push_back("TYPE twice: " + n);
      if (!e.help.count(n)) e.errors.push_back("TYPE before HELP: " + n);
      if (t != "counter" && t != "gauge") e.errors.push_back("type " + t);
      if (!std::regex_match(n, name_re)) e.errors.push_back("bad name " + n);
      e.type[n] = t;
      current = n;
      continue;
    }
    if (line.empty() || line[0] == '#') {
      e.errors.push_back("unexpected line: " + line);
      continue;
    }
    Sample s;
    std::size_t i = 0;
    while (i < line.size() && line[i] != '{' && line[i] != ' ') ++i;
    s.name = line.substr(0, i);
    if (s.name != current) e.errors.push_back("sample outside its family (or family split): " + line);
    if (closed.count(s.name)) e.errors.push_back("family split: " + s.name);
    if (i < line.size() && line[i] == '{') {
      ++i;
      while (i < line.size() && line[i] != '}') {
        const std::size_t eq = line.find('=', i);
        const std::string k = line.substr(i, eq - i);
        if (!std::regex_match(k, label_re)) e.errors.push_back("bad label name " + k);
        i = eq + 1;
        if (line[i] != '"') e.errors.push_back("label value not quoted: " + line);
        ++i;
        std::string v;
        for (; i < line.size() && line[i] != '"'; ++i) {
          if (line[i] == '\\') {
            ++i;
            if (line[i] == 'n') v += '\n';
            else if (line[i] == '\\' || line[i] == '"') v += line[i];
            else e.errors.push_back("bad escape in " + line);
          } else {
            v += line[i];
          }
        }
        ++i;  // closing quote
        s.labels[k] = v;
        if (line[i] == ',') ++i;
      }
      ++i;  // }
    }
    if (i >= line.size() || line[i] != ' ') {
      e.errors.push_back("no value: " + line);
      continue;
    }
    s.value = std::stod(line.substr(i + 1));
    std::string key = s.name;
    for (auto& [k, v] : s.labels) key += "|" + k + "=" + v;
    if (!series.insert(key).second) e.errors.push_back("duplicate series: " + line);
    e.samples.push_back(s);
  }
  return e;
}

// --- A plain HTTP/1.1 client (no curl in C++) ------------------------------------------------

struct HttpReply {
  int status = 0;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
};

HttpReply http(uint16_t port, const std::string& method, const std::string& path) {
  HttpReply r;
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  timeval tv{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_port = htons(port);
  sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&sin), sizeof sin) != 0) {
    close(fd);
    return r;
  }
  const std::string req = method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
  if (write(fd, req.data(), req.size()) != static_cast<ssize_t>(req.size())) {
    close(fd);
    return r;
  }
  std::string raw;
  char buf[65536];
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) raw.append(buf, static_cast<std::size_t>(n));
  close(fd);
  const std::size_t head_end = raw.find("\r\n\r\n");
  if (head_end == std::string::npos) return r;
  std::istringstream head(raw.substr(0, head_end));
  std::string line;
  std::getline(head, line);
  r.status = std::stoi(line.substr(line.find(' ') + 1, 3));
  while (std::getline(head, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::size_t c = line.find(':');
    if (c == std::string::npos) continue;
    std::string k = line.substr(0, c);
    for (char& ch : k) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    r.headers[k] = line.substr(line.find_first_not_of(' ', c + 1));
  }
  r.body = raw.substr(head_end + 4);
  return r;
}

// Runs `f` on another thread while this one plays the main loop: serves the mailbox and steps
// the switch (traffic keeps flowing), as roceswitch's main loop does.
template <typename F>
auto serving(Observability& obs, Rig* rig, F f) {
  auto fut = std::async(std::launch::async, f);
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (fut.wait_for(0ms) != std::future_status::ready && std::chrono::steady_clock::now() < deadline) {
    obs.serve_pending();
    if (rig) rig->run(20 * kUs);
    std::this_thread::sleep_for(200us);
  }
  return fut.get();
}

uint16_t free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&sin), sizeof sin);
  socklen_t len = sizeof sin;
  getsockname(fd, reinterpret_cast<sockaddr*>(&sin), &len);
  close(fd);
  return ntohs(sin.sin_port);
}

// --- The text ----------------------------------------------------------------------------------

TEST(Prometheus, EscapesLabelValuesAndHelp) {
  EXPECT_EQ(prometheus_escape_label("plain"), "plain");
  EXPECT_EQ(prometheus_escape_label("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
  EXPECT_EQ(prometheus_escape_help("x\\y\nz \"q\""), "x\\\\y\\nz \"q\"");
  EXPECT_TRUE(prometheus_metric_name_ok("roceswitch_port_rx_packets_total"));
  EXPECT_TRUE(prometheus_metric_name_ok("a:b_c"));
  EXPECT_FALSE(prometheus_metric_name_ok("9lives"));
  EXPECT_FALSE(prometheus_metric_name_ok("a-b"));
  EXPECT_FALSE(prometheus_label_name_ok("a:b"));
  EXPECT_FALSE(prometheus_label_name_ok("__reserved"));
}

TEST(Prometheus, WriterChecksNamesAndDropsDuplicateSeries) {
  PrometheusWriter w;
  EXPECT_THROW(w.family("x_packets", PrometheusWriter::Type::Counter, "h"), std::logic_error);
  EXPECT_THROW(w.family("x_depth_total", PrometheusWriter::Type::Gauge, "h"), std::logic_error);
  EXPECT_THROW(w.family("bad-name_total", PrometheusWriter::Type::Counter, "h"), std::logic_error);
  auto& f = w.family("x_events_total", PrometheusWriter::Type::Counter, "Events.\nSecond line \\ here.");
  f.add({{"port", "a"}}, uint64_t{1});
  f.add({{"port", "a"}}, uint64_t{2});  // the same series: dropped
  f.add({{"port", "b"}}, 2.5);
  w.family("x_unused", PrometheusWriter::Type::Gauge, "never added to");
  EXPECT_EQ(w.text(),
            "# HELP x_events_total Events.\\nSecond line \\\\ here.\n# TYPE x_events_total counter\n"
            "x_events_total{port=\"a\"} 1\nx_events_total{port=\"b\"} 2.5\n");
}

TEST(Prometheus, EveryFamilyWellFormedAndValuesAreTheSwitchCounters) {
  Rig r;
  r.run(2 * kMs);
  const std::string text = prometheus_metrics(r.sw);
  if (std::getenv("RS_PRINT_METRICS")) std::printf("%s", text.c_str());  // to look at it
  const Exposition e = parse(text);
  for (const std::string& err : e.errors) ADD_FAILURE() << err;
  ASSERT_FALSE(e.samples.empty());
  for (const auto& [name, type] : e.type) {
    EXPECT_TRUE(name.starts_with("roceswitch_")) << name;
    EXPECT_FALSE(e.help.at(name).empty()) << name;
    EXPECT_EQ(type == "counter", name.ends_with("_total")) << name << " is a " << type;
  }
  // The families the dashboard and docs name are there.
  for (const char* f : {"roceswitch_port_rx_packets_total", "roceswitch_port_tx_bytes_total", "roceswitch_port_link_up",
                        "roceswitch_queue_depth_bytes", "roceswitch_drops_total", "roceswitch_pfc_tx_frames_total",
                        "roceswitch_pfc_rx_frames_total", "roceswitch_ecn_marked_packets_total",
                        "roceswitch_pfcwd_storms_detected_total", "roceswitch_pg_level_bytes",
                        "roceswitch_group_member_tx_packets_total", "roceswitch_buffer_used_bytes",
                        "roceswitch_received_packets_total", "roceswitch_stage_packets_total"})
    EXPECT_TRUE(e.type.count(f)) << f;

  for (std::size_t p = 0; p < r.sw.num_ports(); ++p) {
    const std::string port = r.sw.port(p).name;
    EXPECT_EQ(e.get("roceswitch_port_rx_packets_total", {{"port", port}}), static_cast<double>(r.sw.rx_packets(p))) << port;
    EXPECT_EQ(e.get("roceswitch_port_tx_bytes_total", {{"port", port}}), static_cast<double>(r.sw.tx_bytes(p))) << port;
    EXPECT_EQ(e.get("roceswitch_port_link_up", {{"port", port}}), 1.0);
    for (int q = 0; q < 8; ++q)
      EXPECT_EQ(e.get("roceswitch_queue_depth_bytes", {{"port", port}, {"queue", std::to_string(q)}}),
                static_cast<double>(r.sw.egress(p).queue(q).depth_bytes.get()));
  }
  EXPECT_GT(*e.get("roceswitch_port_rx_packets_total", {{"port", "h1"}}), 0);
  // Every drop reason from the start, 0 until it happens.
  EXPECT_EQ(e.get("roceswitch_drops_total", {{"port", "h0"}, {"reason", "no_route"}}), 0.0);
  // The weird name comes back unescaped: the writer escaped it as the format says.
  EXPECT_EQ(e.get("roceswitch_port_rx_packets_total", {{"port", kWeird}}), static_cast<double>(r.sw.rx_packets(3)));
  EXPECT_NE(text.find("port=\"we\\\"ird\\\\port\""), std::string::npos);
  // The two members of "spine" each carry their share, counted by next hop.
  const nlohmann::json st = stats_json(r.sw);
  for (const auto& g : st["groups"])
    if (g["name"] == "spine") {
      ASSERT_EQ(g["members"].size(), 2u);
      double total = 0;
      for (const auto& m : g["members"]) {
        auto v = e.get("roceswitch_group_member_tx_packets_total",
                       {{"group", "spine"}, {"port", m["port"].get<std::string>()}, {"nexthop", m["nexthop"].dump()}});
        ASSERT_TRUE(v.has_value());
        EXPECT_EQ(*v, m["packets"].get<double>());
        total += *v;
      }
      EXPECT_GT(total, 0);
    }
  EXPECT_EQ(e.get("roceswitch_received_packets_total", {}), static_cast<double>(r.sw.totals().received));
}

TEST(Prometheus, CountersNeverGoBackWhileTrafficFlows) {
  Rig r;
  r.run(kMs);
  const auto a = parse(prometheus_metrics(r.sw)).counters();
  r.run(3 * kMs);  // the incast builds queue 3 of h0: ECN marks, PFC
  const Exposition eb = parse(prometheus_metrics(r.sw));
  const auto b = eb.counters();
  ASSERT_GT(a.size(), 50u);
  for (const auto& [k, v] : a) {
    auto it = b.find(k);
    ASSERT_NE(it, b.end()) << k << " disappeared";
    EXPECT_GE(it->second, v) << k;
  }
  EXPECT_GT(b.at("roceswitch_port_rx_packets_total|port=h1"), a.at("roceswitch_port_rx_packets_total|port=h1"));
  EXPECT_GT(b.at("roceswitch_port_tx_packets_total|port=h0"), a.at("roceswitch_port_tx_packets_total|port=h0"));
  // The incast paused its senders on priority 3, and they were told to resume.
  EXPECT_GT(b.at("roceswitch_pfc_tx_frames_total|port=h1|priority=3"), 0);
  EXPECT_GT(b.at("roceswitch_pfc_tx_xon_frames_total|port=h1|priority=3"), 0);
  EXPECT_EQ(b.at("roceswitch_pfc_tx_frames_total|port=h1|priority=1"), 0);
}

// --- HTTP --------------------------------------------------------------------------------------

TEST(Observability, ServesMetricsOverHttpFromTheMainThread) {
  Rig r;
  r.run(kMs);
  const uint16_t port = free_port();  // bound and released: civetweb takes it
  Observability obs(r.sw, {.metrics_listen = fmt::format("127.0.0.1:{}", port), .telemetry = false});
  EXPECT_EQ(obs.metrics_port(), port);
  const HttpReply a = serving(obs, &r, [&] { return http(port, "GET", "/metrics"); });
  ASSERT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(a.headers.at("content-type"), "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(a.headers.at("content-length"), std::to_string(a.body.size()));
  const Exposition ea = parse(a.body);
  for (const std::string& err : ea.errors) ADD_FAILURE() << err;
  EXPECT_TRUE(ea.type.count("roceswitch_port_rx_packets_total"));
  // A second scrape while the switch keeps running: counters only grow, traffic moved on.
  const HttpReply b = serving(obs, &r, [&] { return http(port, "GET", "/metrics"); });
  ASSERT_EQ(b.status, 200);
  const auto ca = ea.counters(), cb = parse(b.body).counters();
  for (const auto& [k, v] : ca) EXPECT_GE(cb.at(k), v) << k;
  EXPECT_GT(cb.at("roceswitch_port_rx_packets_total|port=h1"), ca.at("roceswitch_port_rx_packets_total|port=h1"));
  // The body equals what the main thread computes itself, once the switch stands still.
  const HttpReply still = serving(obs, nullptr, [&] { return http(port, "GET", "/metrics"); });
  EXPECT_EQ(still.body, obs.metrics_text());

  const HttpReply other = serving(obs, &r, [&] { return http(port, "GET", "/metricsx"); });
  EXPECT_EQ(other.status, 404);
  const HttpReply post = serving(obs, &r, [&] { return http(port, "POST", "/metrics"); });
  EXPECT_EQ(post.status, 405);
  const HttpReply head = serving(obs, &r, [&] { return http(port, "HEAD", "/metrics"); });
  EXPECT_EQ(head.status, 200);
  EXPECT_TRUE(head.body.empty());
  const HttpReply query = serving(obs, &r, [&] { return http(port, "GET", "/metrics?x=1"); });
  EXPECT_EQ(query.status, 200);
}

TEST(Observability, AnyFreePortWithPortZero) {
  Rig r;
  Observability obs(r.sw, {.metrics_listen = "127.0.0.1:0", .telemetry = false});
  ASSERT_NE(obs.metrics_port(), 0);
  const HttpReply a = serving(obs, &r, [&] { return http(obs.metrics_port(), "GET", "/metrics"); });
  EXPECT_EQ(a.status, 200);
}

TEST(Observability, AnswersServiceUnavailableWhenTheMainThreadDoesNotServe) {
  Rig r;
  Observability obs(r.sw, {.metrics_listen = "127.0.0.1:0", .telemetry = false, .answer_timeout = 200ms});
  const auto t0 = std::chrono::steady_clock::now();
  const HttpReply a = http(obs.metrics_port(), "GET", "/metrics");  // nobody calls serve_pending
  const auto waited = std::chrono::steady_clock::now() - t0;
  EXPECT_EQ(a.status, 503);
  EXPECT_NE(a.body.find("did not answer"), std::string::npos) << a.body;
  EXPECT_GE(waited, 200ms);
  EXPECT_LT(waited, 5s);
  // Served again, the same endpoint answers.
  const HttpReply b = serving(obs, &r, [&] { return http(obs.metrics_port(), "GET", "/metrics"); });
  EXPECT_EQ(b.status, 200);
}

TEST(Observability, RefusesBadListenAddressesWithTheReason) {
  Rig r;
  auto reason = [&](const std::string& listen) -> std::string {
    try {
      Observability obs(r.sw, {.metrics_listen = listen, .telemetry = false});
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(reason("9464").find("no port"), std::string::npos);
  EXPECT_NE(reason("localhost:9464").find("not an IPv4 address"), std::string::npos);
  EXPECT_NE(reason("127.0.0.1:99999").find("not a port number"), std::string::npos);
  EXPECT_NE(reason("127.0.0.1:").find("not a port number"), std::string::npos);
  EXPECT_NE(reason("[::1]:9464").find("IPv6"), std::string::npos);
  EXPECT_NE(reason("192.0.2.1:9464").find("not an address of this host"), std::string::npos);
  // A port another socket listens on.
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&sin), sizeof sin), 0);
  ASSERT_EQ(listen(fd, 1), 0);
  socklen_t len = sizeof sin;
  getsockname(fd, reinterpret_cast<sockaddr*>(&sin), &len);
  EXPECT_NE(reason(fmt::format("127.0.0.1:{}", ntohs(sin.sin_port))).find("in use"), std::string::npos);
  close(fd);
}

// --- The mailbox -------------------------------------------------------------------------------

TEST(MainThreadMailbox, RunsJobsOnTheDrainingThreadTimesOutAndCloses) {
  MainThreadMailbox mb;
  EXPECT_EQ(mb.drain(), 0u);
  auto ran_on = std::make_shared<std::thread::id>();
  auto fut = std::async(std::launch::async, [&] { return mb.call([ran_on] { *ran_on = std::this_thread::get_id(); }, 5s); });
  while (fut.wait_for(1ms) != std::future_status::ready) mb.drain();
  EXPECT_EQ(fut.get(), MainThreadMailbox::Result::Done);
  EXPECT_EQ(*ran_on, std::this_thread::get_id());

  auto ran = std::make_shared<bool>(false);
  EXPECT_EQ(mb.call([ran] { *ran = true; }, 50ms), MainThreadMailbox::Result::Timeout);
  EXPECT_EQ(mb.drain(), 0u);  // the timed-out job was taken back
  EXPECT_FALSE(*ran);

  std::string err;
  auto failing = std::async(std::launch::async, [&] {
    return mb.call([] { throw std::runtime_error("no such thing"); }, 5s, &err);
  });
  while (failing.wait_for(1ms) != std::future_status::ready) mb.drain();
  EXPECT_EQ(failing.get(), MainThreadMailbox::Result::Failed);
  EXPECT_EQ(err, "no such thing");

  auto waiting = std::async(std::launch::async, [&] { return mb.call([] {}, 10s); });
  std::this_thread::sleep_for(50ms);
  mb.close();
  EXPECT_EQ(waiting.get(), MainThreadMailbox::Result::Closed);
  EXPECT_EQ(mb.call([] {}, 10s), MainThreadMailbox::Result::Closed);
}

// --- DPDK telemetry ----------------------------------------------------------------------------

TEST(Telemetry, AnswersFromTheSwitchCounters) {
  Rig r;
  r.run(2 * kMs);
  const auto ports = telemetry_answer(r.sw, "/roceswitch/ports", "");
  ASSERT_FALSE(ports.contains("error")) << ports.dump();
  ASSERT_EQ(ports["name"].size(), 4u);
  EXPECT_EQ(ports["name"][0], "h0");
  EXPECT_EQ(ports["name"][3], kWeird);
  EXPECT_EQ(ports["rx_packets"][1], r.sw.rx_packets(1));
  const auto h1 = telemetry_answer(r.sw, "/roceswitch/ports", " h1 ");
  EXPECT_EQ(h1["name"], "h1");
  EXPECT_EQ(h1["rx_packets"], r.sw.rx_packets(1));
  EXPECT_EQ(h1["speed_mbps"], 10000u);
  EXPECT_NE(telemetry_answer(r.sw, "/roceswitch/ports", "nope")["error"].get<std::string>().find("no port 'nope'"), std::string::npos);

  const auto q = telemetry_answer(r.sw, "/roceswitch/queues", "h0");
  ASSERT_EQ(q["queue"].size(), 8u);
  EXPECT_EQ(q["depth_bytes"][3], r.sw.egress(0).queue(3).depth_bytes.get());
  EXPECT_EQ(q["enqueued_packets"][3], r.sw.egress(0).queue(3).enq_packets.get());
  EXPECT_EQ(telemetry_answer(r.sw, "/roceswitch/queues", "")["queue"].size(), 32u);

  const auto pfc = telemetry_answer(r.sw, "/roceswitch/pfc", "h1");
  ASSERT_EQ(pfc["priority"].size(), 8u);
  EXPECT_EQ(pfc["port_name"][0], "h1");

  const auto g = telemetry_answer(r.sw, "/roceswitch/groups", "spine");
  ASSERT_EQ(g["port"].size(), 2u);
  EXPECT_EQ(g["port"][0], "h2");
  EXPECT_EQ(g["port"][1], kWeird);
  const auto by_port = telemetry_answer(r.sw, "/roceswitch/groups", "h2");
  for (const auto& p : by_port["port"]) EXPECT_EQ(p, "h2");

  const auto drops = telemetry_answer(r.sw, "/roceswitch/drops", "");
  EXPECT_TRUE(drops.contains("tail_drop_bytes"));
  EXPECT_EQ(drops["no_route"], r.sw.drops(DropReason::NoRoute));
  EXPECT_EQ(telemetry_answer(r.sw, "/roceswitch/drops", "h0")["port"], "h0");

  const auto t = telemetry_answer(r.sw, "/roceswitch/totals", "");
  EXPECT_EQ(t["received"], r.sw.totals().received);
  EXPECT_TRUE(telemetry_answer(r.sw, "/roceswitch/totals", "x").contains("error"));
  EXPECT_TRUE(telemetry_answer(r.sw, "/roceswitch/nope", "").contains("error"));

  // Every answer fits DPDK's data (valid dict keys, array types, sizes).
  for (const TelemetryCommand& c : kTelemetryCommands) {
    EXPECT_LT(std::strlen(c.help), 64u) << c.name;  // DPDK refuses longer help
    rte_tel_data* d = rte_tel_data_alloc();
    EXPECT_EQ(telemetry_fill(telemetry_answer(r.sw, c.name, ""), d), 0) << c.name;
    rte_tel_data_free(d);
  }
}

// One request over DPDK's telemetry socket (what dpdk-telemetry.py does): the JSON reply.
std::string telemetry_request(const std::string& path, const std::string& request) {
  const int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
  sockaddr_un sun{};
  sun.sun_family = AF_UNIX;
  std::snprintf(sun.sun_path, sizeof sun.sun_path, "%s", path.c_str());
  timeval tv{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  std::string out;
  if (connect(fd, reinterpret_cast<sockaddr*>(&sun), sizeof sun) == 0) {
    std::vector<char> buf(64 * 1024);
    if (read(fd, buf.data(), buf.size()) > 0 && write(fd, request.data(), request.size()) > 0) {
      const ssize_t n = read(fd, buf.data(), buf.size());
      if (n > 0) out.assign(buf.data(), static_cast<std::size_t>(n));
    }
  }
  close(fd);
  return out;
}

TEST(Telemetry, DpdkTelemetrySocketReachesTheMainThread) {
  const std::string path = std::string(rte_eal_get_runtime_dir()) + "/dpdk_telemetry.v2";
  if (access(path.c_str(), F_OK) != 0) GTEST_SKIP() << "no DPDK telemetry socket at " << path;
  Rig r;
  r.run(kMs);
  {
    Observability obs(r.sw, {.metrics_listen = "", .telemetry = true});
    // A second one in the process cannot hold the commands too.
    EXPECT_THROW(Observability(r.sw, {.metrics_listen = "", .telemetry = true}), std::runtime_error);
    const std::string list = serving(obs, &r, [&] { return telemetry_request(path, "/"); });
    for (const TelemetryCommand& c : kTelemetryCommands) EXPECT_NE(list.find(std::string("\"") + c.name + "\""), std::string::npos) << list;
    const std::string help = serving(obs, &r, [&] { return telemetry_request(path, "/help,/roceswitch/ports"); });
    EXPECT_NE(help.find("Per-port counters"), std::string::npos) << help;

    const nlohmann::json ports = nlohmann::json::parse(serving(obs, nullptr, [&] { return telemetry_request(path, "/roceswitch/ports"); }));
    const auto& p = ports["/roceswitch/ports"];
    ASSERT_EQ(p["name"].size(), 4u) << ports.dump();
    EXPECT_EQ(p["name"][3], kWeird);  // DPDK escaped it into valid JSON
    EXPECT_EQ(p["rx_packets"][1], r.sw.rx_packets(1));

    const nlohmann::json q =
        nlohmann::json::parse(serving(obs, nullptr, [&] { return telemetry_request(path, "/roceswitch/queues,h0"); }));
    EXPECT_EQ(q["/roceswitch/queues"]["depth_bytes"][3], r.sw.egress(0).queue(3).depth_bytes.get()) << q.dump();
    const nlohmann::json bad = nlohmann::json::parse(serving(obs, &r, [&] { return telemetry_request(path, "/roceswitch/ports,zz"); }));
    EXPECT_NE(bad["/roceswitch/ports"]["error"].get<std::string>().find("no port"), std::string::npos);
  }
  {
    // Nobody serving: a bounded wait, then an error, not a hang.
    Observability slow(r.sw, {.metrics_listen = "", .telemetry = true, .answer_timeout = 100ms});
    const nlohmann::json late = nlohmann::json::parse(telemetry_request(path, "/roceswitch/totals"));
    EXPECT_NE(late["/roceswitch/totals"]["error"].get<std::string>().find("did not answer"), std::string::npos) << late.dump();
  }
  // After the Observability: the commands stay (DPDK cannot remove them) and say so.
  const nlohmann::json stopped = nlohmann::json::parse(telemetry_request(path, "/roceswitch/totals"));
  EXPECT_EQ(stopped["/roceswitch/totals"]["error"], "switch stopped");
}

}  // namespace
}  // namespace rs::test
