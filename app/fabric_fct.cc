#include "app/fabric_fct.h"

#include <fmt/core.h>

#include <map>

namespace rs {

namespace {

// A CDF's steps merged over hosts: a bucket's upper edge -> samples.
using Steps = std::map<double, uint64_t>;

double percentile(const Steps& steps, uint64_t total, double p) {
  uint64_t seen = 0;
  for (const auto& [edge, k] : steps)
    if ((seen += k) >= p * static_cast<double>(total)) return edge;
  return steps.empty() ? 0 : steps.rbegin()->first;
}

}  // namespace

nlohmann::json fct_by_size_json(const FabricRunSpec& spec, const std::vector<const nlohmann::json*>& host_stats) {
  struct Class {
    uint64_t top = 0, total = 0;
    Steps fct, slowdown;
  };
  std::map<uint64_t, Class> classes;
  for (std::size_t h = 0; h < spec.hosts.size(); ++h) {
    if (!host_stats[h]) continue;
    const nlohmann::json rows = host_stats[h]->value("/host/nic/totals/fct_by_size"_json_pointer, nlohmann::json::array());
    for (const auto& r : rows) {
      Class& c = classes[r.value("bytes_min", uint64_t{0})];
      c.top = r.value("bytes_max", uint64_t{0});
      for (const auto& st : r["fct_us"].value("cdf", nlohmann::json::array())) {
        c.fct[st[0].get<double>()] += st[1].get<uint64_t>();
        c.total += st[1].get<uint64_t>();
      }
      for (const auto& st : r["slowdown"].value("cdf", nlohmann::json::array())) c.slowdown[st[0].get<double>()] += st[1].get<uint64_t>();
    }
  }
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [lo, c] : classes)
    out.push_back({{"bytes_min", lo},
                   {"bytes_max", c.top},
                   {"messages", c.total},
                   {"fct_p50_us", percentile(c.fct, c.total, 0.5)},
                   {"fct_p99_us", percentile(c.fct, c.total, 0.99)},
                   {"slowdown_p50", percentile(c.slowdown, c.total, 0.5)},
                   {"slowdown_p99", percentile(c.slowdown, c.total, 0.99)}});
  return out;
}

std::string fct_by_size_table(const nlohmann::json& rows) {
  if (rows.size() < 2) return {};  // one size: the host table says it
  std::string s = fmt::format("\n{:>21} {:>9} {:>11} {:>11} {:>12} {:>12}\n", "message bytes", "messages", "FCT p50 us", "FCT p99 us",
                              "slowdown p50", "slowdown p99");
  for (const auto& r : rows)
    s += fmt::format("{:>10}-{:<10} {:>9} {:>11.1f} {:>11.1f} {:>12.2f} {:>12.2f}\n", r["bytes_min"].get<uint64_t>(),
                     r["bytes_max"].get<uint64_t>(), r["messages"].get<uint64_t>(), r["fct_p50_us"].get<double>(),
                     r["fct_p99_us"].get<double>(), r["slowdown_p50"].get<double>(), r["slowdown_p99"].get<double>());
  return s + "(slowdown: a message's completion time over its unloaded one; percentiles within 25 %)\n";
}

}  // namespace rs
