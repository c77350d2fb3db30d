// P4 table ipv4_lpm: longest-prefix match on the destination (rte_lpm) to a next-hop group.
// Reads meta l3_offset; writes meta group. TTL is checked here, before any work is spent.
#pragma once
#include "dataplane/core/stage.h"

namespace rs {

class Ipv4Lpm final : public StageBase<Ipv4Lpm> {
 public:
  static constexpr std::string_view kName = "ipv4_lpm";
  enum Next : uint8_t { Group };
  static constexpr std::array<std::string_view, 1> kNext = {"group"};
  enum Ctr : uint8_t { Hit, Miss, TtlExpired };
  static constexpr std::array<std::string_view, 3> kCounters = {"hit", "miss", "ttl_expired"};

  explicit Ipv4Lpm(const StageEnv&) {}
  void process(Burst& in, uint8_t* next, WorkerContext& ctx) override;
};

}  // namespace rs
