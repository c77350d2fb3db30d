#include "app/telemetry_answers.h"

#include <fmt/core.h>
#include <rte_telemetry.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <string>
#include <vector>

#include "app/stats_json.h"
#include "dataplane/core/drop_reason.h"

namespace rs {

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

// ---------------------------------------------------------------------------------------------
// DPDK's data from an answer (any thread)

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

}  // namespace rs
