// Mirror sessions as the switch programs them: checked as a whole (a port side is watched by
// one session at most, as the P4 tables' exact port key allows), then turned into each port
// side's target (ports/port_mirror.h).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "dataplane/ports/port_mirror.h"
#include "dataplane/switch/switch_config.h"

namespace rs {

// What is wrong with session `session`'s `field` ("dst_port", "rx_ports[1]", "truncate").
struct MirrorProblem {
  std::size_t session = 0;
  std::string field, reason;
};
// Copies are lossy: a session's queue is one no lossless priority maps to.
std::optional<MirrorProblem> check_mirror_sessions(const std::vector<MirrorSessionSpec>& sessions, std::size_t num_ports,
                                                   const MmuConfig& mmu);

// Sets every port side's target from checked sessions (none for ports no session watches).
void apply_mirror_sessions(PortMirror& mirror, const std::vector<MirrorSessionSpec>& sessions, std::size_t num_ports);

}  // namespace rs
