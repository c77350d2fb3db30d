// Every drop has one named reason, declared once here; stats, traces and the invariant
// "received = sent + queued + dropped" all read this table. A frame the switch itself was the
// destination of (an ARP request it answered, a ping, a PAUSE frame) ends here too, under the
// reason that says so (local_delivered, mac_control_consumed).
#pragma once
#include <array>
#include <cstdint>
#include <string_view>

namespace rs {

#define RS_DROP_REASONS(X)                                                   \
  X(None, "none")                                                            \
  X(MalformedEth, "malformed_eth")                                           \
  X(MalformedVlan, "malformed_vlan")                                         \
  X(StackedVlan, "stacked_vlan")                                             \
  X(MalformedIpv4, "malformed_ipv4")                                         \
  X(BadIpv4Ihl, "bad_ipv4_ihl")                                              \
  X(BadIpv4Length, "bad_ipv4_length")                                        \
  X(BadIpv4Checksum, "bad_ipv4_checksum")                                    \
  X(MalformedIpv6, "malformed_ipv6")                                         \
  X(BadIpv6Length, "bad_ipv6_length")                                        \
  X(MalformedUdp, "malformed_udp")                                           \
  X(MalformedBth, "malformed_bth")                                           \
  X(NonIp, "non_ip")                                                         \
  X(MacControl, "mac_control_consumed")                                      \
  X(MalformedMacControl, "malformed_mac_control")                            \
  X(NoRoute, "no_route")                                                     \
  X(TtlExpired, "ttl_expired")                                               \
  X(BadNextHop, "bad_next_hop")                                              \
  X(NoLiveMember, "no_live_member")                                          \
  X(LinkDown, "link_down")                                                   \
  X(TailDropPackets, "tail_drop_packets")                                    \
  X(TailDropBytes, "tail_drop_bytes")                                        \
  X(DynamicThreshold, "dynamic_threshold")                                   \
  X(SharedPoolFull, "shared_pool_full")                                      \
  X(HeadroomExhausted, "lossless_headroom_exhausted")                        \
  X(WredDrop, "wred_drop")                                                   \
  X(PfcWatchdog, "pfc_watchdog")                                             \
  X(HandoffFull, "handoff_ring_full")                                        \
  X(TxFull, "tx_full")                                                       \
  X(Shutdown, "shutdown_flush")                                             \
  X(LocalDelivered, "local_delivered")                                       \
  X(PuntPoliced, "punt_policed")                                             \
  X(PuntQueueFull, "punt_queue_full")                                        \
  X(MalformedArp, "malformed_arp")                                           \
  X(MalformedNd, "malformed_nd")                                             \
  X(MalformedLldp, "malformed_lldp")                                         \
  X(NeighborHoldFull, "neighbor_hold_full")                                  \
  X(NeighborFailed, "neighbor_failed")                                       \
  X(LocalTxFull, "local_tx_full")                                           \
  X(VlanNotMember, "vlan_not_member")                                        \
  X(BridgeFiltered, "bridge_filtered")                                       \
  X(BridgeStorm, "bridge_storm")

enum class DropReason : uint8_t {
#define RS_X(id, name) id,
  RS_DROP_REASONS(RS_X)
#undef RS_X
      Count
};

inline constexpr std::size_t kNumDropReasons = static_cast<std::size_t>(DropReason::Count);

inline constexpr std::array<std::string_view, kNumDropReasons> kDropReasonNames = {
#define RS_X(id, name) name,
    RS_DROP_REASONS(RS_X)
#undef RS_X
};

constexpr std::string_view drop_reason_name(DropReason r) {
  return kDropReasonNames[static_cast<std::size_t>(r)];
}

// The reasons the pipeline drops a frame for (kNextDrop) before it has a traffic class: the
// parse's (l3_input classifies only what it does not refuse: a refused frame's tc is the
// parse's zero, not a class), MAC control's (a PAUSE or PFC frame is for the port) and non_ip
// (a frame for the router that is not IP). Any other pipeline drop is of a frame l3_input
// passed, which has a class: an IP packet's from its DSCP or PCP, any other frame's 0 (the
// class the buffer charges a bridged one to).
static_assert(kNumDropReasons <= 64);
inline constexpr uint64_t kDropsBeforeClass = [] {
  uint64_t m = 0;
  for (DropReason r : {DropReason::MalformedEth, DropReason::MalformedVlan, DropReason::StackedVlan, DropReason::MalformedIpv4,
                       DropReason::BadIpv4Ihl, DropReason::BadIpv4Length, DropReason::BadIpv4Checksum,
                       DropReason::MalformedIpv6, DropReason::BadIpv6Length, DropReason::MalformedUdp,
                       DropReason::MalformedBth, DropReason::NonIp, DropReason::MacControl,
                       DropReason::MalformedMacControl})
    m |= uint64_t{1} << static_cast<unsigned>(r);
  return m;
}();
constexpr bool drop_before_class(DropReason r) { return (kDropsBeforeClass >> static_cast<unsigned>(r)) & 1; }

}  // namespace rs
