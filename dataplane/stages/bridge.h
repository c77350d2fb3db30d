// bridge: L2 switching within 802.1Q VLANs, for the frames of ports that are VLAN members
// (l3_input's `bridge` edge, after the parse and the classification, so a bridged frame has its
// traffic class, queue, PFC and ECN as a routed one does). Per frame: its VLAN (the tag's, if
// the port carries it tagged, else the port's access VLAN; else vlan_not_member); its source
// MAC learned (the FDB, tables/fdb.h: new or moved sources reported to the control thread, known
// ones refreshed); its destination looked up: a known unicast MAC goes to its port (not back to
// the port it came from: bridge_filtered), anything else is flooded to the VLAN's other member
// ports whose link is up, within the ingress port's storm limit (bridge_storm). On the way out
// the tag is pushed or popped as the egress port carries the VLAN, and the frame is enqueued as
// rewrite_enqueue enqueues (stages/enqueue.h).
// A VLAN with a router interface (SVI) hands the router what is for it: a frame to the VLAN's
// router MAC leaves untagged on the `ipv4`, `ipv6` or (ARP) `local` edge, its VLAN in the
// metadata; a broadcast ARP or an IPv6 multicast frame is flooded and also goes to the router,
// as a Linux bridge's own port hears it. Every other frame is consumed.
#pragma once
#include <array>

#include "dataplane/core/gcra.h"
#include "dataplane/core/stage.h"
#include "dataplane/stages/enqueue.h"
#include "dataplane/tables/vlan_table.h"

namespace rs {

class Bridge final : public StageBase<Bridge> {
 public:
  static constexpr std::string_view kName = "bridge";
  enum Next : uint8_t { Ipv4, Ipv6, Local };
  static constexpr std::array<std::string_view, 3> kNext = {"ipv4", "ipv6", "local"};
  enum Ctr : uint8_t { Forwarded, Flooded, FloodCopies, LearnReports, LearnRingFull, TagPushed, TagPopped, NoMbuf, Routed };
  static constexpr std::array<std::string_view, 9> kCounters = {"forwarded",       "flooded",    "flood_copies", "learn_reports",
                                                                "learn_ring_full", "tag_pushed", "tag_popped",   "flood_no_mbuf",
                                                                "to_router"};

  explicit Bridge(const StageEnv& env);
  uint8_t process(Burst& in, uint8_t* next, WorkerContext& ctx) override;
  std::string format_trace(const TraceRecord& r) const override;

 private:
  // Sends `m` out of `port` in VLAN `vlan`, its tag made as the port carries the VLAN.
  void out(rte_mbuf* m, uint16_t port, uint16_t vlan, const EnqueueTables& q, WorkerContext& ctx,
           std::array<uint32_t, kCounters.size()>& tally) const;
  // The edge of a frame for the VLAN's router interface (its tag popped), or kNextDrop.
  static uint8_t to_router(rte_mbuf* m, PacketMeta& pm, uint16_t vlan, std::array<uint32_t, kCounters.size()>& tally);
  // The flood storm limit's state, a GCRA per ingress port (core/gcra.h; its rate is the
  // VlanTable's, as the refresh interval of a source's last-seen time).
  std::array<uint64_t, kMaxPorts> tat_{};
};

}  // namespace rs
