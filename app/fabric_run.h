// roceswitch on a fabric file (docs/fabric.md): every switch and cable built from the file, run
// on the virtual clock on the main lcore until the file's (or --duration's) virtual time, with a
// progress line a second (virtual time reached, how much slower than real time) and, at the end,
// a summary table per switch and per cable, the scale and speed line (switches=... slowdown=...)
// and the stats file: {fabric: {switches, hosts, links, virtual_s, frames, steps, jumps,
// wall: {real_s, slowdown, frames_per_wall_s}, totals}, switches: [{name, ...a switch's
// stats}], cables: [...]}.
#pragma once
#include <string>
#include <vector>

#include "control/fabric/fabric_config.h"

namespace rs {

struct FabricRunOptions {
  std::vector<std::string> eal_user;  // the EAL options as given
  double duration_s = -1;             // -1: the file's
  std::string stats_json;
  // A sample of every switch (series_sample) each `series_ms` of virtual time: one JSON object
  // a line, {t_s, switches: [{name, ...}]}, the same on every run.
  std::string series;
  double series_ms = 0;
  bool quiet = false;
};

// Exit status: 0 ok, 1 the fabric could not start or the books did not balance.
int run_fabric(const FabricRunSpec& spec, const FabricRunOptions& o);

}  // namespace rs
