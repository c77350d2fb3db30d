// The Prometheus text on a stepped switch of four emulated hosts (observability_rig.h): every
// family with HELP and TYPE, valid names, counters ending in _total and never going back while
// traffic flows, values equal to the switch's own counters, label escaping. Serving it over HTTP
// is metrics_http_test.
#include "app/prometheus.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>

#include "app/stats_json.h"
#include "dataplane/switch/mirror_sessions.h"
#include "tests/unit/app/observability_rig.h"
#include "tests/unit/app/prometheus_parse.h"

namespace rs::test {
namespace {

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
  apply_mirror_sessions(r.sw.mirror(), {{.name = "span", .dst_port = 2, .rx_ports = {1}}}, r.sw.num_ports());
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
  EXPECT_EQ(e.get("roceswitch_mirror_copies_total", {{"port", "h1"}, {"direction", "rx"}}),
            static_cast<double>(r.sw.mirror().copies(1, PortMirror::kRx)));
  EXPECT_GT(*e.get("roceswitch_mirror_copies_total", {{"port", "h1"}, {"direction", "rx"}}), 0);
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

}  // namespace
}  // namespace rs::test
