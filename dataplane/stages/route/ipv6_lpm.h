// P4 table ipv6_lpm: longest-prefix match on the destination (rte_lpm6) to a next-hop group.
// Reads meta l3_offset; writes meta group. Hop limit is checked here.
#pragma once
#include "dataplane/core/stage.h"

namespace rs {

class Ipv6Lpm final : public StageBase<Ipv6Lpm> {
 public:
  static constexpr std::string_view kName = "ipv6_lpm";
  enum Next : uint8_t { Group };
  static constexpr std::array<std::string_view, 1> kNext = {"group"};
  enum Ctr : uint8_t { Hit, Miss, HopLimitExpired };
  static constexpr std::array<std::string_view, 3> kCounters = {"hit", "miss", "hop_limit_expired"};

  explicit Ipv6Lpm(const StageEnv&) {}
  void process(Burst& in, uint8_t* next, WorkerContext& ctx) override;
};

}  // namespace rs
