#include "app/observability.h"

#include <arpa/inet.h>
#include <civetweb.h>
#include <fmt/core.h>
#include <netinet/in.h>
#include <rte_telemetry.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "app/prometheus.h"
#include "app/stats_json.h"
#include "dataplane/core/drop_reason.h"

namespace rs {

// ---------------------------------------------------------------------------------------------
// The mailbox

MainThreadMailbox::Result MainThreadMailbox::call(std::function<void()> fn, std::chrono::milliseconds wait,
                                                  std::string* error) {
  auto job = std::make_shared<Job>();
  job->fn = std::move(fn);
  std::unique_lock lk(mu_);
  if (closed_) return Result::Closed;
  queue_.push_back(job);
  pending_.store(queue_.size(), std::memory_order_release);
  cv_.wait_for(lk, wait, [&] { return job->done || closed_; });
  if (job->done) {
    if (job->error.empty()) return Result::Done;
    if (error) *error = job->error;
    return Result::Failed;
  }
  // Not run yet: take it back. Already running: it finishes into its own captures.
  if (auto it = std::find(queue_.begin(), queue_.end(), job); it != queue_.end()) {
    queue_.erase(it);
    pending_.store(queue_.size(), std::memory_order_release);
  }
  return closed_ ? Result::Closed : Result::Timeout;
}

std::size_t MainThreadMailbox::drain() {
  if (pending_.load(std::memory_order_acquire) == 0) return 0;
  std::deque<std::shared_ptr<Job>> jobs;
  {
    std::lock_guard lk(mu_);
    jobs.swap(queue_);
    pending_.store(0, std::memory_order_release);
  }
  for (auto& job : jobs) {
    std::string error;
    try {
      job->fn();
    } catch (const std::exception& e) {
      error = *e.what() ? e.what() : "unknown error";
    } catch (...) {
      error = "unknown error";
    }
    {
      std::lock_guard lk(mu_);
      job->error = std::move(error);
      job->done = true;
    }
    cv_.notify_all();
  }
  return jobs.size();
}

void MainThreadMailbox::close() {
  {
    std::lock_guard lk(mu_);
    closed_ = true;
    queue_.clear();
    pending_.store(0, std::memory_order_release);
  }
  cv_.notify_all();
}

// ---------------------------------------------------------------------------------------------
// Telemetry answers (main thread)

const TelemetryCommand kTelemetryCommands[6] = {
    {"/roceswitch/ports", "Per-port counters and link. Parameters: optional port name"},
    {"/roceswitch/queues", "Per-queue depth, drops, ECN, pause. Param: optional port"},
    {"/roceswitch/pfc", "Per-priority PFC sent/received, PG levels. Param: opt. port"},
    {"/roceswitch/groups", "Next-hop group members. Param: optional group or port name"},
    {"/roceswitch/drops", "Drops by reason, switch or one port. Param: optional port"},
    {"/roceswitch/totals", "Switch totals and buffer use. Takes no parameters"},
};

namespace {

using nlohmann::json;
using ojson = nlohmann::ordered_json;

// DPDK 22.11's limits: 16 KiB a reply (longer ones lose entries silently), 512 array entries,
// 256 dict entries.
constexpr std::size_t kTelemetryMaxReply = 16 * 1024 - 256;
constexpr std::size_t kTelemetryMaxArray = 512;
constexpr std::size_t kTelemetryMaxDict = 256;

const json& field(const json& o, const char* k) {
  static const json zero = 0u;
  if (!o.is_object()) return zero;
  auto it = o.find(k);
  return it == o.end() ? zero : *it;
}
uint64_t u64(const json& v) {
  if (v.is_boolean()) return v.get<bool>() ? 1 : 0;
  if (v.is_number_unsigned()) return v.get<uint64_t>();
  if (v.is_number_integer()) return static_cast<uint64_t>(std::max<int64_t>(0, v.get<int64_t>()));
  if (v.is_number()) return static_cast<uint64_t>(std::max(0.0, v.get<double>()));
  return 0;
}
uint64_t sum_values(const json& o) {
  uint64_t s = 0;
  if (o.is_object())
    for (auto& v : o) s += u64(v);
  return s;
}
ojson error(std::string msg) { return ojson{{"error", std::move(msg)}}; }

// Rows to a table: one array a column, in the first row's order.
ojson table(const std::vector<ojson>& rows) {
  ojson t = ojson::object();
  if (rows.empty()) return t;
  for (auto it = rows[0].begin(); it != rows[0].end(); ++it) {
    ojson col = ojson::array();
    for (const ojson& r : rows) col.push_back(r.at(it.key()));
    t[it.key()] = col;
  }
  return t;
}

std::string names_of(const json& arr) {
  std::string s;
  for (const json& x : arr) s += (s.empty() ? "" : ", ") + x.value("name", std::string());
  return s;
}

// The ports the parameter selects: all of them, or the one it names (nullptr: no such port).
std::vector<const json*> select_ports(const json& ports, std::string_view param, std::string& err) {
  std::vector<const json*> out;
  for (const json& p : ports)
    if (param.empty() || p.value("name", std::string()) == param) out.push_back(&p);
  if (!param.empty() && out.empty()) err = fmt::format("no port '{}' (ports: {})", param, names_of(ports));
  return out;
}

ojson port_row(const json& p) {
  const json& load = field(p, "load");
  return ojson{{"name", p.value("name", std::string())},
               {"kind", p.value("kind", std::string())},
               {"link_up", u64(field(p, "link_up"))},
               {"speed_mbps", static_cast<uint64_t>(field(p, "speed_gbps").is_number() ? p["speed_gbps"].get<double>() * 1000 + 0.5 : 0)},
               {"rx_packets", u64(field(p, "rx_packets"))},
               {"rx_bytes", u64(field(p, "rx_bytes"))},
               {"tx_packets", u64(field(p, "tx_packets"))},
               {"tx_bytes", u64(field(p, "tx_bytes"))},
               {"drops", sum_values(field(p, "drops"))},
               {"queued_bytes", u64(field(load, "queued_bytes"))},
               {"tx_rate_bps", u64(field(load, "tx_rate_bps"))},
               {"quality", u64(field(load, "quality"))},
               {"link_down_events", u64(field(p, "link_down_events"))}};
}

ojson answer_ports(const json& j, std::string_view param) {
  std::string err;
  auto ports = select_ports(j["ports"], param, err);
  if (!err.empty()) return error(err);
  if (!param.empty()) return port_row(*ports[0]);  // one port: its fields
  std::vector<ojson> rows;
  for (const json* p : ports) rows.push_back(port_row(*p));
  return table(rows);
}

ojson answer_queues(const json& j, std::string_view param) {
  std::string err;
  auto ports = select_ports(j["ports"], param, err);
  if (!err.empty()) return error(err);
  std::vector<ojson> rows;
  for (const json* p : ports)
    for (const json& q : (*p)["queues"])
      rows.push_back(ojson{{"port", p->value("name", std::string())},
                           {"queue", u64(field(q, "queue"))},
                           {"depth_bytes", u64(field(q, "depth_bytes"))},
                           {"depth_packets", u64(field(q, "depth_packets"))},
                           {"peak_bytes", u64(field(q, "peak_bytes"))},
                           {"enqueued_packets", u64(field(q, "enqueued_packets"))},
                           {"enqueued_bytes", u64(field(q, "enqueued_bytes"))},
                           {"dequeued_packets", u64(field(q, "dequeued_packets"))},
                           {"dequeued_bytes", u64(field(q, "dequeued_bytes"))},
                           {"ecn_marked", u64(field(q, "ecn_marked"))},
                           {"drops", sum_values(field(q, "drops"))},
                           {"paused", u64(field(q, "paused_now"))},
                           {"paused_ns", u64(field(q, "paused_ns"))},
                           {"pfcwd_storms_detected", u64(field(q, "pfcwd_storms_detected"))},
                           {"pfcwd_storms_restored", u64(field(q, "pfcwd_storms_restored"))}});
  return table(rows);
}

ojson answer_pfc(const json& j, std::string_view param) {
  std::string err;
  auto ports = select_ports(j["ports"], param, err);
  if (!err.empty()) return error(err);
  std::vector<ojson> rows, per_port;
  for (const json* p : ports) {
    const std::string name = p->value("name", std::string());
    const json& pfc = field(*p, "pfc");
    const json& rxo = field(pfc, "rx_xoff");
    const json& rxn = field(pfc, "rx_xon");
    for (const json& g : field(pfc, "pg")) {
      const uint64_t pr = u64(field(g, "pg"));
      rows.push_back(ojson{{"port", name},
                           {"priority", pr},
                           {"lossless", u64(field(g, "lossless"))},
                           {"pg_level_bytes", u64(field(g, "level_bytes"))},
                           {"xoff_bytes", u64(field(g, "xoff"))},
                           {"xon_bytes", u64(field(g, "xon"))},
                           {"headroom_bytes", u64(field(g, "headroom"))},
                           {"asserting", u64(field(g, "asserting"))},
                           {"assert_ns", u64(field(g, "assert_ns"))},
                           {"tx_xoff", u64(field(g, "xoff_sent"))},
                           {"tx_xon", u64(field(g, "xon_sent"))},
                           {"rx_xoff", rxo.is_array() && pr < rxo.size() ? u64(rxo[pr]) : 0},
                           {"rx_xon", rxn.is_array() && pr < rxn.size() ? u64(rxn[pr]) : 0}});
    }
    per_port.push_back(ojson{{"port_name", name},
                             {"port_frames_sent", u64(field(pfc, "frames_sent"))},
                             {"port_send_failures", u64(field(pfc, "send_failures"))},
                             {"port_rx_pause", u64(field(pfc, "rx_pause"))},
                             {"port_rx_ignored", u64(field(pfc, "rx_ignored_priorities"))}});
  }
  ojson t = table(rows);
  const ojson pt = table(per_port);
  for (auto it = pt.begin(); it != pt.end(); ++it) t[it.key()] = it.value();
  return t;
}

ojson answer_groups(const json& j, std::string_view param) {
  bool group_named = false, port_named = false;
  for (const json& g : j["groups"]) group_named = group_named || g.value("name", std::string()) == param;
  for (const json& p : j["ports"]) port_named = port_named || p.value("name", std::string()) == param;
  if (!param.empty() && !group_named && !port_named)
    return error(fmt::format("no group or port '{}' (groups: {})", param, names_of(j["groups"])));
  std::vector<ojson> rows;
  for (const json& g : j["groups"]) {
    const std::string gname = g.value("name", std::string());
    if (group_named && gname != param) continue;
    for (const json& m : g["members"]) {
      const std::string port = m.value("port", std::string());
      if (!group_named && port_named && port != param) continue;
      rows.push_back(ojson{{"group", gname},
                           {"policy", field(g, "policy").value("name", std::string())},
                           {"port", port},
                           {"nexthop", u64(field(m, "nexthop"))},
                           {"link_up", u64(field(m, "link_up"))},
                           {"packets", u64(field(m, "packets"))},
                           {"bytes", u64(field(m, "bytes"))}});
    }
  }
  return table(rows);
}

ojson answer_drops(const json& j, std::string_view param) {
  const json* drops = &j["drops"];
  ojson out = ojson::object();
  if (!param.empty()) {
    std::string err;
    auto ports = select_ports(j["ports"], param, err);
    if (!err.empty()) return error(err);
    drops = &field(*ports[0], "drops");
    out["port"] = std::string(param);
  }
  out["total"] = sum_values(*drops);
  for (std::size_t r = 1; r < kNumDropReasons; ++r) {
    const std::string reason(kDropReasonNames[r]);
    out[reason] = u64(field(*drops, reason.c_str()));
  }
  return out;
}

ojson answer_totals(const json& j) {
  const json& t = j["totals"];
  const json& b = j["buffer"];
  return ojson{{"received", u64(field(t, "received"))},
               {"sent", u64(field(t, "sent"))},
               {"queued", u64(field(t, "queued"))},
               {"in_flight", u64(field(t, "in_flight"))},
               {"dropped", u64(field(t, "dropped"))},
               {"balanced", u64(field(t, "balanced"))},
               {"lossless_drops", u64(field(j, "lossless_drops"))},
               {"buffer_pool_bytes", u64(field(b, "pool_bytes"))},
               {"buffer_used_bytes", u64(field(b, "used_bytes"))},
               {"buffer_headroom_reserved_bytes", u64(field(b, "headroom_reserved_bytes"))},
               {"ports", j["ports"].size()},
               {"groups", j["groups"].size()},
               {"workers", j["workers"].size()}};
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\n' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

}  // namespace

ojson telemetry_answer(const Switch& sw, std::string_view cmd, std::string_view param) {
  param = trim(param);
  const json j = stats_json(sw);
  ojson a;
  if (cmd == "/roceswitch/ports") a = answer_ports(j, param);
  else if (cmd == "/roceswitch/queues") a = answer_queues(j, param);
  else if (cmd == "/roceswitch/pfc") a = answer_pfc(j, param);
  else if (cmd == "/roceswitch/groups") a = answer_groups(j, param);
  else if (cmd == "/roceswitch/drops") a = answer_drops(j, param);
  else if (cmd == "/roceswitch/totals") a = param.empty() ? answer_totals(j) : error("/roceswitch/totals takes no parameters");
  else return error(fmt::format("unknown command '{}'", cmd));
  // DPDK would cut a longer reply silently: say so and how to narrow it instead.
  std::size_t longest = 0;
  for (auto& v : a) longest = std::max<std::size_t>(longest, v.is_array() ? v.size() : 0);
  const std::size_t bytes = a.dump().size() + cmd.size() + 8;
  if (bytes > kTelemetryMaxReply || longest > kTelemetryMaxArray || a.size() > kTelemetryMaxDict)
    return error(fmt::format("the answer ({} bytes, {} rows) exceeds DPDK telemetry's {} KiB reply: give a port name, e.g. {},{}",
                             bytes, longest, (kTelemetryMaxReply + 256) / 1024, cmd,
                             j["ports"].empty() ? "PORT" : j["ports"][0].value("name", std::string("PORT"))));
  return a;
}

namespace {

bool tel_u64(const ojson& v) { return v.is_boolean() || v.is_number_unsigned(); }
std::string tel_text(const ojson& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

int fill_array(const ojson& arr, rte_tel_data* c) {
  const bool all_u64 = std::all_of(arr.begin(), arr.end(), tel_u64);
  const bool all_int = std::all_of(arr.begin(), arr.end(), [](const ojson& v) {
    return v.is_number_integer() && v.get<int64_t>() >= INT32_MIN && v.get<int64_t>() <= INT32_MAX;
  });
  int rc = rte_tel_data_start_array(c, all_u64 ? RTE_TEL_U64_VAL : all_int ? RTE_TEL_INT_VAL : RTE_TEL_STRING_VAL);
  for (const ojson& v : arr) {
    if (rc < 0) break;
    if (all_u64) rc = rte_tel_data_add_array_u64(c, v.is_boolean() ? (v.get<bool>() ? 1 : 0) : v.get<uint64_t>());
    else if (all_int) rc = rte_tel_data_add_array_int(c, static_cast<int>(v.get<int64_t>()));
    else rc = rte_tel_data_add_array_string(c, tel_text(v).c_str());
  }
  return rc < 0 ? rc : 0;
}

}  // namespace

int telemetry_fill(const ojson& a, rte_tel_data* d) {
  if (!a.is_object()) return rte_tel_data_string(d, tel_text(a).c_str()) < 0 ? -EINVAL : 0;
  int rc = rte_tel_data_start_dict(d);
  for (auto it = a.begin(); it != a.end() && rc >= 0; ++it) {
    const char* k = it.key().c_str();
    const ojson& v = it.value();
    if (v.is_array()) {
      rte_tel_data* c = rte_tel_data_alloc();
      if (!c) return -ENOMEM;
      rc = fill_array(v, c);
      if (rc >= 0) rc = rte_tel_data_add_dict_container(d, k, c, 0);
      if (rc < 0) rte_tel_data_free(c);
    } else if (tel_u64(v)) {
      rc = rte_tel_data_add_dict_u64(d, k, v.is_boolean() ? (v.get<bool>() ? 1 : 0) : v.get<uint64_t>());
    } else if (v.is_number_integer() && v.get<int64_t>() >= INT32_MIN && v.get<int64_t>() <= INT32_MAX) {
      rc = rte_tel_data_add_dict_int(d, k, static_cast<int>(v.get<int64_t>()));
    } else {
      rc = rte_tel_data_add_dict_string(d, k, tel_text(v).c_str());  // positive E2BIG: cut to 127 characters
    }
  }
  return rc < 0 ? rc : 0;
}

// ---------------------------------------------------------------------------------------------
// DPDK telemetry: the commands are registered once a process (DPDK cannot unregister them) and
// answer through the mailbox of the Observability that holds them, if any.

namespace {

struct TelemetryHolder {
  std::mutex mu;
  std::shared_ptr<MainThreadMailbox> mailbox;
  const Switch* sw = nullptr;
  std::chrono::milliseconds wait{2000};
  bool registered = false;  // tried: the commands are DPDK's for good
  std::string register_error;
};
// Never destroyed: DPDK's telemetry thread may call in while the process exits.
TelemetryHolder& holder() {
  static auto* h = new TelemetryHolder;
  return *h;
}

int tel_error(rte_tel_data* d, const std::string& msg) {
  rte_tel_data_start_dict(d);
  rte_tel_data_add_dict_string(d, "error", msg.c_str());
  return 0;
}

int telemetry_callback(const char* cmd, const char* params, rte_tel_data* d) {
  std::shared_ptr<MainThreadMailbox> mb;
  const Switch* sw = nullptr;
  std::chrono::milliseconds wait{0};
  {
    TelemetryHolder& h = holder();
    std::lock_guard lk(h.mu);
    mb = h.mailbox;
    sw = h.sw;
    wait = h.wait;
  }
  if (!mb) return tel_error(d, "switch stopped");
  auto answer = std::make_shared<ojson>();
  std::string c = cmd ? cmd : "", p = params ? params : "", err;
  switch (mb->call([answer, sw, c, p] { *answer = telemetry_answer(*sw, c, p); }, wait, &err)) {
    case MainThreadMailbox::Result::Done:
      if (telemetry_fill(*answer, d) < 0) return tel_error(d, "the answer does not fit DPDK telemetry's data");
      return 0;
    case MainThreadMailbox::Result::Timeout:
      return tel_error(d, fmt::format("the switch's main thread did not answer within {} ms", wait.count()));
    case MainThreadMailbox::Result::Closed:
      return tel_error(d, "switch stopped");
    case MainThreadMailbox::Result::Failed:
      return tel_error(d, err);
  }
  return -1;
}

// ---------------------------------------------------------------------------------------------
// The HTTP side

struct ListenAddress {
  std::string addr;
  uint16_t port = 0;
};

ListenAddress parse_listen(const std::string& s) {
  auto bad = [&](const std::string& why) {
    return std::runtime_error(fmt::format("metrics listen address '{}': {} (expected ADDR:PORT, e.g. 127.0.0.1:9464)", s, why));
  };
  const auto colon = s.rfind(':');
  if (colon == std::string::npos) throw bad("no port");
  ListenAddress a;
  a.addr = s.substr(0, colon);
  const std::string port = s.substr(colon + 1);
  if (a.addr.empty()) throw bad("no address (0.0.0.0 listens on every interface)");
  if (a.addr.front() == '[' || a.addr.find(':') != std::string::npos)
    throw bad("IPv6 is not supported by this civetweb build; give an IPv4 address");
  in_addr ia{};
  if (inet_pton(AF_INET, a.addr.c_str(), &ia) != 1) throw bad(fmt::format("'{}' is not an IPv4 address", a.addr));
  if (port.empty() || port.size() > 5 || !std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
      std::stoul(port) > 65535)
    throw bad(fmt::format("'{}' is not a port number (0..65535)", port));
  a.port = static_cast<uint16_t>(std::stoul(port));
  return a;
}

// civetweb says only "Failed to setup server ports"; a bind of our own says why.
void check_bindable(const ListenAddress& a, const std::string& text) {
  if (a.port == 0) return;
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return;
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);  // as civetweb binds
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_port = htons(a.port);
  inet_pton(AF_INET, a.addr.c_str(), &sin.sin_addr);
  const int rc = bind(fd, reinterpret_cast<sockaddr*>(&sin), sizeof sin);
  const int e = errno;
  close(fd);
  if (rc == 0) return;
  std::string why;
  if (e == EADDRINUSE) why = fmt::format("port {} is in use (another process listens on it)", a.port);
  else if (e == EADDRNOTAVAIL) why = fmt::format("{} is not an address of this host", a.addr);
  else if (e == EACCES) why = fmt::format("port {} needs root or CAP_NET_BIND_SERVICE", a.port);
  else why = std::strerror(e);
  throw std::runtime_error(fmt::format("metrics listen address '{}': {}", text, why));
}

void send_text(mg_connection* c, int status, const std::string& body, const char* type = "text/plain; charset=utf-8") {
  mg_response_header_start(c, status);
  mg_response_header_add(c, "Content-Type", type, -1);
  mg_response_header_add(c, "Content-Length", std::to_string(body.size()).c_str(), -1);
  mg_response_header_add(c, "Cache-Control", "no-cache", -1);
  if (status == 405) mg_response_header_add(c, "Allow", "GET, HEAD", -1);
  mg_response_header_send(c);
  const mg_request_info* ri = mg_get_request_info(c);
  if (!ri || std::strcmp(ri->request_method, "HEAD") != 0) mg_write(c, body.data(), body.size());
}

}  // namespace

struct Observability::Http {
  mg_context* ctx = nullptr;
  std::shared_ptr<MainThreadMailbox> mailbox;
  const Switch* sw = nullptr;
  std::chrono::milliseconds wait{2000};

  std::string addr;  // where it listens, for the wake-up below
  uint16_t port = 0;

  ~Http() {
    mailbox->close();  // handlers waiting for the main thread answer 503 at once
    if (!ctx) return;
    // civetweb's accept loop polls with a 2 s timeout and sees the stop flag only when the
    // poll returns: connections wake it, so the switch stops in milliseconds, not 2 s.
    std::atomic<bool> stopped{false};
    std::thread waker([&] {
      sockaddr_in sin{};
      sin.sin_family = AF_INET;
      sin.sin_port = htons(port);
      inet_pton(AF_INET, addr == "0.0.0.0" ? "127.0.0.1" : addr.c_str(), &sin.sin_addr);
      while (!stopped.load()) {
        const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd >= 0) {
          connect(fd, reinterpret_cast<sockaddr*>(&sin), sizeof sin);
          close(fd);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    });
    mg_stop(ctx);
    stopped.store(true);
    waker.join();
  }

  static int handle(mg_connection* c, void* data) {
    auto* self = static_cast<Http*>(data);
    const mg_request_info* ri = mg_get_request_info(c);
    const std::string_view uri = ri->local_uri ? ri->local_uri : "";
    const std::string_view method = ri->request_method ? ri->request_method : "";
    if (uri == "/" && (method == "GET" || method == "HEAD")) {
      send_text(c, 200, "roceswitch: Prometheus metrics at /metrics (docs/observability.md)\n");
      return 200;
    }
    if (uri != "/metrics") {
      send_text(c, 404, fmt::format("404 Not Found: {} (the metrics are at /metrics)\n", uri));
      return 404;
    }
    if (method != "GET" && method != "HEAD") {
      send_text(c, 405, "405 Method Not Allowed: GET or HEAD\n");
      return 405;
    }
    auto body = std::make_shared<std::string>();
    const Switch* sw = self->sw;
    std::string err;
    switch (self->mailbox->call([body, sw] { *body = prometheus_metrics(*sw); }, self->wait, &err)) {
      case MainThreadMailbox::Result::Done:
        send_text(c, 200, *body, kPrometheusContentType);
        return 200;
      case MainThreadMailbox::Result::Timeout:
        send_text(c, 503, fmt::format("503 Service Unavailable: the switch's main thread did not answer within {} ms\n",
                                      self->wait.count()));
        return 503;
      case MainThreadMailbox::Result::Closed:
        send_text(c, 503, "503 Service Unavailable: the switch is stopping\n");
        return 503;
      case MainThreadMailbox::Result::Failed:
        send_text(c, 500, "500 Internal Server Error: " + err + "\n");
        return 500;
    }
    return 500;
  }
};

Observability::Observability(const Switch& sw, ObservabilityOptions opts)
    : sw_(sw), opts_(std::move(opts)), mailbox_(std::make_shared<MainThreadMailbox>()) {
  if (opts_.answer_timeout.count() <= 0) throw std::runtime_error("observability: answer_timeout must be positive");
  if (!opts_.metrics_listen.empty()) {
    const ListenAddress a = parse_listen(opts_.metrics_listen);
    check_bindable(a, opts_.metrics_listen);
    static std::once_flag init;
    std::call_once(init, [] { mg_init_library(0); });
    http_ = std::make_unique<Http>();
    http_->mailbox = mailbox_;
    http_->sw = &sw_;
    http_->wait = opts_.answer_timeout;
    const std::string listen = fmt::format("{}:{}", a.addr, a.port);
    // No document_root: civetweb serves no files, only the handler below. Keep-alive off: one
    // scrape a connection, so idle scrapers hold no thread.
    const char* options[] = {"listening_ports", listen.c_str(), "num_threads", "4", "request_timeout_ms", "10000",
                             "enable_keep_alive", "no", nullptr};
    char text[256] = "";
    unsigned code = 0;
    mg_error_data err{&code, text, sizeof text};
    mg_init_data init_data{nullptr, nullptr, options};
    http_->ctx = mg_start2(&init_data, &err);
    if (!http_->ctx)
      throw std::runtime_error(fmt::format("metrics listen address '{}': civetweb cannot start: {}", opts_.metrics_listen,
                                           *text ? text : "unknown error"));
    mg_set_request_handler(http_->ctx, "/", &Http::handle, http_.get());
    mg_server_port ports[4];
    const int n = mg_get_server_ports(http_->ctx, 4, ports);
    port_ = n > 0 ? static_cast<uint16_t>(ports[0].port) : a.port;
    http_->addr = a.addr;
    http_->port = port_;
  }
  if (opts_.telemetry) {
    TelemetryHolder& h = holder();
    std::lock_guard lk(h.mu);
    if (h.mailbox) throw std::runtime_error("DPDK telemetry: another Observability of this process holds the /roceswitch commands");
    if (!h.registered) {
      h.registered = true;
      for (const TelemetryCommand& c : kTelemetryCommands)
        if (const int rc = rte_telemetry_register_cmd(c.name, telemetry_callback, c.help); rc != 0) {
          h.register_error = fmt::format("DPDK telemetry: cannot register {}: {}", c.name,
                                         rc == -ENOENT ? "too many telemetry commands in this process" : std::strerror(-rc));
          break;
        }
    }
    if (!h.register_error.empty()) throw std::runtime_error(h.register_error);
    h.mailbox = mailbox_;
    h.sw = &sw_;
    h.wait = opts_.answer_timeout;
    telemetry_owner_ = true;
  }
}

Observability::~Observability() {
  if (telemetry_owner_) {
    TelemetryHolder& h = holder();
    std::lock_guard lk(h.mu);
    h.mailbox.reset();
    h.sw = nullptr;
  }
  mailbox_->close();  // waiting telemetry callbacks and HTTP handlers answer at once
  http_.reset();      // stops civetweb (its threads are joined)
}

void Observability::serve_pending() { mailbox_->drain(); }

std::string Observability::metrics_text() const { return prometheus_metrics(sw_); }

}  // namespace rs
