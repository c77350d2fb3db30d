// roceswitch on a fabric file (docs/fabric.md): every switch and cable built from the file, run
// on the virtual clock on the main lcore until the file's (or --duration's) virtual time, with a
// progress line a second (virtual time reached, how much slower than real time) and, at the end,
// a summary table per switch and per cable and the stats file: {fabric: {virtual_s, real_s,
// slowdown, steps, jumps, totals}, switches: [{name, ...a switch's stats}], cables: [...]}.
#pragma once
#include <string>
#include <vector>

#include "control/fabric/fabric_config.h"

namespace rs {

struct FabricRunOptions {
  std::vector<std::string> eal_user;  // the EAL options as given
  double duration_s = -1;             // -1: the file's
  std::string stats_json;
  bool quiet = false;
};

// Exit status: 0 ok, 1 the fabric could not start or the books did not balance.
int run_fabric(const FabricRunSpec& spec, const FabricRunOptions& o);

}  // namespace rs
