// A reliable-connected queue pair's transport, as a ConnectX-class NIC runs it with go-back-N
// (IBTA vol. 1, 9.7): the requester half segments messages into packets at the path MTU, numbers
// them with PSNs, and on a NAK (PSN sequence error) or a silent retransmission timeout goes back
// to the first PSN not acknowledged and sends everything again from there; the responder half
// accepts only the PSN it expects, acknowledges (when asked, and every `ack_every` packets),
// answers the first packet past a gap with one NAK naming the PSN it expects, and acknowledges
// duplicates that ask for it. With `placement` (ConnectX-5 and later's out-of-order data
// placement, for sprayed traffic) the responder places packets up to `reorder_window` ahead of
// the one it expects, acknowledges cumulatively, and NAKs a gap only once `nak_after` packets
// were placed past it; the requester then resends only the PSN the NAK names. Packets are
// descriptions (roce_wire.h builds the frames); time is injected. PSNs are 24 bits on the wire
// and 64 bits here, so nothing wraps.
#pragma once
#include <cstdint>
#include <deque>
#include <vector>

#include "dataplane/nic/roce_wire.h"

namespace rs::nic {

struct RcConfig {
  uint32_t mtu = 4096;               // path MTU: message bytes per packet (256..4096, a power of two)
  uint32_t ack_req_every = 16;       // the requester asks for an ACK every this many packets, and on each message's last
  uint32_t ack_every = 0;            // the responder ACKs every this many packets unasked (0: only when asked)
  uint64_t retransmit_ns = 1'000'000;  // no ACK progress for this long: go back to the first unacknowledged PSN
  uint32_t max_outstanding = 65536;  // PSNs sent and not acknowledged, at most
  bool placement = false;            // out-of-order placement (reorder: placement); else go-back-N
  uint32_t reorder_window = 1024;    // placement: packets placed ahead of the expected one, at most
  uint32_t nak_after = 32;           // placement: packets placed past a gap before it is NAKed
};

struct Completion {
  uint64_t id = 0;
  uint32_t bytes = 0;
  uint64_t post_ns = 0, done_ns = 0;
};

struct RequesterCounters {
  uint64_t packets = 0, bytes = 0;  // sent, first sends and resends
  uint64_t retransmitted = 0;       // packets sent again
  uint64_t acks = 0, naks = 0, timeouts = 0, stale_acks = 0;
  uint64_t messages_done = 0;
};

class RcRequester {
 public:
  explicit RcRequester(const RcConfig& cfg, uint32_t first_psn = 0);
  // A message of `bytes` (> 0), an RDMA WRITE or a SEND; `id` comes back in its completion.
  void post(uint64_t id, uint32_t bytes, bool write, uint64_t now);
  // Whether a packet may go: something to send or resend, and the window open.
  bool ready() const { return !resend_.empty() || (nxt_ < end_ && nxt_ - una_ < cfg_.max_outstanding); }
  // The next packet (after a go-back, the resends first). Only when ready().
  DataPacket next(uint64_t now);
  // An ACKNOWLEDGE packet for this QP: its PSN and AETH syndrome.
  void on_ack(uint32_t psn, uint8_t syndrome, uint64_t now);
  // When the retransmission timer fires (UINT64_MAX: nothing outstanding), and its firing.
  uint64_t deadline() const { return una_ < sent_ ? progress_ns_ + cfg_.retransmit_ns : UINT64_MAX; }
  void on_timer(uint64_t now);

  // Messages acknowledged whole since the last call, in order.
  std::vector<Completion> take_completions();
  const RequesterCounters& counters() const { return c_; }
  uint64_t outstanding_messages() const { return msgs_.size(); }
  uint64_t unacked_packets() const { return sent_ - una_; }

 private:
  struct Msg {
    uint64_t id;
    uint32_t bytes;
    bool write;
    uint64_t post_ns;
    uint64_t first;  // PSN of its first packet
    uint32_t packets;
  };
  uint64_t unwrap(uint32_t psn24) const;
  DataPacket packet_at(uint64_t psn) const;
  void acknowledge(uint64_t upto, uint64_t now);  // PSNs below `upto` are acknowledged
  const Msg& message_of(uint64_t psn) const;

  RcConfig cfg_;
  std::deque<Msg> msgs_;   // not yet acknowledged whole, in PSN order
  uint64_t una_;           // the first PSN not acknowledged
  uint64_t nxt_;           // the next PSN to send
  uint64_t sent_;          // one past the highest PSN ever sent
  uint64_t end_;           // one past the last PSN of the posted messages
  uint64_t progress_ns_ = 0;  // the last ACK progress (or the first send after none outstanding)
  std::deque<uint64_t> resend_;  // placement: PSNs a NAK asked for again
  std::vector<Completion> done_;
  RequesterCounters c_;
};

struct ResponderCounters {
  uint64_t packets = 0, bytes = 0;  // accepted in sequence: message bytes delivered
  uint64_t messages = 0;
  uint64_t duplicates = 0;          // PSNs already accepted
  uint64_t out_of_sequence = 0;     // past a gap: dropped (go-back-N, or past the reorder window)
  uint64_t placed = 0;              // placement: accepted ahead of the expected PSN
  uint64_t missing = 0;             // PSNs found missing: a gap's size when first seen (placement: each NAKed)
  uint64_t acks = 0, naks = 0;
};

class RcResponder {
 public:
  explicit RcResponder(const RcConfig& cfg, uint32_t first_psn = 0)
      : cfg_(cfg), epsn_(first_psn), slot_(cfg.placement ? cfg.reorder_window : 0, 0) {}
  struct Reply {
    bool send = false;
    uint32_t psn = 0;       // the PSN acknowledged, or for a NAK the one expected
    uint8_t syndrome = 0;
    uint32_t msn = 0;
  };
  // A data packet for this QP (opcode, PSN, AckReq, payload); what to answer, if anything.
  Reply on_data(uint8_t opcode, uint32_t psn, bool ack_req, uint32_t payload);
  const ResponderCounters& counters() const { return c_; }
  uint32_t expected_psn() const { return static_cast<uint32_t>(epsn_ & kPsnMask); }

 private:
  Reply ack() {
    ++c_.acks;
    since_ack_ = 0;
    return {true, static_cast<uint32_t>((epsn_ - 1) & kPsnMask), kAckSyndrome, msn_};
  }
  RcConfig cfg_;
  uint64_t epsn_;
  uint32_t msn_ = 0;
  uint32_t since_ack_ = 0;
  bool nak_out_ = false;  // a NAK for this gap went: the next is for the next gap
  // placement: PSN epsn_ + k is placed when slot_[(epsn_ + k) % window] is set (2: a message's last)
  std::vector<uint8_t> slot_;
  uint32_t past_gap_ = 0;
  ResponderCounters c_;
  Reply place(uint32_t ahead, uint8_t opcode, bool ack_req, uint32_t payload);
};

}  // namespace rs::nic
