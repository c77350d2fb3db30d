#include "dataplane/nic/traffic.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <random>

namespace rs::nic {

namespace {
constexpr const char* kPatterns[] = {"incast", "permutation", "all_to_all", "cdf"};
}  // namespace

const char* pattern_name(Pattern p) { return kPatterns[static_cast<int>(p)]; }

bool pattern_of(const std::string& name, Pattern& p) {
  for (int i = 0; i < 4; ++i)
    if (name == kPatterns[i]) {
      p = static_cast<Pattern>(i);
      return true;
    }
  return false;
}

double FlowSizeCdf::mean() const {
  // The size is uniform between two points: each segment adds its probability x its middle.
  double m = points.empty() ? 0 : points.front().first * points.front().second;
  for (std::size_t i = 1; i < points.size(); ++i)
    m += (points[i].second - points[i - 1].second) * (points[i].first + points[i - 1].first) / 2;
  return m;
}

uint32_t FlowSizeCdf::draw(double u) const {
  if (points.empty()) return 1;
  auto it = std::lower_bound(points.begin(), points.end(), u, [](const std::pair<double, double>& p, double v) { return p.second < v; });
  double size;
  if (it == points.begin()) {
    size = it->first;
  } else if (it == points.end()) {
    size = points.back().first;
  } else {
    const auto& a = *(it - 1);
    const auto& b = *it;
    size = b.second > a.second ? a.first + (b.first - a.first) * (u - a.second) / (b.second - a.second) : b.first;
  }
  return static_cast<uint32_t>(std::clamp(std::llround(size), 1LL, static_cast<long long>(UINT32_MAX)));
}

void expand_traffic(const TrafficSpec& s, uint16_t index, const std::vector<Endpoint>& eps) {
  auto qp = [&](uint32_t peer, uint32_t qpn) {
    QpSpec q;
    q.peer_ip = peer;
    q.qpn = qpn;
    q.dscp = s.dscp;
    q.message_bytes = s.message_bytes;
    q.messages = s.messages;
    q.depth = s.depth;
    q.start_ns = s.start_ns;
    q.stop_ns = s.stop_ns;
    q.traffic = index;
    return q;
  };
  const std::size_t n = eps.size();
  switch (s.pattern) {
    case Pattern::Incast: {
      const Endpoint& rx = eps.back();
      for (std::size_t i = 0; i + 1 < n; ++i) eps[i].qps->push_back(qp(rx.ip, s.qpn + static_cast<uint32_t>(i)));
      return;
    }
    case Pattern::Permutation: {
      // A random derangement: a random cycle through all hosts (Sattolo), so none sends to itself.
      std::vector<std::size_t> to(n);
      std::iota(to.begin(), to.end(), std::size_t{0});
      std::mt19937_64 rng(s.seed);
      for (std::size_t i = n - 1; i > 0; --i) std::swap(to[i], to[std::uniform_int_distribution<std::size_t>(0, i - 1)(rng)]);
      for (std::size_t i = 0; i < n; ++i) eps[i].qps->push_back(qp(eps[to[i]].ip, s.qpn + static_cast<uint32_t>(i)));
      return;
    }
    case Pattern::AllToAll:
    case Pattern::Cdf: {
      // One QP a pair, the same number at both ends.
      auto pair_qpn = [&](std::size_t a, std::size_t b) { return s.qpn + static_cast<uint32_t>(std::min(a, b) * n + std::max(a, b)); };
      if (s.pattern == Pattern::AllToAll) {
        for (std::size_t a = 0; a < n; ++a)
          for (std::size_t b = 0; b < n; ++b)
            if (a != b) eps[a].qps->push_back(qp(eps[b].ip, pair_qpn(a, b)));
        return;
      }
      const double mean = std::max(1.0, s.cdf.mean());
      std::mt19937_64 rng(s.seed);
      std::uniform_real_distribution<double> u(0, 1);
      for (std::size_t a = 0; a < n; ++a) {
        // Poisson arrivals at `load` of the link: rate = load x link bytes/s / mean size.
        const double per_ns = s.load * eps[a].link_gbps / 8 / mean;
        std::map<std::size_t, QpSpec> by_dst;
        for (double t = 0;;) {
          t += -std::log(1 - u(rng)) / per_ns;
          if (t >= static_cast<double>(s.duration_ns)) break;
          std::size_t b = std::uniform_int_distribution<std::size_t>(0, n - 2)(rng);
          if (b >= a) ++b;
          auto it = by_dst.try_emplace(b, qp(eps[b].ip, pair_qpn(a, b))).first;
          it->second.sizes.push_back(s.cdf.draw(u(rng)));
          it->second.post_at_ns.push_back(s.start_ns + static_cast<uint64_t>(t));
        }
        for (auto& [b, q] : by_dst) {
          q.messages = q.post_at_ns.size();
          q.depth = 1;
          eps[a].qps->push_back(std::move(q));
        }
      }
      return;
    }
  }
}

}  // namespace rs::nic
