#include "dataplane/switch/mirror_sessions.h"

#include <fmt/core.h>

#include <map>
#include <set>

namespace rs {

std::optional<MirrorProblem> check_mirror_sessions(const std::vector<MirrorSessionSpec>& sessions, std::size_t num_ports,
                                                   const MmuConfig& mmu) {
  uint8_t lossless_queues = 0;
  for (int pr = 0; pr < 8; ++pr)
    if (mmu.pfc_enable & (1u << pr)) lossless_queues |= static_cast<uint8_t>(1u << (mmu.pfc_to_queue[pr] & 7));
  std::map<std::pair<uint16_t, int>, std::size_t> watched;  // (port, dir) -> session
  std::set<std::string> names;
  for (std::size_t s = 0; s < sessions.size(); ++s) {
    const MirrorSessionSpec& m = sessions[s];
    if (m.name.empty()) return MirrorProblem{s, "name", "empty"};
    if (!names.insert(m.name).second) return MirrorProblem{s, "name", fmt::format("a second session '{}'", m.name)};
    if (m.dst_port >= num_ports) return MirrorProblem{s, "dst_port", fmt::format("no port {}", m.dst_port)};
    if (m.queue > 7) return MirrorProblem{s, "queue", "out of range [0, 7]"};
    if (lossless_queues & (1u << m.queue))
      return MirrorProblem{s, "queue", fmt::format("queue {} is lossless (pfc_enable); mirror copies go to a lossy queue", m.queue)};
    // A copy shorter than an Ethernet header would not be a frame.
    if (m.truncate != 0 && (m.truncate < 14 || m.truncate > 65535))
      return MirrorProblem{s, "truncate", fmt::format("{} bytes; 0 (whole frames) or 14 to 65535", m.truncate)};
    for (int dir = 0; dir < 2; ++dir) {
      const auto& ports = dir == PortMirror::kRx ? m.rx_ports : m.tx_ports;
      const char* key = dir == PortMirror::kRx ? "rx_ports" : "tx_ports";
      for (std::size_t i = 0; i < ports.size(); ++i) {
        const std::string field = fmt::format("{}[{}]", key, i);
        if (ports[i] >= num_ports) return MirrorProblem{s, field, fmt::format("no port {}", ports[i])};
        // Its own copies would come back to it (tx) or leave where they came from (rx).
        if (ports[i] == m.dst_port) return MirrorProblem{s, field, "the destination port cannot be a source of its session"};
        auto [at, fresh] = watched.emplace(std::pair{ports[i], dir}, s);
        if (!fresh)
          return MirrorProblem{s, field, fmt::format("this port's {} is already watched by session '{}'",
                                                     dir == PortMirror::kRx ? "rx" : "tx", sessions[at->second].name)};
      }
    }
  }
  return std::nullopt;
}

void apply_mirror_sessions(PortMirror& mirror, const std::vector<MirrorSessionSpec>& sessions, std::size_t num_ports) {
  std::vector<std::optional<MirrorTarget>> side[2];
  side[0].resize(num_ports);
  side[1].resize(num_ports);
  for (auto& m : sessions) {
    const MirrorTarget t{m.dst_port, m.queue, m.truncate};
    for (uint16_t p : m.rx_ports) side[PortMirror::kRx][p] = t;
    for (uint16_t p : m.tx_ports) side[PortMirror::kTx][p] = t;
  }
  if (!sessions.empty()) mirror.prepare();  // the one step that can fail, before any change
  for (uint8_t dir = 0; dir < 2; ++dir)
    for (std::size_t p = 0; p < num_ports; ++p)
      if (mirror.target(static_cast<uint16_t>(p), dir) != side[dir][p]) mirror.set(static_cast<uint16_t>(p), dir, side[dir][p]);
}

}  // namespace rs
