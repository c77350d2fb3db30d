// The classify step (P4 tables dscp_to_tc, pcp_to_tc, tc_to_queue): trust DSCP (default) or the
// VLAN PCP of tagged frames; CNPs may be steered to a queue of their own. Reads meta flags,
// pcp, dscp; writes meta tc, queue. One inline body, used by the l3_input stage.
#pragma once
#include <array>
#include <cstddef>

#include "dataplane/core/packet_meta.h"
#include "dataplane/tables/qos_maps.h"

namespace rs {

// The three maps composed once at start-up into one (tc, queue) pair per DSCP and per PCP, so
// classifying a packet is one 16-bit load and one 16-bit store.
class TcQueueMap {
 public:
  explicit TcQueueMap(const QosMaps& maps);

  struct TcQueue {
    uint8_t tc, queue;
  };
  // What apply() reports, for the callers' tallies.
  static constexpr unsigned kByPcp = 1, kCnpSteered = 2;
  // The traffic class and queue of a packet with these metadata fields; `report` gets the bits.
  [[gnu::always_inline]] TcQueue classify(uint8_t flags, uint8_t pcp, uint8_t dscp, unsigned& report) const {
    // PCP trust only applies to tagged frames; untagged ones fall back to DSCP.
    const bool by_pcp = (flags & pcp_flag_) != 0;
    report = by_pcp ? kByPcp : 0;
    TcQueue tq = by_pcp ? pcp_pair_[pcp & 7] : dscp_pair_[dscp & 63];
    // CNPs carry the congestion signal back to the sender: they skip the data queues (whose
    // depth is the congestion being reported) for a strict queue, whatever their DSCP says.
    if ((flags & meta_flag::kCnp) && maps_.cnp_queue >= 0) [[unlikely]] {
      tq.queue = static_cast<uint8_t>(maps_.cnp_queue);
      report |= kCnpSteered;
    }
    return tq;
  }
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

  QosMaps maps_;
  uint8_t pcp_flag_;  // meta_flag::kVlan under PCP trust, else 0
  std::array<TcQueue, 64> dscp_pair_{};
  std::array<TcQueue, 8> pcp_pair_{};
};

}  // namespace rs
