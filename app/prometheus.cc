#include "app/prometheus.h"

#include <fmt/core.h>

#include <cmath>
#include <stdexcept>

#include "app/stats_json.h"
#include "dataplane/core/drop_reason.h"

namespace rs {

std::string prometheus_escape_label(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string prometheus_escape_help(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

namespace {

bool name_ok(std::string_view n, bool colon) {
  if (n.empty()) return false;
  for (std::size_t i = 0; i < n.size(); ++i) {
    const char c = n[i];
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (colon && c == ':');
    if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

}  // namespace

bool prometheus_metric_name_ok(std::string_view name) { return name_ok(name, true); }
bool prometheus_label_name_ok(std::string_view name) { return name_ok(name, false) && !name.starts_with("__"); }

PrometheusWriter::Family& PrometheusWriter::family(std::string name, Type type, std::string help) {
  if (!prometheus_metric_name_ok(name)) throw std::logic_error("bad metric name " + name);
  if ((type == Type::Counter) != name.ends_with("_total"))
    throw std::logic_error(name + ": counters end in _total, gauges do not");
  for (auto& f : families_)
    if (f->name_ == name) throw std::logic_error("metric family declared twice: " + name);
  auto f = std::make_unique<Family>();
  f->name_ = std::move(name);
  f->type_ = type;
  f->help_ = std::move(help);
  families_.push_back(std::move(f));
  return *families_.back();
}

void PrometheusWriter::Family::add_text(const Labels& labels, std::string value) {
  std::string l;
  for (const auto& [k, v] : labels) {
    if (!prometheus_label_name_ok(k)) throw std::logic_error(fmt::format("{}: bad label name {}", name_, k));
    l += fmt::format("{}{}=\"{}\"", l.empty() ? "" : ",", k, prometheus_escape_label(v));
  }
  if (!seen_.insert(l).second) return;  // the same series twice: the first one stands
  samples_ += name_;
  if (!l.empty()) samples_ += "{" + l + "}";
  samples_ += " " + value + "\n";
}

void PrometheusWriter::Family::add(const Labels& labels, uint64_t value) { add_text(labels, fmt::format("{}", value)); }

void PrometheusWriter::Family::add(const Labels& labels, double value) {
  if (std::isnan(value)) add_text(labels, "NaN");
  else if (std::isinf(value)) add_text(labels, value > 0 ? "+Inf" : "-Inf");
  else if (value == std::floor(value) && std::fabs(value) < 1e15) add_text(labels, fmt::format("{}", static_cast<int64_t>(value)));
  else add_text(labels, fmt::format("{}", value));
}

void PrometheusWriter::Family::add(const Labels& labels, const nlohmann::json& value) {
  if (value.is_boolean()) add(labels, uint64_t{value.get<bool>() ? 1u : 0u});
  else if (value.is_number_unsigned()) add(labels, value.get<uint64_t>());
  else if (value.is_number_integer()) add_text(labels, fmt::format("{}", value.get<int64_t>()));
  else if (value.is_number()) add(labels, value.get<double>());
}

std::string PrometheusWriter::text() const {
  std::string out;
  for (const auto& f : families_) {
    if (f->samples_.empty()) continue;
    out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", f->name_, prometheus_escape_help(f->help_), f->name_,
                       f->type_ == Type::Counter ? "counter" : "gauge");
    out += f->samples_;
  }
  return out;
}

namespace {

using nlohmann::json;
using Type = PrometheusWriter::Type;
constexpr Type kCounter = Type::Counter;
constexpr Type kGauge = Type::Gauge;

// A field of an object, or 0 when the stats left it out (drop maps hold non-zero reasons only).
const json& field(const json& o, const char* k) {
  static const json zero = 0u;
  if (!o.is_object()) return zero;
  auto it = o.find(k);
  return it == o.end() ? zero : *it;
}
// An array to iterate, or an empty one (nlohmann iterates a scalar as one element).
const json& items(const json& v) {
  static const json empty = json::array();
  return v.is_array() ? v : empty;
}
double number(const json& v) { return v.is_number() ? v.get<double>() : v.is_boolean() ? (v.get<bool>() ? 1 : 0) : 0; }
std::string str(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

void port_families(PrometheusWriter& w, const json& ports) {
  struct Simple {
    const char* metric;
    Type type;
    const char* key;
    const char* help;
  };
  static constexpr Simple kPort[] = {
      {"roceswitch_port_rx_packets_total", kCounter, "rx_packets", "Packets received on the port."},
      {"roceswitch_port_rx_bytes_total", kCounter, "rx_bytes", "Bytes received on the port (frames without FCS)."},
      {"roceswitch_port_tx_packets_total", kCounter, "tx_packets", "Packets sent on the port."},
      {"roceswitch_port_tx_bytes_total", kCounter, "tx_bytes", "Bytes sent on the port (frames without FCS)."},
      {"roceswitch_port_link_up", kGauge, "link_up", "1 when the port's link is up (carrier and admin state), else 0."},
      {"roceswitch_port_link_down_events_total", kCounter, "link_down_events", "Times the port's link went down."},
  };
  for (const Simple& s : kPort) {
    auto& f = w.family(s.metric, s.type, s.help);
    for (const json& p : ports) f.add({{"port", str(field(p, "name"))}}, field(p, s.key));
  }
  auto& info = w.family("roceswitch_port_info", kGauge, "Always 1; the port's kind (ethdev or emulated_host) as a label.");
  auto& speed = w.family("roceswitch_port_speed_bytes_per_second", kGauge,
                         "The port's emulated link rate (speed_gbps), bytes per second.");
  auto& queued = w.family("roceswitch_port_queued_bytes", kGauge, "Bytes queued in the port's 8 egress queues.");
  auto& rate = w.family("roceswitch_port_tx_rate_bytes_per_second", kGauge,
                        "The port's transmit rate as adaptive routing sees it (EWMA), bytes per second.");
  auto& quality = w.family("roceswitch_port_quality_band", kGauge,
                           "The port's quality band for adaptive routing, 0 (most loaded) to 7 (least loaded).");
  for (const json& p : ports) {
    const std::string name = str(field(p, "name"));
    info.add({{"port", name}, {"kind", str(field(p, "kind"))}}, uint64_t{1});
    speed.add({{"port", name}}, number(field(p, "speed_gbps")) * 1e9 / 8);
    const json& load = field(p, "load");
    queued.add({{"port", name}}, field(load, "queued_bytes"));
    rate.add({{"port", name}}, number(field(load, "tx_rate_bps")) / 8);
    quality.add({{"port", name}}, field(load, "quality"));
  }
  auto& mirror = w.family("roceswitch_mirror_copies_total", kCounter,
                          "Mirror copies made of the port's received (direction rx) or sent (tx) frames.");
  auto& mirror_lost = w.family("roceswitch_mirror_lost_total", kCounter,
                               "Mirror copies of the port's frames not made: the mirror pool was empty.");
  for (const json& p : ports) {
    const std::string name = str(field(p, "name"));
    const json& m = field(p, "mirror");
    mirror.add({{"port", name}, {"direction", "rx"}}, field(m, "rx_copies"));
    mirror.add({{"port", name}, {"direction", "tx"}}, field(m, "tx_copies"));
    mirror_lost.add({{"port", name}}, field(m, "lost"));
  }
  // Every reason from the start (0 until it happens), so rate() sees the first drops.
  auto& drops = w.family("roceswitch_drops_total", kCounter,
                         "Packets dropped, by the port they were charged to and the drop reason.");
  for (const json& p : ports)
    for (std::size_t r = 1; r < kNumDropReasons; ++r) {
      const std::string reason(kDropReasonNames[r]);
      drops.add({{"port", str(field(p, "name"))}, {"reason", reason}}, field(field(p, "drops"), reason.c_str()));
    }
}

void queue_families(PrometheusWriter& w, const json& ports) {
  struct Simple {
    const char* metric;
    Type type;
    const char* key;
    double scale;
    const char* help;
  };
  static constexpr Simple kQueue[] = {
      {"roceswitch_queue_depth_bytes", kGauge, "depth_bytes", 1, "Bytes in the egress queue now."},
      {"roceswitch_queue_depth_packets", kGauge, "depth_packets", 1, "Packets in the egress queue now."},
      {"roceswitch_queue_peak_bytes", kGauge, "peak_bytes", 1, "Highest depth of the egress queue since start, bytes."},
      {"roceswitch_queue_peak_packets", kGauge, "peak_packets", 1, "Highest depth of the egress queue since start, packets."},
      {"roceswitch_queue_enqueued_packets_total", kCounter, "enqueued_packets", 1, "Packets admitted to the egress queue."},
      {"roceswitch_queue_enqueued_bytes_total", kCounter, "enqueued_bytes", 1, "Bytes admitted to the egress queue."},
      {"roceswitch_queue_dequeued_packets_total", kCounter, "dequeued_packets", 1, "Packets sent from the egress queue."},
      {"roceswitch_queue_dequeued_bytes_total", kCounter, "dequeued_bytes", 1, "Bytes sent from the egress queue."},
      {"roceswitch_ecn_marked_packets_total", kCounter, "ecn_marked", 1,
       "Packets the egress queue marked CE (ECN, WRED/DCQCN marking)."},
      {"roceswitch_queue_paused", kGauge, "paused_now", 1, "1 while PFC received from the peer pauses the egress queue."},
      {"roceswitch_queue_paused_seconds_total", kCounter, "paused_ns", 1e-9,
       "Time the egress queue spent paused by PFC received from the peer, seconds."},
      {"roceswitch_pfcwd_storms_detected_total", kCounter, "pfcwd_storms_detected", 1,
       "PFC storms the PFC watchdog detected on the queue (paused past the detection time)."},
      {"roceswitch_pfcwd_storms_restored_total", kCounter, "pfcwd_storms_restored", 1,
       "PFC storms on the queue the PFC watchdog restored from."},
  };
  for (const Simple& s : kQueue) {
    auto& f = w.family(s.metric, s.type, s.help);
    for (const json& p : ports)
      for (const json& q : items(field(p, "queues"))) {
        const PrometheusWriter::Labels l = {{"port", str(field(p, "name"))}, {"queue", str(field(q, "queue"))}};
        if (s.scale == 1) f.add(l, field(q, s.key));
        else f.add(l, number(field(q, s.key)) * s.scale);
      }
  }
  // Reasons that happened at any queue of the switch, for every queue (a reason's series all
  // appear together, at its first drop; roceswitch_drops_total has every reason from the start).
  std::vector<std::string> reasons;
  for (std::size_t r = 1; r < kNumDropReasons; ++r) {
    const std::string reason(kDropReasonNames[r]);
    bool seen = false;
    for (const json& p : ports)
      for (const json& q : items(field(p, "queues"))) seen = seen || number(field(field(q, "drops"), reason.c_str())) > 0;
    if (seen) reasons.push_back(reason);
  }
  auto& qd = w.family("roceswitch_queue_drops_total", kCounter,
                      "Packets dropped at the egress queue, by reason (a reason appears once it happened at any queue).");
  for (const json& p : ports)
    for (const json& q : items(field(p, "queues")))
      for (const std::string& reason : reasons)
        qd.add({{"port", str(field(p, "name"))}, {"queue", str(field(q, "queue"))}, {"reason", reason}},
               field(field(q, "drops"), reason.c_str()));
}

void pfc_families(PrometheusWriter& w, const json& ports) {
  auto& level = w.family("roceswitch_pg_level_bytes", kGauge, "Bytes the ingress priority group holds in the shared buffer.");
  auto& lossless = w.family("roceswitch_pg_lossless", kGauge, "1 when the priority group is lossless (PFC enabled), else 0.");
  auto& xoff = w.family("roceswitch_pg_xoff_threshold_bytes", kGauge, "Lossless priority group: PFC XOFF is sent at this level.");
  auto& xon = w.family("roceswitch_pg_xon_threshold_bytes", kGauge, "Lossless priority group: PFC XON is sent under this level.");
  auto& headroom = w.family("roceswitch_pg_headroom_bytes", kGauge, "Lossless priority group: headroom above XOFF.");
  auto& headroom_min = w.family("roceswitch_pg_headroom_min_bytes", kGauge,
                                "Lossless priority group: the computed minimum headroom for the cable and MTU.");
  auto& tx = w.family("roceswitch_pfc_tx_frames_total", kCounter,
                      "PFC frames the switch sent on the port with this priority enabled (XOFF, its refreshes and XON).");
  auto& tx_xon = w.family("roceswitch_pfc_tx_xon_frames_total", kCounter,
                          "Of roceswitch_pfc_tx_frames_total, the frames that resume the priority (XON, time 0).");
  auto& asserting = w.family("roceswitch_pfc_asserting", kGauge, "1 while the switch pauses this priority of the peer (XOFF sent).");
  auto& assert_s = w.family("roceswitch_pfc_assert_seconds_total", kCounter,
                            "Time the switch spent pausing this priority of the peer (closed intervals), seconds.");
  auto& rx = w.family("roceswitch_pfc_rx_frames_total", kCounter,
                      "PFC frames received on the port with this priority enabled (XOFF and XON).");
  auto& rx_xon = w.family("roceswitch_pfc_rx_xon_frames_total", kCounter,
                          "Of roceswitch_pfc_rx_frames_total, the frames with time 0 (XON).");
  auto& wire = w.family("roceswitch_pfc_tx_wire_frames_total", kCounter,
                        "PFC frames the port put on the wire (one frame can carry several priorities).");
  auto& fail = w.family("roceswitch_pfc_tx_failures_total", kCounter,
                        "PFC frames the port could not send at once (no mbuf, port refused); retried.");
  auto& pause = w.family("roceswitch_pfc_rx_pause_frames_total", kCounter, "802.3x PAUSE frames received on the port.");
  auto& ignored = w.family("roceswitch_pfc_rx_ignored_frames_total", kCounter,
                           "PFC frames received that enabled only priorities that are not lossless here.");
  for (const json& p : ports) {
    const std::string port = str(field(p, "name"));
    const json& pfc = field(p, "pfc");
    for (const json& g : items(field(pfc, "pg"))) {
      const PrometheusWriter::Labels pg = {{"port", port}, {"pg", str(field(g, "pg"))}};
      const PrometheusWriter::Labels pr = {{"port", port}, {"priority", str(field(g, "pg"))}};
      level.add(pg, field(g, "level_bytes"));
      lossless.add(pg, field(g, "lossless"));
      // PG p sends PFC for priority p; a lossy one never does (0, so every priority has a series).
      tx.add(pr, number(field(g, "xoff_sent")) + number(field(g, "xon_sent")));
      tx_xon.add(pr, field(g, "xon_sent"));
      asserting.add(pr, field(g, "asserting"));
      assert_s.add(pr, number(field(g, "assert_ns")) * 1e-9);
      if (!field(g, "lossless").is_boolean() || !field(g, "lossless").get<bool>()) continue;
      xoff.add(pg, field(g, "xoff"));
      xon.add(pg, field(g, "xon"));
      headroom.add(pg, field(g, "headroom"));
      headroom_min.add(pg, field(g, "headroom_min"));
    }
    const json& rxo = field(pfc, "rx_xoff");
    const json& rxn = field(pfc, "rx_xon");
    for (std::size_t pr = 0; pr < 8 && rxo.is_array() && rxn.is_array() && pr < rxo.size() && pr < rxn.size(); ++pr) {
      const PrometheusWriter::Labels l = {{"port", port}, {"priority", std::to_string(pr)}};
      rx.add(l, number(rxo[pr]) + number(rxn[pr]));
      rx_xon.add(l, rxn[pr]);
    }
    wire.add({{"port", port}}, field(pfc, "frames_sent"));
    fail.add({{"port", port}}, field(pfc, "send_failures"));
    pause.add({{"port", port}}, field(pfc, "rx_pause"));
    ignored.add({{"port", port}}, field(pfc, "rx_ignored_priorities"));
  }
}

void port_extra_families(PrometheusWriter& w, const json& ports) {
  struct Simple {
    const char* metric;
    const char* key;
    const char* help;
  };
  static constexpr Simple kEthdev[] = {
      {"roceswitch_ethdev_rx_missed_packets_total", "imissed", "Packets the NIC dropped for want of receive descriptors (DPDK imissed)."},
      {"roceswitch_ethdev_rx_errors_total", "ierrors", "Erroneous packets the NIC received (DPDK ierrors)."},
      {"roceswitch_ethdev_tx_errors_total", "oerrors", "Packets the NIC failed to send (DPDK oerrors)."},
      {"roceswitch_ethdev_rx_nombuf_total", "rx_nombuf", "Receive mbuf allocation failures (DPDK rx_nombuf)."},
  };
  static constexpr Simple kHost[] = {
      {"roceswitch_emulated_host_tx_packets_total", "tx_packets", "Packets the emulated host sent into the switch."},
      {"roceswitch_emulated_host_tx_bytes_total", "tx_bytes", "Bytes the emulated host sent into the switch."},
      {"roceswitch_emulated_host_rx_packets_total", "rx_packets", "Packets the emulated host received from the switch."},
      {"roceswitch_emulated_host_rx_bytes_total", "rx_bytes", "Bytes the emulated host received from the switch."},
      {"roceswitch_emulated_host_rx_ce_marked_packets_total", "rx_ce_marked", "Packets the emulated host received marked CE."},
      {"roceswitch_emulated_host_rx_pfc_frames_total", "rx_pfc_frames", "PFC frames the emulated host received from the switch."},
      {"roceswitch_emulated_host_rx_icrc_bad_packets_total", "rx_icrc_bad", "RoCE packets the emulated host received with a bad ICRC."},
  };
  for (const Simple& s : kEthdev) {
    auto& f = w.family(s.metric, kCounter, s.help);
    for (const json& p : ports)
      if (p.contains("ethdev")) f.add({{"port", str(field(p, "name"))}}, field(p["ethdev"], s.key));
  }
  for (const Simple& s : kHost) {
    auto& f = w.family(s.metric, kCounter, s.help);
    for (const json& p : ports)
      if (p.contains("host")) f.add({{"port", str(field(p, "name"))}}, field(p["host"], s.key));
  }
}

void group_families(PrometheusWriter& w, const json& groups) {
  auto& pk = w.family("roceswitch_group_member_tx_packets_total", kCounter,
                      "Packets the next-hop group sent through the member (port, next hop).");
  auto& by = w.family("roceswitch_group_member_tx_bytes_total", kCounter,
                      "Bytes the next-hop group sent through the member (port, next hop).");
  auto& up = w.family("roceswitch_group_member_link_up", kGauge, "1 when the member's link is up (the group may choose it).");
  auto& fo = w.family("roceswitch_group_failovers_total", kCounter, "Times a member port of the group went down (its flows moved).");
  auto& pol = w.family("roceswitch_group_policy_info", kGauge,
                       "Always 1; the group's routing policy (tc=\"default\", or the traffic class of a policy_by_tc entry).");
  auto& ev = w.family("roceswitch_group_policy_events_total", kCounter,
                      "A routing policy's own counters (collisions, steered packets...), by group and counter.");
  for (const json& g : groups) {
    const std::string name = str(field(g, "name"));
    for (const json& m : items(field(g, "members"))) {
      const PrometheusWriter::Labels l = {{"group", name}, {"port", str(field(m, "port"))}, {"nexthop", str(field(m, "nexthop"))}};
      pk.add(l, field(m, "packets"));
      by.add(l, field(m, "bytes"));
      up.add(l, field(m, "link_up"));
    }
    fo.add({{"group", name}}, field(g, "failovers"));
    auto policy = [&](const json& c, const std::string& tc) {
      const std::string pname = str(field(c, "name"));
      pol.add({{"group", name}, {"tc", tc}, {"policy", pname}}, uint64_t{1});
      const json& ctr = field(c, "counters");
      if (ctr.is_object())
        for (auto it = ctr.begin(); it != ctr.end(); ++it)
          ev.add({{"group", name}, {"tc", tc}, {"policy", pname}, {"counter", it.key()}}, it.value());
    };
    if (g.contains("policy")) policy(g["policy"], "default");
    if (g.contains("policy_by_tc") && g["policy_by_tc"].is_object())
      for (auto it = g["policy_by_tc"].begin(); it != g["policy_by_tc"].end(); ++it) policy(it.value(), it.key());
  }
}

void switch_families(PrometheusWriter& w, const json& j) {
  const json& b = field(j, "buffer");
  struct Simple {
    const char* metric;
    Type type;
    const json& value;
    const char* help;
  };
  const json& t = field(j, "totals");
  const Simple all[] = {
      {"roceswitch_buffer_pool_bytes", kGauge, field(b, "pool_bytes"), "Size of the shared buffer pool."},
      {"roceswitch_buffer_cell_bytes", kGauge, field(b, "cell_bytes"), "The shared buffer's cell: every packet is charged whole cells."},
      {"roceswitch_buffer_headroom_reserved_bytes", kGauge, field(b, "headroom_reserved_bytes"),
       "Buffer reserved as headroom for the lossless priority groups."},
      {"roceswitch_buffer_shared_bytes", kGauge, field(b, "shared_bytes"), "The shared part of the buffer (pool minus reserved)."},
      {"roceswitch_buffer_used_bytes", kGauge, field(b, "used_bytes"), "Bytes of the shared buffer in use now."},
      {"roceswitch_lossless_drops_total", kCounter, field(j, "lossless_drops"),
       "Packets dropped at queues of lossless priorities (shutdown flush excepted): 0 in a lossless fabric."},
      {"roceswitch_received_packets_total", kCounter, field(t, "received"), "Packets received, all ports."},
      {"roceswitch_sent_packets_total", kCounter, field(t, "sent"), "Packets sent, all ports."},
      {"roceswitch_dropped_packets_total", kCounter, field(t, "dropped"), "Packets dropped, every reason and port."},
      {"roceswitch_queued_packets", kGauge, field(t, "queued"), "Packets in egress queues now."},
      {"roceswitch_in_flight_packets", kGauge, field(t, "in_flight"), "Packets in worker-to-worker handoff rings now."},
  };
  for (const Simple& s : all) w.family(s.metric, s.type, s.help).add({}, s.value);
}

void stage_families(PrometheusWriter& w, const json& j) {
  auto& calls = w.family("roceswitch_stage_calls_total", kCounter, "Bursts the pipeline node processed, all workers.");
  auto& pkts = w.family("roceswitch_stage_packets_total", kCounter, "Packets the pipeline node processed, all workers.");
  auto& ev = w.family("roceswitch_stage_events_total", kCounter, "A pipeline stage's own counters, by node and counter.");
  for (const json& s : items(field(j, "stages"))) {
    const std::string node = str(field(s, "node")), stage = str(field(s, "stage"));
    calls.add({{"node", node}, {"stage", stage}}, field(s, "calls"));
    pkts.add({{"node", node}, {"stage", stage}}, field(s, "packets"));
    const json& c = field(s, "counters");
    if (c.is_object())
      for (auto it = c.begin(); it != c.end(); ++it) ev.add({{"node", node}, {"stage", stage}, {"counter", it.key()}}, it.value());
  }
  auto& loops = w.family("roceswitch_worker_loops_total", kCounter, "Poll loops the worker ran.");
  auto& bursts = w.family("roceswitch_worker_rx_bursts_total", kCounter, "Receive bursts that brought the worker packets.");
  auto& held = w.family("roceswitch_worker_handoff_held_total", kCounter,
                        "Lossless packets a full handoff ring turned back and the worker held to retry.");
  for (const json& wk : items(field(j, "workers"))) {
    loops.add({{"worker", str(field(wk, "worker"))}}, field(wk, "loops"));
    bursts.add({{"worker", str(field(wk, "worker"))}}, field(wk, "rx_bursts"));
    held.add({{"worker", str(field(wk, "worker"))}}, field(wk, "handoff_held"));
  }
}

}  // namespace

std::string prometheus_text(const json& stats) {
  PrometheusWriter w;
  const json& p = items(field(stats, "ports"));
  port_families(w, p);
  queue_families(w, p);
  pfc_families(w, p);
  port_extra_families(w, p);
  group_families(w, items(field(stats, "groups")));
  switch_families(w, stats);
  stage_families(w, stats);
  return w.text();
}

std::string prometheus_metrics(const Switch& sw) { return prometheus_text(stats_json(sw)); }

}  // namespace rs
