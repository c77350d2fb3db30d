// nexthop_select: the member choice of groups whose routing policy is more than the
// redirection table (P4 nexthop_selector, with the policy as its selection
// algorithm). The one place a routing policy is called: once per policy instance (group and
// class) present in the burst, with its packets in arrival order, so stateful policies
// (flowlets, last-best member) see each flow's packets as they came. The policy sees only the
// members whose port is up; a group with none drops its packets (no_live_member).
// The calls need the whole burst, so they are the stage's prepare(); its step then takes each
// packet's answer, which lets the nexthop_forward chain run rewrite_enqueue in the same pass.
// Reads meta group (and whatever the policy reads); writes meta nexthop, out_port.
#pragma once
#include "dataplane/core/step_stage.h"

namespace rs {

class NexthopSelect final : public StepStage<NexthopSelect> {
 public:
  static constexpr std::string_view kName = "nexthop_select";
  enum Next : uint8_t { Rewrite };
  static constexpr std::array<std::string_view, 1> kNext = {"rewrite"};
  static constexpr uint8_t kChainEdge = Rewrite;
  enum Ctr : uint8_t { Selected, BadNexthop, NoLiveMember, PolicyCalls };
  static constexpr std::array<std::string_view, 4> kCounters = {"selected", "bad_nexthop", "no_live_member", "policy_calls"};

  explicit NexthopSelect(const StageEnv&) {}

  struct Pass {
    uint16_t at = 0;  // the packet the next step() is for
    uint32_t bad = 0, dead = 0, calls = 0;
    uint8_t edge[kBurst];
  };
  Pass begin(const WorkerContext&) const { return {}; }
  // Asks each policy present for its packets' members; writes their metadata and edges.
  void prepare(const Burst& in, WorkerContext& ctx, Pass& t) const;
  template <bool kTrace>
  [[gnu::always_inline]] uint8_t step(rte_mbuf*, PacketMeta& pm, WorkerContext& ctx, Pass& t) const {
    const uint8_t e = t.edge[t.at++];
    if constexpr (kTrace) ctx.trace(pm, e, pm.group, e == Rewrite ? pm.nexthop : UINT64_MAX);
    return e;
  }
  void publish_tally(const Pass& t, uint16_t n, Counter* ctr) const {
    const uint32_t v[kCounters.size()] = {n - t.bad - t.dead, t.bad, t.dead, t.calls};
    add_tallies(ctr, v);
  }
  static uint8_t whole(const Pass& t, uint16_t) { return t.bad + t.dead == 0 ? uint8_t{Rewrite} : kNextMixed; }
  std::string format_trace(const TraceRecord& r) const override;
};

}  // namespace rs
