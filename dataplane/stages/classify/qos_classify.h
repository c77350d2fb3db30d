// P4 tables dscp_to_tc / pcp_to_tc / tc_to_queue: trust DSCP (default) or the VLAN PCP.
// Reads meta dscp, pcp, l3; writes meta tc, queue. Splits IPv4 from IPv6 for the LPM stages.
#pragma once
#include "dataplane/core/stage.h"
#include "dataplane/tables/qos_maps.h"

namespace rs {

class QosClassify final : public StageBase<QosClassify> {
 public:
  static constexpr std::string_view kName = "qos_classify";
  enum Next : uint8_t { Ipv4, Ipv6 };
  static constexpr std::array<std::string_view, 2> kNext = {"ipv4", "ipv6"};
  enum Ctr : uint8_t { ByDscp, ByPcp, Cnp };
  static constexpr std::array<std::string_view, 3> kCounters = {"by_dscp", "by_pcp", "cnp_to_queue"};

  explicit QosClassify(const StageEnv& env);
  void process(Burst& in, uint8_t* next, WorkerContext& ctx) override;

 private:
  struct TcQueue {
    uint8_t tc, queue;
  };
  TcQueue pair_of(uint8_t tc) const;

  QosMaps maps_;
  // dscp_to_tc / pcp_to_tc composed with tc_to_queue once at start-up.
  std::array<TcQueue, 64> dscp_pair_{};
  std::array<TcQueue, 8> pcp_pair_{};
};

}  // namespace rs
