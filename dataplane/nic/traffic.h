// Traffic patterns over emulated NICs, as the congestion-control literature runs them: each
// becomes queue pairs on its hosts (roce_nic.h).
//   - incast: every sender one QP to the receiver (N:1);
//   - permutation: every host sends to exactly one other and hears from exactly one (a random
//     derangement, fixed by the seed);
//   - all_to_all: every host a QP to every other;
//   - cdf: open-loop messages whose sizes follow a flow-size distribution (a CDF file, as the
//     HPCC and DCQCN papers' web-search and Hadoop workloads), arriving as a Poisson process at
//     `load` of each host's link, each to a host drawn at random; one QP per pair carries them.
// The first three post `messages` of `message_bytes` (0: for ever), `depth` outstanding.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "dataplane/nic/collective.h"

namespace rs::nic {

enum class Pattern : uint8_t { Incast, Permutation, AllToAll, Cdf };
const char* pattern_name(Pattern p);
bool pattern_of(const std::string& name, Pattern& p);

// A flow-size distribution: (bytes, cumulative probability) points, both non-decreasing, the
// last probability 1; sizes between points are interpolated linearly, as HPCC's traffic_gen does.
struct FlowSizeCdf {
  std::vector<std::pair<double, double>> points;
  double mean() const;
  uint32_t draw(double u) const;  // u in [0, 1)
  bool operator==(const FlowSizeCdf&) const = default;
};

struct TrafficSpec {
  Pattern pattern = Pattern::Incast;
  std::vector<uint16_t> hosts;  // incast: the senders; the others: every host of the pattern
  uint16_t receiver = 0;        // incast
  uint32_t message_bytes = 65536;
  uint64_t messages = 0;
  uint32_t depth = 1;
  uint8_t dscp = 26;
  uint64_t start_ns = 0, stop_ns = UINT64_MAX;
  uint32_t qpn = 0x2000;        // the pattern's first QP number
  uint64_t seed = 1;
  // cdf
  std::string cdf_file;
  FlowSizeCdf cdf;
  double load = 0.5;            // of each sender's link
  uint64_t duration_ns = 0;     // arrivals are drawn over [start, start + duration)
  bool operator==(const TrafficSpec&) const = default;
};

// A host of the pattern: its address, link rate and queue pairs (the pattern's are appended).
struct Endpoint {
  uint32_t ip;
  double link_gbps;
  std::vector<QpSpec>* qps;
};
// `eps[i]` is the host spec.hosts[i] (incast: then the receiver last). `index` is the pattern's
// (1-based), marked on its queue pairs.
void expand_traffic(const TrafficSpec& spec, uint16_t index, const std::vector<Endpoint>& eps);

}  // namespace rs::nic
