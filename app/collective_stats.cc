#include "app/collective_stats.h"

#include <fmt/core.h>

#include <algorithm>

namespace rs {

nlohmann::json collectives_json(const SwitchConfig& cfg, const nlohmann::json& ports) {
  std::vector<std::string> names;
  std::vector<const nlohmann::json*> hosts;
  for (std::size_t p = 0; p < cfg.ports.size(); ++p) {
    names.push_back(cfg.ports[p].name);
    hosts.push_back(p < ports.size() ? &ports[p] : nullptr);
  }
  return collectives_json(cfg.collectives, names, hosts);
}

nlohmann::json collectives_json(const std::vector<nic::CollectiveSpec>& collectives, const std::vector<std::string>& names,
                                const std::vector<const nlohmann::json*>& host_stats) {
  nlohmann::json out = nlohmann::json::array();
  for (std::size_t i = 0; i < collectives.size(); ++i) {
    const nic::CollectiveSpec& c = collectives[i];
    const auto tag = static_cast<uint64_t>(i + 1);
    uint64_t start = UINT64_MAX, end = 0;
    bool done = true;
    nlohmann::json hosts = nlohmann::json::array();
    for (uint16_t p : c.ports) {
      hosts.push_back(names[p]);
      if (!host_stats[p]) continue;
      const nlohmann::json qps = host_stats[p]->value("/host/nic/qps"_json_pointer, nlohmann::json::array());
      for (const auto& q : qps) {
        if (q.value("tag", uint64_t{0}) != tag) continue;
        // Posted at all (a fabric's virtual clock may post at 0).
        if (q.value("messages_posted", uint64_t{0})) start = std::min(start, q.value("first_post_ns", uint64_t{0}));
        end = std::max(end, q.value("last_rx_message_ns", uint64_t{0}));
        const uint64_t want = q.value("messages", uint64_t{0});
        if (want && q.value("messages_done", uint64_t{0}) < want) done = false;
      }
    }
    const double t_us = done && end > start && start != UINT64_MAX ? static_cast<double>(end - start) / 1e3 : 0;
    const double alg = t_us > 0 ? static_cast<double>(c.size_bytes) * 8 / (t_us * 1e3) : 0;  // Gb/s
    const double bus = alg * nic::busbw_factor(c.op, c.ports.size());
    out.push_back({{"op", nic::collective_name(c.op)},
                   {"hosts", hosts},
                   {"ranks", c.ports.size()},
                   {"size_bytes", c.size_bytes},
                   {"done", done},
                   {"time_us", t_us},
                   {"algbw_gbps", alg},
                   {"busbw_gbps", bus},
                   {"algbw_GBps", alg / 8},
                   {"busbw_GBps", bus / 8}});
  }
  return out;
}

std::string collectives_table(const nlohmann::json& cs) {
  if (cs.empty()) return {};
  // nccl-tests' columns: size in bytes, time in us, algbw and busbw in GB/s.
  std::string s = fmt::format("{:<14} {:>6} {:>14} {:>12} {:>12} {:>12}\n", "collective", "ranks", "size(B)", "time(us)",
                              "algbw(GB/s)", "busbw(GB/s)");
  for (const auto& c : cs) {
    if (!c.value("done", false)) {
      s += fmt::format("{:<14} {:>6} {:>14} {:>12}\n", c.value("op", std::string()), c.value("ranks", 0), c.value("size_bytes", uint64_t{0}),
                       "not done");
      continue;
    }
    s += fmt::format("{:<14} {:>6} {:>14} {:>12.1f} {:>12.2f} {:>12.2f}\n", c.value("op", std::string()), c.value("ranks", 0),
                     c.value("size_bytes", uint64_t{0}), c.value("time_us", 0.0), c.value("algbw_GBps", 0.0), c.value("busbw_GBps", 0.0));
  }
  return s;
}

}  // namespace rs
