// P4 tables ecmp_group / ecmp_member: the group's routing policy picks a next hop.
// Reads meta group, flow_hash (and whatever the policy reads); writes meta nexthop, out_port.
#pragma once
#include "dataplane/core/stage.h"

namespace rs {

class NexthopGroup final : public StageBase<NexthopGroup> {
 public:
  static constexpr std::string_view kName = "nexthop_group";
  enum Next : uint8_t { Rewrite };
  static constexpr std::array<std::string_view, 1> kNext = {"rewrite"};
  enum Ctr : uint8_t { Selected, BadNexthop };
  static constexpr std::array<std::string_view, 2> kCounters = {"selected", "bad_nexthop"};

  explicit NexthopGroup(const StageEnv&) {}
  void process(Burst& in, uint8_t* next, WorkerContext& ctx) override;
};

}  // namespace rs
