// A stepped switch with its control plane, as the control tests drive it: the running state,
// the JSON protocol (its commits step the workers while they wait), and captures.
#pragma once
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "control/runtime/captures.h"
#include "control/runtime/control_api.h"
#include "dataplane/emu/emulated_host.h"
#include "tests/support/host_net.h"

namespace rs::test {

// Hosts h0..h3 (10.0.h.2 behind port h, groups to_h0..to_h3, routes 10.0.h.0/24), no traffic.
inline SwitchConfig four_hosts() {
  SwitchConfig cfg;
  for (int h = 0; h < 4; ++h) add_host_port(cfg, 10, QueueLimits{});
  return cfg;
}

struct ControlRig {
  explicit ControlRig(SwitchConfig cfg)
      : sw(cfg, kT0), state(sw), api(state, [this] { step(); }), caps(sw, [this] { return now; }) {
    api.set_captures(&caps);
  }
  void step() {
    sw.poll_all(now);
    caps.poll();
    now += kUs;
  }
  void run(uint64_t ns) {
    for (const uint64_t end = now + ns; now < end;) step();
  }
  nlohmann::json call(const nlohmann::json& req) { return api.handle(req); }
  // A request that must succeed: its result.
  nlohmann::json ok(const nlohmann::json& req) {
    nlohmann::json r = api.handle(req);
    EXPECT_TRUE(r["ok"].get<bool>()) << req.dump() << " -> " << r.dump();
    return r["result"];
  }
  // A BMv2 command file, one request.
  nlohmann::json cli(const std::string& script) {
    nlohmann::json lines = nlohmann::json::array();
    std::istringstream in(script);
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    return api.handle({{"id", 1}, {"op", "p4.cli"}, {"lines", lines}});
  }
  EmulatedHost& host(std::size_t p) { return dynamic_cast<EmulatedHost&>(sw.port(p)); }
  // Packets host `at` received from host `from` on queue pair `qp`.
  uint64_t rx(std::size_t at, uint8_t from, uint32_t qp) {
    RxFlowStats s;
    return host(at).rx_tracker().find(host_ip(from), qp, s) ? s.packets : 0;
  }

  uint64_t now = kT0;
  Switch sw;
  RunningState state;
  ControlApi api;
  Captures caps;
};

}  // namespace rs::test
