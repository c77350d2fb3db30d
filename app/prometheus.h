// The switch's counters in Prometheus' text exposition format 0.0.4 (served on /metrics by
// app/observability.h). Built from the stats document (app/stats_json.h, which holds the
// groups of app/routing_stats.h), so the metrics carry the stats file's names: a field
// `rx_packets` of a port is `roceswitch_port_rx_packets_total{port="h0"}`. Conventions: the
// `roceswitch_` prefix, base units (`_bytes`, `_seconds`, `_bytes_per_second`), `_total` on
// counters and never on gauges, one `# HELP` and one `# TYPE` line per family; the families and
// their labels are listed in docs/observability.md.
#pragma once
#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "dataplane/switch/switch.h"

namespace rs {

inline constexpr const char* kPrometheusContentType = "text/plain; version=0.0.4; charset=utf-8";

// A label value as the text format wants it: backslash, double quote and newline escaped.
std::string prometheus_escape_label(std::string_view v);
// A HELP text: backslash and newline escaped.
std::string prometheus_escape_help(std::string_view v);
// [a-zA-Z_:][a-zA-Z0-9_:]* (metric names) and [a-zA-Z_][a-zA-Z0-9_]* (label names).
bool prometheus_metric_name_ok(std::string_view name);
bool prometheus_label_name_ok(std::string_view name);

// Writes families in the order they are declared, each with HELP and TYPE and then its
// samples; a second sample with the same labels in a family is dropped (Prometheus would
// refuse the whole scrape), and a family with no sample is left out.
class PrometheusWriter {
 public:
  enum class Type { Counter, Gauge };
  using Labels = std::vector<std::pair<std::string_view, std::string>>;

  class Family {
   public:
    void add(const Labels& labels, double value);
    void add(const Labels& labels, uint64_t value);
    void add(const Labels& labels, const nlohmann::json& value);  // number or bool; others are skipped

   private:
    friend class PrometheusWriter;
    void add_text(const Labels& labels, std::string value);
    std::string name_, help_;
    Type type_ = Type::Gauge;
    std::string samples_;
    std::unordered_set<std::string> seen_;
  };

  // Names are checked (std::logic_error): a counter must end in _total, a gauge must not.
  Family& family(std::string name, Type type, std::string help);
  std::string text() const;

 private:
  std::vector<std::unique_ptr<Family>> families_;
};

// The /metrics body from a stats document (what stats_json returns).
std::string prometheus_text(const nlohmann::json& stats);
// The same from the switch, main thread only: prometheus_text(stats_json(sw)).
std::string prometheus_metrics(const Switch& sw);

}  // namespace rs
