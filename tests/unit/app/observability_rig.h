// The switch the observability tests look at, and the main loop they play: four emulated hosts
// on a stepped switch (tests/support/host_net.h), stepped by the test's own (main) thread.
// Shared by prometheus_test, metrics_http_test and telemetry_test.
#pragma once
#include <chrono>
#include <cstdint>
#include <future>
#include <thread>

#include "app/observability.h"
#include "tests/support/host_net.h"

namespace rs::test {

inline constexpr uint32_t kQpA = 0x100, kQpB = 0x200, kQpC = 0x300;
inline constexpr const char* kWeird = "we\"ird\\port";  // a port name that needs escaping

// h0..h3, h3 named with a quote and a backslash; h1 and h2 send RoCE to h0 (incast on queue 3,
// lossless priority 3), h1 also sends to 10.0.9.2 through the two-member group "spine" (h2, h3).
inline SwitchConfig rig_config() {
  SwitchConfig cfg;
  for (int h = 0; h < 4; ++h) add_host_port(cfg, 10, QueueLimits{});
  cfg.ports[3].name = kWeird;
  cfg.qos.dscp_to_tc[kRoceDscp] = kRoceQueue;  // RoCE on TC 3 -> queue 3, PG 3
  cfg.mmu.pfc_enable = 1u << kRoceQueue;  // priority 3 lossless: the incast sends PFC to h1 and h2
  for (PortSpec& p : cfg.ports) p.lossless.pg[kRoceQueue] = {.lossless = true, .xoff = 50'000, .xon = 25'600, .headroom = 14'000};
  add_host_flow(cfg, 1, 0, 6, kQpA, 1024);
  add_host_flow(cfg, 2, 0, 6, kQpB, 1024);
  add_host_flow(cfg, 1, 0, 1, kQpC, 1024).dst_ip = rte_cpu_to_be_32(RTE_IPV4(10, 0, 9, 2));
  GroupSpec g;
  g.name = "spine";
  g.members.push_back({.port = 2, .mac = mac_of(2, false), .weight = 1});
  g.members.push_back({.port = 3, .mac = mac_of(3, false), .weight = 1});
  add_group_route(cfg, g, "10.0.9.0/24");
  return cfg;
}

struct Rig {
  Rig() : sw(rig_config(), kT0) {}
  void step() {
    sw.poll_all(now);
    now += kUs;
  }
  void run(uint64_t ns) {
    for (const uint64_t end = now + ns; now < end;) step();
  }
  uint64_t now = kT0;
  Switch sw;
};

// Runs `f` on another thread while this one plays the main loop: serves the mailbox and steps
// the switch (traffic keeps flowing), as roceswitch's main loop does.
template <typename F>
auto serving(Observability& obs, Rig* rig, F f) {
  using namespace std::chrono_literals;
  auto fut = std::async(std::launch::async, f);
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (fut.wait_for(0ms) != std::future_status::ready && std::chrono::steady_clock::now() < deadline) {
    obs.serve_pending();
    if (rig) rig->run(20 * kUs);
    std::this_thread::sleep_for(200us);
  }
  return fut.get();
}

}  // namespace rs::test
