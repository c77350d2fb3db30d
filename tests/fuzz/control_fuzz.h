// The control-plane fuzz targets' switch: four emulated hosts with routes and traffic, stepped
// with an injected clock, behind the JSON protocol (no captures: a fuzzed request must never
// write a file). handle() sends one request line and checks what must always hold:
//   - the response is one JSON object with the request's id (or null) and ok true or false;
//   - a refused request changes nothing (the state hash is the one before);
//   - the switch keeps its books while it runs on.
// A request that changed the state rebuilds the switch, so inputs do not pile up state.
#pragma once
#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "control/runtime/control_api.h"
#include "tests/support/eal_env.h"
#include "tests/support/host_net.h"

namespace rs::fuzz {

class ControlFuzz {
 public:
  ControlFuzz() {
    test::init_test_eal();
    build();
  }

  void handle(const std::string& line) {
    const uint64_t before = api_->state_hash();
    const std::string out = api_->handle_line(line);
    nlohmann::json r;
    try {
      r = nlohmann::json::parse(out);
    } catch (const std::exception&) {
      fail("the response is not JSON: " + out);
    }
    if (!r.is_object() || !r.contains("id") || !r.contains("ok") || !r["ok"].is_boolean()) fail("malformed response: " + out);
    const bool changed = api_->state_hash() != before;
    if (!r["ok"].get<bool>() && changed) fail("a refused request changed the state: " + out);
    for (int i = 0; i < 3; ++i) step();
    const SwitchTotals t = sw_->totals();
    if (!t.balanced()) fail("the books do not balance");
    if (changed) build();
  }

 private:
  [[noreturn]] static void fail(const std::string& what) {
    std::fprintf(stderr, "control fuzz: %s\n", what.c_str());
    std::abort();
  }
  void step() {
    sw_->poll_all(now_);
    sw_->reclaim();
    now_ += 1000;
  }
  void build() {
    api_.reset();
    state_.reset();
    sw_.reset();
    SwitchConfig cfg;
    cfg.mbufs = 4096;
    for (int h = 0; h < 4; ++h) test::add_host_port(cfg, 10, QueueLimits{});
    test::add_host_flow(cfg, 0, 1, 1, 0x100, 512);
    test::add_host_flow(cfg, 2, 3, 1, 0x200, 512);
    cfg.mirror_sessions.push_back({.name = "span", .dst_port = 3, .truncate = 64, .rx_ports = {0}});
    // An address (so the switch has a path to its control plane) and a VLAN with no member (so
    // it has a bridge): what port.set and system.set change at run time can change here.
    InterfaceAddress a;
    a.addr = parse_ip("10.99.0.1").value();
    a.depth = 24;
    cfg.ports[3].addrs.push_back(a);
    cfg.vlans = {7};
    add_interface_routes(cfg);
    sw_ = std::make_unique<Switch>(cfg, now_);
    state_ = std::make_unique<RunningState>(*sw_);
    api_ = std::make_unique<ControlApi>(*state_, [this] { step(); });
  }

  uint64_t now_ = 1'000'000'000;
  std::unique_ptr<Switch> sw_;
  std::unique_ptr<RunningState> state_;
  std::unique_ptr<ControlApi> api_;
};

// The one switch of a target's process, built on the first input.
inline ControlFuzz& control_fuzz() {
  static ControlFuzz f;
  return f;
}

}  // namespace rs::fuzz
