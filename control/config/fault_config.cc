#include "control/config/fault_config.h"

#include <fmt/core.h>

namespace rs {

FaultSpec read_faults(const ConfigReader& rd, const YAML::Node& n, const std::string& path) {
  rd.keys(n, path, {"direction", "drop", "corrupt", "corrupt_offset", "duplicate", "delay_us", "jitter_us", "stuck"});
  FaultSpec f;
  if (auto x = n["direction"]) {
    const std::string d = rd.str(x, path + ".direction");
    if (d == "rx") f.direction = FaultSpec::kRx;
    else if (d == "tx") f.direction = FaultSpec::kTx;
    else if (d == "both") f.direction = FaultSpec::kRx | FaultSpec::kTx;
    else rd.fail(x, path + ".direction", "expected 'rx', 'tx' or 'both'");
  }
  if (auto x = n["drop"]) f.drop = rd.real(x, path + ".drop", 0, 1);
  if (auto x = n["corrupt"]) f.corrupt = rd.real(x, path + ".corrupt", 0, 1);
  if (auto x = n["corrupt_offset"]) f.corrupt_offset = static_cast<int32_t>(rd.integer(x, path + ".corrupt_offset", 0, 16383));
  if (auto x = n["duplicate"]) f.duplicate = rd.real(x, path + ".duplicate", 0, 1);
  if (auto x = n["delay_us"]) f.delay_ns = rd.nanoseconds(x, path + ".delay_us", 0, 1e6, 1e3);
  if (auto x = n["jitter_us"]) f.jitter_ns = rd.nanoseconds(x, path + ".jitter_us", 0, 1e6, 1e3);
  if (auto st = n["stuck"]) {
    const std::string sp = path + ".stuck";
    rd.keys(st, sp, {"start_s", "stop_s", "pfc", "quanta"});
    f.stuck_start_ns = st["start_s"] ? rd.nanoseconds(st["start_s"], sp + ".start_s", 0, 1e6, 1e9) : 0;
    if (auto x = st["stop_s"]) {
      f.stuck_stop_ns = rd.nanoseconds(x, sp + ".stop_s", 0, 1e6, 1e9);
      if (f.stuck_stop_ns <= f.stuck_start_ns) rd.fail(x, sp + ".stop_s", "must be after start_s");
    }
    if (auto x = st["pfc"]) {
      rd.seq(x, sp + ".pfc");
      for (std::size_t i = 0; i < x.size(); ++i)
        f.stuck_pfc |= static_cast<uint8_t>(1u << rd.integer(x[i], fmt::format("{}.pfc[{}]", sp, i), 0, 7));
    }
    if (auto x = st["quanta"]) f.stuck_quanta = static_cast<uint16_t>(rd.integer(x, sp + ".quanta", 1, 0xFFFF));
  }
  return f;
}

}  // namespace rs
