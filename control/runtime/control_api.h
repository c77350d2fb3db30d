// The control protocol: newline-delimited JSON, one object a request and one a response, which
// carries the request's id.
//   {"id": 7, "op": "route.add", "prefix": "10.1.0.0/16", "group": "spine"}
//   {"id": 8, "ops": [{"op": "group.add", ...}, {"op": "route.add", ...}]}      one transaction
//   -> {"id": 7, "ok": true, "result": {...}}
//   -> {"id": 8, "ok": false, "error": {"index": 1, "field": "ops[1].group", "reason": "no group 'x'"}}
// A transaction applies entirely or not at all, and becomes visible to the workers at once.
// Values are checked by the same readers as the YAML configuration, so a field means the same
// in a request as in a config file. `help` lists every operation.
#pragma once
#include <nlohmann/json.hpp>

#include <functional>
#include <string>
#include <string_view>

#include "control/p4/bmv2_cli.h"
#include "control/runtime/running_state.h"

namespace rs {

class ControlApi {
 public:
  // `wait` runs while a commit waits for the workers to leave the spare route bank (a stepped
  // test polls its workers there; the program pauses). `counters` answers `counters` with the
  // program's stats (app/stats_json), given an object name or "" for all.
  using CountersFn = std::function<nlohmann::json(const std::string& object)>;
  ControlApi(RunningState& state, std::function<void()> wait, CountersFn counters = {});

  // Captures (`capture.*`), served when the program gives them (null: none).
  void set_captures(class Captures* c) { captures_ = c; }
  // The neighbour table (`neighbour.list`), when the switch has addresses (null: none).
  void set_local(class LocalAgent* a) { local_ = a; }

  nlohmann::json handle(const nlohmann::json& request);
  // One request line in, one response line out (no newline); never throws: invalid JSON gets
  // an error response with id null.
  std::string handle_line(std::string_view line);

  // FNV-1a of the canonical `config dump`: equal states, equal hashes.
  uint64_t state_hash() const;

 private:
  nlohmann::json read(const std::string& op, const nlohmann::json& args);
  void write(std::size_t index, const std::string& op, const nlohmann::json& args);
  bool simple_route(std::size_t index, const std::string& op, const nlohmann::json& args);

  RunningState& state_;
  std::function<void()> wait_;
  CountersFn counters_;
  Bmv2Cli p4_;                        // its handles live as long as the switch
  std::vector<std::string> output_;   // what the BMv2 commands of a request printed
  class Captures* captures_ = nullptr;
  class LocalAgent* local_ = nullptr;
};

}  // namespace rs
