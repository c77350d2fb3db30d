// P4 egress port_mac + rewrite: next-hop DMAC, egress port SMAC, TTL / hop-limit decrement with
// an incremental IPv4 checksum. Touches only fields the RoCE ICRC masks (MACs are outside the
// ICRC; TTL and checksum are masked), so the ICRC stays valid.
// Reads meta nexthop, out_port, l3, l3_offset.
#pragma once
#include "dataplane/core/stage.h"

namespace rs {

class EgressRewrite final : public StageBase<EgressRewrite> {
 public:
  static constexpr std::string_view kName = "egress_rewrite";
  enum Next : uint8_t { Enqueue };
  static constexpr std::array<std::string_view, 1> kNext = {"enqueue"};
  enum Ctr : uint8_t { Ipv4, Ipv6 };
  static constexpr std::array<std::string_view, 2> kCounters = {"ipv4", "ipv6"};

  explicit EgressRewrite(const StageEnv&) {}
  void process(Burst& in, uint8_t* next, WorkerContext& ctx) override;
};

}  // namespace rs
