// The RC transport (dataplane/nic/rc_qp.h) between a requester and a responder over a channel
// of fixed delay that drops what a test tells it to: segmentation and opcodes, ACK coalescing,
// go-back-N after a NAK, the retransmission timer for a lost tail or a lost ACK, duplicates,
// the PSN wrap and the window. Every message completes, and both ends' counters agree.
#include "dataplane/nic/rc_qp.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace rs::nic {
namespace {

constexpr uint64_t kDelay = 2'000;  // one way, ns

struct Wire {
  uint64_t at;
  bool ack;       // toward the requester
  DataPacket d;   // data
  RcResponder::Reply r;  // ACK / NAK
};

// Requester and responder joined by a delay line; `drop_data(n)` / `drop_ack(n)` drop the n-th
// data packet / reply put on the wire (from 0).
struct Pair {
  explicit Pair(RcConfig c = {}, uint32_t first_psn = 0) : cfg(c), req(c, first_psn), resp(c, first_psn) {}
  RcConfig cfg;
  RcRequester req;
  RcResponder resp;
  std::function<bool(uint64_t)> drop_data = [](uint64_t) { return false; };
  std::function<bool(uint64_t)> drop_ack = [](uint64_t) { return false; };
  std::vector<Wire> wire;
  std::vector<DataPacket> sent;       // every data packet sent, in order
  std::vector<RcResponder::Reply> replies;
  std::vector<Completion> done;
  uint64_t now = 1'000'000, n_data = 0, n_ack = 0;

  // One packet every 100 ns while the window allows, until everything is acknowledged or `limit`.
  void run(uint64_t limit = 1'000'000'000) {
    const uint64_t end = now + limit;
    while (now < end) {
      for (std::size_t i = 0; i < wire.size();) {
        if (wire[i].at > now) {
          ++i;
          continue;
        }
        const Wire w = wire[i];
        wire.erase(wire.begin() + static_cast<long>(i));
        if (w.ack) {
          req.on_ack(w.r.psn, w.r.syndrome, now);
        } else if (const auto r = resp.on_data(w.d.opcode, w.d.psn, w.d.ack_req, w.d.payload); r.send) {
          replies.push_back(r);
          if (!drop_ack(n_ack++)) wire.push_back({now + kDelay, true, {}, r});
        }
      }
      req.on_timer(now);
      if (req.ready()) {
        const DataPacket d = req.next(now);
        sent.push_back(d);
        if (!drop_data(n_data++)) wire.push_back({now + kDelay, false, d, {}});
      }
      for (auto& c : req.take_completions()) done.push_back(c);
      if (req.outstanding_messages() == 0 && wire.empty()) return;
      now += 100;
    }
  }
};

std::string opcodes(const std::vector<DataPacket>& v, std::size_t from = 0, std::size_t n = SIZE_MAX) {
  std::string s;
  for (std::size_t i = from; i < v.size() && i < from + n; ++i) s += std::string(s.empty() ? "" : " ") + opcode_name(v[i].opcode);
  return s;
}

TEST(RcQp, SegmentsAtTheMtuAndCompletesInOrderWithoutLoss) {
  Pair p;
  p.req.post(1, 10000, true, p.now);   // 3 packets
  p.req.post(2, 4096, false, p.now);   // 1
  p.req.post(3, 1, false, p.now);      // 1
  p.req.post(4, 4097, true, p.now);    // 2
  p.run();
  EXPECT_EQ(opcodes(p.sent), "RDMA_WRITE_FIRST RDMA_WRITE_MIDDLE RDMA_WRITE_LAST SEND_ONLY SEND_ONLY RDMA_WRITE_FIRST RDMA_WRITE_LAST");
  ASSERT_EQ(p.sent.size(), 7u);
  EXPECT_EQ(p.sent[0].payload, 4096u);
  EXPECT_EQ(p.sent[2].payload, 10000u - 8192u);
  EXPECT_EQ(p.sent[0].dma_len, 10000u) << "RETH on the first packet of a WRITE";
  EXPECT_EQ(p.sent[1].dma_len, 0u);
  EXPECT_EQ(p.sent[6].payload, 1u);
  for (std::size_t i = 0; i < p.sent.size(); ++i) EXPECT_EQ(p.sent[i].psn, i);
  // AckReq on each message's last packet: 4 ACKs, each naming the message's last PSN.
  std::vector<bool> asked;
  for (auto& d : p.sent) asked.push_back(d.ack_req);
  EXPECT_EQ(asked, (std::vector<bool>{false, false, true, true, true, false, true}));
  ASSERT_EQ(p.replies.size(), 4u);
  EXPECT_EQ(p.replies[0].psn, 2u);
  EXPECT_EQ(p.replies[3].psn, 6u);
  EXPECT_EQ(p.replies[3].msn, 4u);
  ASSERT_EQ(p.done.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(p.done[i].id, i + 1);
  EXPECT_EQ(p.done[3].done_ns - p.done[3].post_ns, 7 * 100 - 100 + 2 * kDelay) << "the last send, then an RTT";
  EXPECT_EQ(p.resp.counters().bytes, 10000u + 4096 + 1 + 4097);
  EXPECT_EQ(p.resp.counters().messages, 4u);
  EXPECT_EQ(p.req.counters().retransmitted, 0u);
  EXPECT_EQ(p.req.counters().naks, 0u);
}

TEST(RcQp, AckRequestsAndCoalescedAcksInALongMessage) {
  RcConfig c;
  c.mtu = 1024;
  c.ack_req_every = 4;
  c.ack_every = 3;
  Pair p(c);
  p.req.post(1, 10 * 1024, true, p.now);
  p.run();
  std::vector<uint32_t> acked;
  for (auto& r : p.replies) acked.push_back(r.psn);
  // Asked at PSNs 3 and 7 and at the last (9); unasked every 3 packets since the last ACK.
  EXPECT_EQ(acked, (std::vector<uint32_t>{2, 3, 6, 7, 9}));
  EXPECT_EQ(p.done.size(), 1u);
}

TEST(RcQp, ALostPacketIsNakedOnceAndEverythingFromItResent) {
  Pair p;
  p.drop_data = [](uint64_t n) { return n == 2; };  // PSN 2 of 8
  p.req.post(1, 8 * 4096, false, p.now);
  p.run();
  ASSERT_EQ(p.done.size(), 1u);
  // The responder NAKs the first packet past the gap, naming PSN 2, and drops the rest until 2 comes.
  const auto& r = p.resp.counters();
  EXPECT_EQ(r.naks, 1u);
  EXPECT_GE(r.out_of_sequence, 1u);
  EXPECT_EQ(r.missing, 1u) << "one PSN was missing when the gap was seen";
  EXPECT_EQ(p.req.counters().naks, 1u);
  std::vector<uint32_t> psns;
  for (auto& d : p.sent) psns.push_back(d.psn);
  ASSERT_GT(psns.size(), 8u);
  // After the NAK the requester starts again at 2 and sends 2..7 in order.
  const auto again = std::find(psns.begin() + 3, psns.end(), 2u);
  ASSERT_NE(again, psns.end());
  EXPECT_EQ(std::vector<uint32_t>(again, psns.end()), (std::vector<uint32_t>{2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(p.req.counters().retransmitted, p.sent.size() - 8);
  EXPECT_EQ(r.bytes, 8u * 4096) << "delivered once each";
  EXPECT_EQ(r.packets, 8u);
  EXPECT_EQ(p.req.counters().timeouts, 0u);
}

TEST(RcQp, ALostTailAndALostAckAreRecoveredByTheTimer) {
  RcConfig c;
  c.retransmit_ns = 50'000;
  {
    Pair p(c);
    p.drop_data = [](uint64_t n) { return n == 3; };  // the last packet: nothing follows it to reveal the gap
    p.req.post(1, 4 * 4096, true, p.now);
    const uint64_t t0 = p.now;
    p.run();
    ASSERT_EQ(p.done.size(), 1u);
    EXPECT_EQ(p.req.counters().timeouts, 1u);
    EXPECT_EQ(p.resp.counters().naks, 0u);
    EXPECT_GE(p.done[0].done_ns - t0, c.retransmit_ns);
    EXPECT_EQ(p.resp.counters().packets, 4u);
  }
  {
    Pair p(c);
    p.drop_ack = [](uint64_t n) { return n == 0; };  // the only ACK
    p.req.post(1, 2 * 4096, true, p.now);
    p.run();
    ASSERT_EQ(p.done.size(), 1u);
    EXPECT_EQ(p.req.counters().timeouts, 1u);
    EXPECT_EQ(p.resp.counters().duplicates, 2u) << "both packets again";
    EXPECT_EQ(p.resp.counters().packets, 2u);
    EXPECT_EQ(p.resp.counters().acks, 2u) << "the duplicate last packet asks again";
  }
}

TEST(RcQp, PsnsWrapAtTwentyFourBits) {
  Pair p({}, 0xFFFFFC);
  p.req.post(1, 10 * 4096, false, p.now);
  p.drop_data = [](uint64_t n) { return n == 5; };  // PSN 0x000001, past the wrap
  p.run();
  ASSERT_EQ(p.done.size(), 1u);
  EXPECT_EQ(p.sent.front().psn, 0xFFFFFCu);
  EXPECT_EQ(p.sent[4].psn, 0u);
  EXPECT_EQ(p.resp.counters().packets, 10u);
  EXPECT_EQ(p.resp.expected_psn(), 6u);
  EXPECT_EQ(p.req.counters().naks, 1u);
}

TEST(RcQp, TheWindowBoundsWhatIsOutstanding) {
  RcConfig c;
  c.max_outstanding = 4;
  RcRequester r(c);
  r.post(1, 10 * 4096, false, 0);
  int n = 0;
  while (r.ready()) r.next(0), ++n;
  EXPECT_EQ(n, 4);
  r.on_ack(1, kAckSyndrome, 10);  // PSNs 0 and 1
  n = 0;
  while (r.ready()) r.next(10), ++n;
  EXPECT_EQ(n, 2);
  EXPECT_EQ(r.unacked_packets(), 4u);
  // ACKs for PSNs not sent, and NAKs other than a sequence error, change nothing.
  r.on_ack(100, kAckSyndrome, 20);
  r.on_ack(3, 0x61, 20);  // NAK, invalid request
  EXPECT_EQ(r.unacked_packets(), 4u);
  EXPECT_EQ(r.counters().stale_acks, 2u);
}

// Placement: a NAK asks for one PSN again; if an ACK covers it before it went, nothing is left
// to send (found by fuzz_nic_frames: the stale resend made the requester send past its messages).
TEST(RcQp, APlacementResendAcknowledgedBeforeItWentIsDropped) {
  RcConfig c;
  c.placement = true;
  RcRequester r(c);
  r.post(1, 3 * 4096, true, 0);
  while (r.ready()) r.next(0);
  r.on_ack(1, kNakPsnSequenceError, 10);  // PSN 1 missing: queued alone
  EXPECT_TRUE(r.ready());
  r.on_ack(2, kAckSyndrome, 20);          // ...and then everything arrived after all
  EXPECT_FALSE(r.ready());
  EXPECT_EQ(r.take_completions().size(), 1u);
  EXPECT_EQ(r.counters().retransmitted, 0u);
}

}  // namespace
}  // namespace rs::nic
