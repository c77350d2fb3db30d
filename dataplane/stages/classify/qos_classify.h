// P4 tables dscp_to_tc / pcp_to_tc / tc_to_queue: trust DSCP (default) or the VLAN PCP.
// Reads meta dscp, pcp, l3; writes meta tc, queue. Splits IPv4 from IPv6 for the LPM stages.
#pragma once
#include <cstddef>

#include "dataplane/core/stage.h"
#include "dataplane/tables/qos_maps.h"

namespace rs {

// The three maps composed once at start-up into one (tc, queue) pair per DSCP and per PCP, so
// classifying a packet is one 16-bit load and one 16-bit store. Shared by qos_classify and
// the ipv4_fastpath stage.
class TcQueueMap {
 public:
  explicit TcQueueMap(const QosMaps& maps);

  struct TcQueue {
    uint8_t tc, queue;
  };
  // What apply() reports, for the callers' tallies.
  static constexpr unsigned kByPcp = 1, kCnpSteered = 2;
  // The traffic class and queue of a packet with these metadata fields; `report` gets apply()'s
  // bits. For a caller that has the fields in registers before it writes any metadata.
  [[gnu::always_inline]] TcQueue classify(uint8_t flags, uint8_t pcp, uint8_t dscp, unsigned& report) const {
    // PCP trust only applies to tagged frames; untagged ones fall back to DSCP.
    const bool by_pcp = (flags & pcp_flag_) != 0;
    report = by_pcp ? kByPcp : 0;
    return steer_cnp(flags, by_pcp ? pcp_pair_[pcp] : dscp_pair_[dscp], report);  // the parser keeps pcp < 8, dscp < 64
  }
  // classify() for an untagged frame, which PCP trust never applies to (one test less).
  [[gnu::always_inline]] TcQueue classify_untagged(uint8_t flags, uint8_t dscp, unsigned& report) const {
    report = 0;
    return steer_cnp(flags, dscp_pair_[dscp], report);
  }
  // The queue alone of an untagged frame that is not a CNP, by its TOS byte as the frame holds
  // it (DSCP and ECN): one load, every entry < 8. For a caller that needs no TC (the fast
  // path's lossy local loop: 2 instructions a packet fewer than the DSCP pair and a mask).
  uint8_t queue_of_tos(uint8_t tos) const { return tos_queue_[tos]; }
  // Where CNPs are steered (-1: not steered).
  int cnp_queue() const { return maps_.cnp_queue; }
  [[gnu::always_inline]] unsigned apply(PacketMeta& pm) const {
    unsigned report;
    const TcQueue tq = classify(pm.flags, pm.pcp, pm.dscp, report);
    __builtin_memcpy(&pm.tc, &tq, sizeof(tq));
    return report;
  }

 private:
  // tc and queue are adjacent in PacketMeta: one pair is one 16-bit store.
  static_assert(offsetof(PacketMeta, queue) == offsetof(PacketMeta, tc) + 1);
  TcQueue pair_of(uint8_t tc) const;
  // CNPs carry the congestion signal back to the sender: they skip the data queues (whose
  // depth is the congestion being reported) for a strict queue, whatever their DSCP says.
  [[gnu::always_inline]] TcQueue steer_cnp(uint8_t flags, TcQueue tq, unsigned& report) const {
    if ((flags & meta_flag::kCnp) && maps_.cnp_queue >= 0) [[unlikely]] {
      tq.queue = static_cast<uint8_t>(maps_.cnp_queue);
      report |= kCnpSteered;
    }
    return tq;
  }

  QosMaps maps_;
  uint8_t pcp_flag_;  // meta_flag::kVlan under PCP trust, else 0
  std::array<TcQueue, 64> dscp_pair_{};
  std::array<TcQueue, 8> pcp_pair_{};
  std::array<uint8_t, 256> tos_queue_{};  // dscp_pair_[tos >> 2].queue, kept below 8
};

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
  TcQueueMap map_;
};

}  // namespace rs
