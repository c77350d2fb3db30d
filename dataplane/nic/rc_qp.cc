#include "dataplane/nic/rc_qp.h"

#include <algorithm>

namespace rs::nic {

RcRequester::RcRequester(const RcConfig& cfg, uint32_t first_psn)
    : cfg_(cfg), una_(first_psn & kPsnMask), nxt_(una_), sent_(una_), end_(una_) {}

void RcRequester::post(uint64_t id, uint32_t bytes, bool write, uint64_t now) {
  const auto packets = static_cast<uint32_t>((uint64_t{bytes} + cfg_.mtu - 1) / cfg_.mtu);
  msgs_.push_back({id, bytes, write, now, end_, std::max<uint32_t>(packets, 1)});
  end_ += msgs_.back().packets;
}

const RcRequester::Msg& RcRequester::message_of(uint64_t psn) const {
  // The last message whose first PSN is at most `psn`.
  auto it = std::upper_bound(msgs_.begin(), msgs_.end(), psn, [](uint64_t p, const Msg& m) { return p < m.first; });
  return *(it - 1);
}

DataPacket RcRequester::packet_at(uint64_t psn) const {
  const Msg& m = message_of(psn);
  const auto k = static_cast<uint32_t>(psn - m.first);  // the packet's index in its message
  const bool first = k == 0, last = k + 1 == m.packets;
  DataPacket d;
  d.psn = static_cast<uint32_t>(psn & kPsnMask);
  d.payload = std::min<uint32_t>(cfg_.mtu, m.bytes - k * cfg_.mtu);
  if (m.write) {
    d.opcode = first && last ? kWriteOnly : first ? kWriteFirst : last ? kWriteLast : kWriteMiddle;
    if (first) {
      d.va = m.id << 32;  // a remote buffer per message; the emulated responder does not look
      d.rkey = 0x1000;
      d.dma_len = m.bytes;
    }
  } else {
    d.opcode = first && last ? kSendOnly : first ? kSendFirst : last ? kSendLast : kSendMiddle;
  }
  d.ack_req = last || (cfg_.ack_req_every && (k + 1) % cfg_.ack_req_every == 0);
  return d;
}

DataPacket RcRequester::next(uint64_t now) {
  if (una_ == sent_) progress_ns_ = now;  // the timer starts with the first packet outstanding
  while (!resend_.empty()) {  // placement: what a NAK asked for, alone
    const uint64_t p = resend_.front();
    resend_.pop_front();
    if (p < una_ || p >= sent_) continue;
    const DataPacket d = packet_at(p);
    ++c_.retransmitted;
    ++c_.packets;
    c_.bytes += d.payload;
    return d;
  }
  const DataPacket d = packet_at(nxt_);
  if (nxt_ < sent_) ++c_.retransmitted;
  ++c_.packets;
  c_.bytes += d.payload;
  sent_ = std::max(sent_, ++nxt_);
  return d;
}

uint64_t RcRequester::unwrap(uint32_t psn24) const {
  // Within half the PSN space of the first unacknowledged PSN, ahead or behind.
  const uint32_t ahead = (psn24 - static_cast<uint32_t>(una_)) & kPsnMask;
  return ahead < (kPsnMask + 1) / 2 ? una_ + ahead : una_ - ((kPsnMask + 1) - ahead);
}

void RcRequester::acknowledge(uint64_t upto, uint64_t now) {
  if (upto <= una_) return;
  una_ = upto;
  nxt_ = std::max(nxt_, una_);
  progress_ns_ = now;
  // Resends asked for what is now acknowledged are moot (ready() must not count them).
  resend_.erase(std::remove_if(resend_.begin(), resend_.end(), [&](uint64_t p) { return p < una_; }), resend_.end());
  while (!msgs_.empty() && msgs_.front().first + msgs_.front().packets <= una_) {
    const Msg& m = msgs_.front();
    done_.push_back({m.id, m.bytes, m.post_ns, now});
    ++c_.messages_done;
    msgs_.pop_front();
  }
}

void RcRequester::on_ack(uint32_t psn, uint8_t syndrome, uint64_t now) {
  const uint64_t p = unwrap(psn);
  if (!is_nak(syndrome)) {
    ++c_.acks;
    // An ACK of PSN p acknowledges every PSN up to p; one for a PSN never sent is not ours.
    if (p >= sent_ || p + 1 <= una_) {
      ++c_.stale_acks;
      return;
    }
    acknowledge(p + 1, now);
    return;
  }
  ++c_.naks;
  if (syndrome != kNakPsnSequenceError || p > sent_ || p < una_) {
    ++c_.stale_acks;  // other NAKs (RNR, access, invalid request) do not happen between emulated NICs
    return;
  }
  // The responder expects p: everything before it arrived. Go back to it, or (placement) send
  // it alone: what came after it was placed.
  acknowledge(p, now);
  if (cfg_.placement) {
    if (p < sent_ && std::find(resend_.begin(), resend_.end(), p) == resend_.end()) resend_.push_back(p);
  } else {
    nxt_ = p;
  }
}

void RcRequester::on_timer(uint64_t now) {
  if (now < deadline()) return;
  ++c_.timeouts;
  nxt_ = una_;
  progress_ns_ = now;
}

std::vector<Completion> RcRequester::take_completions() {
  std::vector<Completion> v;
  v.swap(done_);
  return v;
}

RcResponder::Reply RcResponder::on_data(uint8_t opcode, uint32_t psn, bool ack_req, uint32_t payload) {
  const uint32_t ahead = (psn - static_cast<uint32_t>(epsn_)) & kPsnMask;
  if (ahead == 0) {
    ++epsn_;
    ++c_.packets;
    c_.bytes += payload;
    nak_out_ = false;
    if (is_last(opcode)) {
      ++c_.messages;
      msn_ = (msn_ + 1) & kPsnMask;
    }
    ++since_ack_;
    if (!slot_.empty()) {
      // Placement: the packets placed after this one are in sequence now.
      const std::size_t w = slot_.size();
      slot_[(epsn_ - 1) % w] = 0;
      for (uint8_t s; (s = slot_[epsn_ % w]) != 0; ++epsn_) {
        slot_[epsn_ % w] = 0;
        if (s == 2) {
          ++c_.messages;
          msn_ = (msn_ + 1) & kPsnMask;
        }
      }
      past_gap_ = 0;
    }
    if (ack_req || (cfg_.ack_every && since_ack_ >= cfg_.ack_every)) return ack();
    return {};
  }
  if (!slot_.empty() && ahead < slot_.size()) return place(ahead, opcode, ack_req, payload);
  if (ahead < (kPsnMask + 1) / 2) {
    ++c_.out_of_sequence;
    if (nak_out_) return {};
    nak_out_ = true;
    c_.missing += ahead;
    ++c_.naks;
    return {true, static_cast<uint32_t>(epsn_ & kPsnMask), kNakPsnSequenceError, msn_};
  }
  ++c_.duplicates;
  return ack_req ? ack() : Reply{};
}

RcResponder::Reply RcResponder::place(uint32_t ahead, uint8_t opcode, bool ack_req, uint32_t payload) {
  uint8_t& s = slot_[(epsn_ + ahead) % slot_.size()];
  if (s != 0) {
    ++c_.duplicates;
    return ack_req ? ack() : Reply{};
  }
  s = is_last(opcode) ? 2 : 1;
  ++c_.packets;
  ++c_.placed;
  c_.bytes += payload;
  // A gap that stays while this many packets are placed past it is a loss, not a reordering.
  if (++past_gap_ >= cfg_.nak_after && !nak_out_) {
    nak_out_ = true;
    ++c_.missing;
    ++c_.naks;
    return {true, static_cast<uint32_t>(epsn_ & kPsnMask), kNakPsnSequenceError, msn_};
  }
  return ack_req ? ack() : Reply{};
}

}  // namespace rs::nic
