// An in-process RoCE host on a switch port: it sends RoCEv2 flows (valid ICRC, one QP each)
// at configured rates, limited by its own link, and counts and checks what the switch sends
// it: per received flow (source IP, destination QP) packets, payload bytes, and the PSN
// sequence's reordering and loss (rx_tracker.h has the definitions). No ethdev, no files: the
// embedded demo and the tests run on it. With a NIC (`host.nic`, `host.qps`) it also runs RC
// queue pairs with go-back-N and DCQCN (dataplane/nic/roce_nic.h): their frames go first, and
// the RoCE frames it receives are the NIC's.
//
// Receiver groups: hosts whose spec names the same `receiver` are one remote host reached over
// several links (a flow sprayed over 8 uplinks arrives on 8 ports and is reassembled there).
// They share one RxTracker, created by the group's first port (its leader) and handed to the
// others at construction. The tracker has one writer, so every port of a group must be polled
// by the same worker (the config loader pins them; Switch refuses a config that does not).
// Stats: the leader reports the group's rx_flows; the others report "rx_flows_in": the
// leader's port name instead, so no flow is counted twice. Every port keeps its own link-level
// counters (rx_packets, rx_bytes, rx_roce, ...).
//
// The host's cable (no propagation: it is short) delivers each frame when its last bit arrives,
// its serialisation at the link rate (wire_bytes()) after its first, as the fabric's cables do.
// To the host: on a virtual clock (`bucket_ns` set) the frames the switch hands to tx_burst go
// out one after the other (a burst its egress shaper let go at once arrives spread at the link
// rate); in real time each arrives its own serialisation after the handover, as the switch's
// shaper spaced them (its catch-up credit stands for wire time a descheduled worker missed, which
// a serialising cable would turn into standing delay). The host receives each frame (counters,
// tracker, NIC, MAC) on its first call, rx_burst or tx_burst, at or after its time. A PFC frame
// goes at the next frame boundary, ahead of data the switch handed over that has not started (a
// switch sends PFC ahead of its queues). To the switch: the host's link shaper decides when a
// frame starts, as before, and rx_burst gives it to the switch once its last bit is out. Frames
// keep their order both ways. tx_packets and tx_bytes count what has reached the switch.
#pragma once
#include <rte_mempool.h>

#include <cstdint>
#include <array>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "dataplane/core/counter.h"
#include "dataplane/emu/rx_tracker.h"
#include "dataplane/nic/roce_nic.h"
#include "dataplane/ports/port.h"
#include "dataplane/tm/queue/shaper.h"

namespace rs {

struct HostFlowSpec {
  uint32_t dst_ip = 0;   // network order
  double rate_gbps = 1;  // offered load, L2 wire rate
  uint8_t dscp = 26;
  uint8_t ecn = 2;       // ECT(0): RoCE NICs running DCQCN mark their packets ECN-capable
  uint32_t payload = 1024;
  uint32_t qp = 0x11;
  uint8_t opcode = 0x04;  // RC SEND_ONLY
  int8_t priority = -1;   // PFC priority the host pauses this flow on; -1: from the switch's maps
  uint64_t start_ns = 0;
  uint64_t stop_ns = UINT64_MAX;
};

// A stuck receiver: the host keeps sending PFC XOFF for one priority (a PFC storm), the case
// the switch's PFC watchdog exists for.
struct HostPfcStorm {
  int8_t priority = -1;  // -1: none
  uint64_t start_ns = 0;
  uint64_t stop_ns = UINT64_MAX;
  uint16_t quanta = 0xffff;
};

struct HostSpec {
  uint32_t ip = 0;  // network order
  rte_ether_addr mac{};
  std::vector<HostFlowSpec> flows;
  HostPfcStorm storm;
  std::string receiver;  // receiver group name; empty: the host is its own receiver
  uint32_t rx_flow_capacity = RxTracker::kDefaultCapacity;  // flows tracked (the leader's counts)
  // The host's RoCE NIC (dataplane/nic/roce_nic.h): RC queue pairs with go-back-N and DCQCN.
  nic::NicSpec nic;
  std::vector<nic::QpSpec> qps;
  std::array<uint8_t, 64> priority_of_dscp{};  // the switch's maps, filled in by the switch
  // On a real link (`kind: nic`): the MAC of its next hop (a switch's port), where an emulated
  // host's is the port it is cabled to.
  rte_ether_addr gateway{};
  // The link's and the flows' bucket in line time (Shaper::configure); 0: the default, made for
  // a worker polling in real time. An emulated fabric sets its step.
  uint64_t bucket_ns = 0;
};

// One direction of a host's cable: frames in the order they were sent, each with the time its
// last bit is in, wire_bytes() at the link rate after it started. `serial`: a frame starts when
// it is sent or when the frame before it has ended, whichever is later; otherwise it starts when
// sent (a shaper spaced the frames) and arrives no earlier than the frame before it. A ring of
// fixed capacity (a power of two) made at construction: nothing is allocated per frame. Time is
// whole nanoseconds and a fraction, exact at any clock value. Not a fabric cable's direction
// (EmulatedLink): both ends are polled by one thread (no rte_ring needed between threads), a
// PFC frame starts at a time the host chooses (after the frame in progress, ahead of data that
// has not started), a shaped sender's frames need not be serialised again, and a full wire
// hands its oldest frame over early instead of refusing one.
class HostWire {
 public:
  HostWire(double gbps, uint32_t capacity, bool serial);
  ~HostWire() { clear(); }
  HostWire(const HostWire&) = delete;
  HostWire& operator=(const HostWire&) = delete;

  // 0: no serialisation, a frame is due when it is sent (a real wire does it instead).
  void set_rate(double gbps) { ns_per_byte_ = gbps > 0 ? 8.0 / gbps : 0; }
  uint32_t size() const { return count_; }
  uint32_t room() const { return mask_ + 1 - count_; }
  bool full() const { return room() == 0; }
  void push(rte_mbuf* m, uint64_t start_ns);  // not when full()
  bool due(uint64_t now_ns) const { return count_ && slots_[head_].arrival_ns <= now_ns; }
  uint64_t next_arrival_ns() const { return count_ ? slots_[head_].arrival_ns : UINT64_MAX; }
  rte_mbuf* pop();  // the oldest frame; not when empty
  void clear();     // frees every frame

 private:
  struct Slot {
    rte_mbuf* m;
    uint64_t arrival_ns;
  };
  std::unique_ptr<Slot[]> slots_;
  uint32_t mask_, head_ = 0, count_ = 0;
  bool serial_;
  double ns_per_byte_ = 0;
  uint64_t end_ns_ = 0;  // the last frame's last bit: end_ns_ + end_frac_
  double end_frac_ = 0;
};

class EmulatedHost final : public Port {
 public:
  // `switch_mac` is the MAC of the switch port the host is cabled to (its gateway).
  // `receiver_leader`: the first host of this host's receiver group, whose tracker it shares
  // (nullptr: this host creates its own and leads its group, if it has one).
  EmulatedHost(const HostSpec& spec, rte_ether_addr switch_mac, double link_gbps, rte_mempool* pool, uint64_t now_ns,
               const EmulatedHost* receiver_leader = nullptr);

  uint16_t rx_burst(rte_mbuf** pkts, uint16_t n, uint64_t now_ns) override;  // host -> switch
  uint16_t tx_burst(rte_mbuf** pkts, uint16_t n, uint64_t now_ns) override;  // switch -> host
  const char* kind() const override { return "emulated_host"; }
  // The switch stops: what is on the cable to the host still arrives (the switch counted it
  // sent), each frame at its time; what the host was sending never reaches the switch (freed).
  void stop() override;
  void stats(nlohmann::json& j) const override;
  // A host with a NIC may always have something to send (a timer, an ACK); one with flows only
  // is idle before its flows start, after they stop, and while PFC pauses them. A frame on
  // either direction of its cable is an event at its arrival.
  uint64_t idle_until(uint64_t now_ns) const override;
  // Behind a real link (WiredHost) the wire serialises: the emulated cable carries frames in no
  // time. Before the first frame.
  void set_wire_serialisation(bool on);

  uint64_t sent_packets() const { return tx_pkts_.get(); }
  uint64_t received_packets() const { return rx_pkts_.get(); }
  uint64_t icrc_bad() const { return icrc_bad_.get(); }
  uint64_t ce_marked() const { return rx_ce_.get(); }
  uint64_t pfc_received() const { return rx_pfc_.get(); }
  uint64_t storm_frames() const { return storm_sent_.get(); }
  // Frames on the cable now, sent and not yet arrived (the owner's thread only).
  uint32_t on_wire_to_host() const { return to_host_.size() + mac_to_host_.size(); }
  uint32_t on_wire_to_switch() const { return to_switch_.size(); }
  // The cable's capacity in frames, each way, and that of the PFC frames' lane to the host.
  static constexpr uint32_t kWireFrames = 1024, kWireMacFrames = 16;
  // PFC from the switch stops this host's flows of that priority until the time runs out.
  bool paused(int priority, uint64_t now_ns) const { return now_ns < pause_until_[priority & 7]; }
  // The received flows (shared by a receiver group; read from any thread).
  const RxTracker& rx_tracker() const { return *rx_; }
  const nic::RoceNic* roce_nic() const { return nic_.get(); }
  const std::string& receiver() const { return spec_.receiver; }
  bool receiver_leader() const { return leader_ == nullptr; }

 private:
  struct Flow {
    HostFlowSpec spec;
    std::vector<uint8_t> tmpl;  // whole frame, PSN and ICRC patched per packet
    uint32_t psn = 0;
    Shaper rate;
    Counter sent, bytes;  // packets and frame bytes
    uint64_t poll_bytes = 0;  // sent at poll_ns_: bounded by the flow's bucket (rx_burst)
  };
  rte_mbuf* build(Flow& f);
  // What the host starts sending at `now`, at most `n` frames: PFC storm, NIC, flows.
  uint16_t make(rte_mbuf** pkts, uint16_t n, uint64_t now_ns);
  // A frame whose last bit arrived at `arrival_ns`, received at `now_ns`; frees it.
  void receive(rte_mbuf* m, uint64_t now_ns, uint64_t arrival_ns);
  void take_arrived(uint64_t now_ns);          // receives what the cable has delivered by now
  HostWire* next_to_host();                    // the wire whose frame arrives first; null: none
  void on_mac_control(const uint8_t* frame, uint32_t len, uint64_t now_ns);
  // Inside its start/stop window and not paused by PFC.
  bool sending(const Flow& f, uint64_t now_ns) const {
    return now_ns >= f.spec.start_ns && now_ns < f.spec.stop_ns && now_ns >= pause_until_[f.spec.priority & 7];
  }

  HostSpec spec_;
  rte_mempool* pool_;
  Shaper link_;
  std::deque<Flow> flows_;  // Flow holds counters: never moved
  std::size_t rr_ = 0;
  uint64_t poll_ns_ = UINT64_MAX;  // the instant the flows' poll_bytes were counted at
  Counter tx_pkts_, tx_bytes_, alloc_fail_;
  Counter rx_pkts_, rx_bytes_, rx_roce_, icrc_bad_, rx_ce_;
  Counter rx_pfc_, rx_pfc_bad_, storm_sent_;
  Counter wire_full_;  // frames received before their last bit: the cable to the host was full
  double link_gbps_ = 1;
  // The cable: data to the host, PFC to the host (it overtakes data that has not started), and
  // what the host sends.
  HostWire to_host_, mac_to_host_, to_switch_;
  std::array<uint64_t, 8> pause_until_{};
  uint64_t next_storm_ns_ = 0;
  std::shared_ptr<RxTracker> rx_;  // shared by a receiver group
  const EmulatedHost* leader_ = nullptr;  // the group's first host, when that is not this one
  // When the host has a NIC: a receiver group's ports share the leader's (one remote host), and
  // only the leader's link sends what it makes.
  std::shared_ptr<nic::RoceNic> nic_;
};

}  // namespace rs
