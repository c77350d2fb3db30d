// nexthop_select: the member choice of groups whose routing policy is more than the
// redirection table (P4 nexthop_selector, with the policy as its selection
// algorithm). The one place a routing policy is called: once per policy instance (group and
// class) present in the burst, with its packets in arrival order, so stateful policies
// (flowlets, last-best member) see each flow's packets as they came. The policy sees only the
// members whose port is up; a group with none drops its packets (no_live_member).
// Reads meta group (and whatever the policy reads); writes meta nexthop, out_port.
#pragma once
#include "dataplane/core/stage.h"

namespace rs {

class NexthopSelect final : public StageBase<NexthopSelect> {
 public:
  static constexpr std::string_view kName = "nexthop_select";
  enum Next : uint8_t { Rewrite };
  static constexpr std::array<std::string_view, 1> kNext = {"rewrite"};
  enum Ctr : uint8_t { Selected, BadNexthop, NoLiveMember, PolicyCalls };
  static constexpr std::array<std::string_view, 4> kCounters = {"selected", "bad_nexthop", "no_live_member", "policy_calls"};

  explicit NexthopSelect(const StageEnv&) {}
  uint8_t process(Burst& in, uint8_t* next, WorkerContext& ctx) override;
  std::string format_trace(const TraceRecord& r) const override;
};

}  // namespace rs
