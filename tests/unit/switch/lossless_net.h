// The lossless whole-switch tests' shared topology and counters: host h at 10.0.h.2 behind port
// h with priority 3 lossless on every port (one PG profile), and the drop, stage and PFC counter
// reads the lossless_{pfc_ecn,incast_pfcwd} tests check.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "app/stats_json.h"
#include "dataplane/emu/emulated_host.h"
#include "dataplane/switch/switch.h"
#include "tests/support/constants.h"
#include "tests/support/host_net.h"

namespace rs::test {

inline constexpr uint8_t kLossless = kRoceQueue;  // DSCP 26 -> TC 3 -> queue 3 -> PG 3
inline constexpr uint8_t kLossyDscp = 0;  // SONiC default map: TC 1, queue 1
inline constexpr uint8_t kLossyQueue = 1;

// Host h at 10.0.h.2 behind port h; priority 3 lossless on every port with the same PG profile.
struct Net {
  SwitchConfig cfg;
  PgSettings pg{.lossless = true, .xoff = 20 * kCells, .xon = 10 * kCells, .headroom = 12 * kCells};

  Net() {
    cfg.workers = 1;
    cfg.seed = 7;
    cfg.qos.dscp_to_tc[kRoceDscp] = kLossless;
    cfg.mmu.pfc_enable = 1u << kLossless;
  }
  uint8_t add_host(double gbps) {
    add_host_port(cfg, gbps, {.packets = 512, .bytes = 256u << 10}).lossless.pg[kLossless] = pg;
    return static_cast<uint8_t>(cfg.ports.size() - 1);
  }
  HostFlowSpec& add_flow(uint8_t from, uint8_t to, double gbps, uint32_t qp, uint8_t dscp = kRoceDscp) {
    return add_host_flow(cfg, from, to, gbps, qp, kPayload, dscp);
  }
  void set_pg(const PgSettings& s) {
    pg = s;
    for (auto& p : cfg.ports) p.lossless.pg[kLossless] = s;
  }
};

// The host behind port p, under its fault model if it has one.
inline EmulatedHost& host(Switch& sw, std::size_t p) {
  Port* q = &sw.port(p);
  if (auto* f = dynamic_cast<FaultPort*>(q)) q = &f->inner();
  return dynamic_cast<EmulatedHost&>(*q);
}
inline uint64_t qdrops(const Switch& sw, std::size_t port, int q, DropReason r) {
  return sw.egress(port).queue(q).drops[static_cast<std::size_t>(r)].get();
}
inline uint64_t qdrops_all(const Switch& sw, std::size_t port, int q) {
  uint64_t s = 0;
  for (std::size_t r = 1; r < kNumDropReasons; ++r) s += sw.egress(port).queue(q).drops[r].get();
  return s;
}
inline uint64_t stage_counter(const Switch& sw, const std::string& node, const std::string& name) {
  const nlohmann::json j = stats_json(sw);  // iterate a named value, not a temporary's member
  for (auto& st : j["stages"])
    if (st["node"] == node) return st["counters"][name].get<uint64_t>();
  return 0;
}
inline uint64_t pfc_frames_sent(const Switch& sw) {
  uint64_t s = 0;
  for (std::size_t p = 0; p < sw.num_ports(); ++p) s += sw.egress(p).pfc_gen().counters().frames.get();
  return s;
}

}  // namespace rs::test
