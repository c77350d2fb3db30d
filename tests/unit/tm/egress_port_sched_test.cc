// EgressPort over a fake port: strict-before-DWRR service, DWRR weights, the shaper's link rate
// on the injected clock, and transmit()'s fast branch against the per-frame rule.
#include "dataplane/tm/queue/egress_port.h"

#include <fmt/core.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "tests/support/seeded_rng.h"
#include "tests/unit/tm/egress_port_fixture.h"

namespace rs::test {
namespace {

TEST_F(EgressPortTest, StrictQueuesGoFirstThenDwrr) {
  EgressConfig cfg;
  cfg.speed_gbps = 100;
  cfg.sched[6] = QueueSched::Strict;
  cfg.sched[7] = QueueSched::Strict;
  make(cfg);
  enqueue(200, 1, 6);
  enqueue(200, 3, 6);
  enqueue(200, 6, 5);
  enqueue(200, 7, 5);
  // Enough time for everything (22 x 224 wire bytes is 0.4 us at 100 Gb/s).
  transmit_at(10'000);
  ASSERT_EQ(fake.sent.size(), 22u);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(fake.sent[i].queue, 7) << "position " << i;
  for (int i = 5; i < 10; ++i) EXPECT_EQ(fake.sent[i].queue, 6) << "position " << i;
  int q1 = 0, q3 = 0;
  for (std::size_t i = 10; i < 22; ++i) {
    EXPECT_TRUE(fake.sent[i].queue == 1 || fake.sent[i].queue == 3);
    (fake.sent[i].queue == 1 ? q1 : q3)++;
  }
  EXPECT_EQ(q1, 6);
  EXPECT_EQ(q3, 6);
}

TEST_F(EgressPortTest, StrictQueueArrivingLaterOvertakesDwrrBacklog) {
  EgressConfig cfg;
  cfg.speed_gbps = 10;
  cfg.sched[5] = QueueSched::Strict;
  make(cfg);
  enqueue(1'000, 0, 200);
  transmit_at(2'000);  // some of queue 0 goes
  const std::size_t before = fake.sent.size();
  ASSERT_GT(before, 0u);
  enqueue(1'000, 5, 3);
  transmit_at(10'000);  // 8 us at 10 Gb/s: ~9 frames
  ASSERT_GE(fake.sent.size(), before + 3);
  for (std::size_t i = before; i < before + 3; ++i) EXPECT_EQ(fake.sent[i].queue, 5) << "position " << i;
}

TEST_F(EgressPortTest, DwrrWeightsShareTheLinkWithinTwoPercent) {
  // Three backlogged DWRR queues at 1:2:4 with different frame sizes behind a 25 Gb/s port.
  EgressConfig cfg;
  cfg.speed_gbps = 25;
  cfg.weights = {1, 2, 4, 1, 1, 1, 1, 1};
  make(cfg);
  const uint32_t size[3] = {64, 1500, 700};
  uint64_t now = 0;
  for (int step = 0; step < 20'000; ++step) {
    for (uint8_t q = 0; q < 3; ++q)
      while (port->queue(q).depth_packets.get() < 40) enqueue(size[q], q);
    now += 1'000;
    transmit_at(now);
  }
  uint64_t bytes[3] = {};
  for (auto& s : fake.sent) bytes[s.queue] += s.len;
  const double total = static_cast<double>(bytes[0] + bytes[1] + bytes[2]);
  EXPECT_NEAR(static_cast<double>(bytes[0]) / total, 1.0 / 7, 1.0 / 7 * 0.02);
  EXPECT_NEAR(static_cast<double>(bytes[1]) / total, 2.0 / 7, 2.0 / 7 * 0.02);
  EXPECT_NEAR(static_cast<double>(bytes[2]) / total, 4.0 / 7, 4.0 / 7 * 0.02);
  expect_balanced("after run");
}

struct RateCase {
  double gbps;
  uint32_t len;
  uint64_t step_ns;
};

class EgressPortRate : public EgressPortTest, public ::testing::WithParamInterface<RateCase> {};

TEST_P(EgressPortRate, TransmitRateFollowsPortSpeed) {
  const RateCase c = GetParam();
  EgressConfig cfg;
  cfg.speed_gbps = c.gbps;
  make(cfg, 0);
  const uint64_t duration = 2'000'000;  // 2 ms of emulated time
  uint64_t now = 0;
  while (now < duration) {
    // Keep the queue backlogged so the shaper is the only limit.
    while (port->queue(3).depth_packets.get() < 64) enqueue(c.len, 3);
    now += c.step_ns;
    transmit_at(now);
  }
  const double gbps = static_cast<double>(fake.wire) * 8.0 / static_cast<double>(duration);
  EXPECT_NEAR(gbps, c.gbps, c.gbps * 0.01);
  EXPECT_EQ(counters->port_tx_bytes[kPortId].get(), static_cast<uint64_t>(fake.sent.size()) * c.len);
  if (c.len == 60 && c.gbps == 100) {
    const double mpps = static_cast<double>(fake.sent.size()) * 1e3 / static_cast<double>(duration);
    EXPECT_NEAR(mpps, 148.81, 148.81 * 0.01);
  }
  expect_balanced("after run");
}

INSTANTIATE_TEST_SUITE_P(Speeds, EgressPortRate,
                         ::testing::Values(RateCase{1, 1'000, 10'000}, RateCase{10, 1'000, 1'000},
                                           RateCase{25, 1'500, 1'000}, RateCase{100, 60, 100},
                                           RateCase{100, 1'500, 1'000}, RateCase{400, 1'500, 500}),
                         [](const ::testing::TestParamInfo<RateCase>& i) {
                           return fmt::format("{}G_{}B", static_cast<int>(i.param.gbps), i.param.len);
                         });

// --- transmit()'s fast branch: credit for the whole queue, no check per frame ----------------

// After a whole-queue burst the credit left must be what the per-frame rule leaves, to the
// byte. At 8 Gb/s the credit is the time in ns; ten 1500-byte frames (15,240 wire bytes, the
// cover needs 15,000 + 10 x 84) go at once, then eight more arrive at the same instant (no
// refill) and the leftover decides how many of them start: 1524 wire bytes each.
class EgressPortFastBranch : public EgressPortTest, public ::testing::WithParamInterface<int> {};

TEST_P(EgressPortFastBranch, LeavesThePerFrameCredit) {
  const int extra = GetParam();  // leftover = 5 frames' wire bytes + extra
  EgressConfig cfg;
  cfg.speed_gbps = 8;
  make(cfg);
  enqueue(1'500, 2, 10);
  const uint64_t t = 15'240 + 5 * 1'524 + extra;
  EXPECT_EQ(transmit_at(t), 10u) << "credit covers the queue: all of it at once";
  enqueue(1'500, 2, 8);  // the leftover does not cover these: frame by frame
  const uint16_t more = transmit_at(t);
  // Exactly five frames' worth: the fifth leaves 0 and the sixth may not start; one byte
  // more and it does; one byte less and the fifth starts on it.
  EXPECT_EQ(more, extra > 0 ? 6u : 5u);
  EXPECT_EQ(port->queue(2).deq_packets.get(), 10u + more);
  // And the debt after that is exact too: the next frame starts when credit is positive again.
  const int64_t debt = extra > 0 ? 1'524 - extra : -extra;  // credit after `more` frames: -debt
  EXPECT_EQ(transmit_at(t + static_cast<uint64_t>(debt)), 0u);
  EXPECT_EQ(transmit_at(t + static_cast<uint64_t>(debt) + 1), 1u);
  EXPECT_EQ(port->queue(2).enq_packets.get(), 18u);
  expect_balanced("after bursts");
}

INSTANTIATE_TEST_SUITE_P(Leftover, EgressPortFastBranch, ::testing::Values(-1, 0, 1),
                         [](const ::testing::TestParamInfo<int>& i) {
                           return std::string(i.param < 0 ? "OneByteShort" : i.param == 0 ? "Exact" : "OneByteOver");
                         });

TEST_F(EgressPortTest, RuntsAreChargedTheMinimumFrameInTheFastBranchCheck) {
  // A 40-byte packet is 84 bytes on the wire, not 40 + 24: the cover allows 84 per frame. Ten
  // of them are 840 wire bytes; with 700 bytes of credit the cover fails (400 + 840) and the
  // per-frame rule sends nine (the ninth starts on the last 28 bytes).
  EgressConfig cfg;
  cfg.speed_gbps = 8;
  make(cfg);
  enqueue(40, 5, 10);
  EXPECT_EQ(transmit_at(700), 9u);
  EXPECT_EQ(port->queue(5).depth_packets.get(), 1u);
  // 56 bytes of debt: the tenth may start 57 ns later, not before.
  EXPECT_EQ(transmit_at(756), 0u);
  EXPECT_EQ(transmit_at(757), 1u);
  EXPECT_EQ(port->queue(5).enq_packets.get(), 10u);
  EXPECT_EQ(port->queue(5).deq_bytes.get(), 400u);
}

TEST_F(EgressPortTest, EitherBranchSendsAtMostABurstPerCall) {
  // 100 packets of 60 bytes (84 on the wire). At 400 Gb/s the credit covers them all (the
  // fast branch); at 8 Gb/s 10,000 bytes cover 119 frames but not the queue's 6,000 + 8,400
  // (the per-frame branch). Either way one call hands the port kBurst, the next the rest.
  for (const double gbps : {400.0, 8.0}) {
    SCOPED_TRACE(gbps);
    EgressConfig cfg;
    cfg.speed_gbps = gbps;
    make(cfg);
    fake.sent.clear();
    enqueue(60, 0, 100);
    EXPECT_EQ(transmit_at(10'000), kBurst);
    EXPECT_EQ(port->queue(0).depth_packets.get(), 100u - kBurst);
    EXPECT_EQ(transmit_at(10'000), 100u - kBurst) << "the same instant: what credit is left";
    EXPECT_EQ(port->queue(0).deq_packets.get(), 100u);
    EXPECT_EQ(port->queue(0).enq_packets.get(), 100u);
    port->flush(ctx, DropReason::Shutdown);
  }
}

// What the per-frame rule predicts for one queue: the shaper refilled as transmit() does,
// then can_send()/consume() per frame, at most kBurst per call.
struct PerFrameModel {
  explicit PerFrameModel(double gbps) { shaper.configure(gbps, 0); }
  // Lengths sent at `now`, from the front of `q`.
  std::vector<uint32_t> transmit(std::deque<uint32_t>& q, uint64_t now) {
    shaper.refill(now, !q.empty());
    std::vector<uint32_t> out;
    while (out.size() < kBurst && !q.empty() && shaper.can_send()) {
      shaper.consume(q.front());
      out.push_back(q.front());
      q.pop_front();
    }
    return out;
  }
  Shaper shaper;
};

// One queue, the same seeded arrivals: at 400 Gb/s the credit covers the whole queue (the fast
// branch every time, kBurst at a time); at 8 Gb/s it covers only part of it most steps (the
// per-frame branch) and all of a short queue now and then (the fast branch). Both must send
// exactly what the per-frame rule predicts, step by step, in arrival order, with the same
// counters.
struct Departures {
  std::vector<uint32_t> lens;
  std::size_t partial_steps = 0, whole_steps = 0;
};

TEST_F(EgressPortTest, FastBranchSendsWhatThePerFrameRuleSends) {
  auto run = [this](double gbps) {
    EgressConfig cfg;
    cfg.speed_gbps = gbps;
    fake.sent.clear();
    fake.wire = 0;
    make(cfg, 0);
    PerFrameModel model(gbps);
    std::deque<uint32_t> mq;
    Rng rng(2024);
    Departures d;
    uint64_t now = 0, arrived = 0, arrived_bytes = 0;
    for (int step = 0; step < 3'000; ++step) {
      const int n = static_cast<int>(rng.between(0, step % 100 < 3 ? 40 : 2));  // now and then a burst
      for (int i = 0; i < n; ++i) {
        const uint32_t len = static_cast<uint32_t>(rng.between(40, 1500));
        enqueue(len, 3);
        mq.push_back(len);
        ++arrived;
        arrived_bytes += len;
      }
      now += rng.between(500, 3'000);  // ~70 % load at 8 Gb/s: the queue builds and drains
      const std::size_t queued = mq.size();
      const std::vector<uint32_t> expect = model.transmit(mq, now);
      const std::size_t before = fake.sent.size();
      const uint16_t sent = transmit_at(now);
      EXPECT_EQ(sent, expect.size()) << gbps << " Gb/s, step " << step;
      if (sent != expect.size()) return d;
      for (std::size_t i = 0; i < expect.size(); ++i) EXPECT_EQ(fake.sent[before + i].len, expect[i]) << step;
      if (expect.size() > 1 && expect.size() == queued) ++d.whole_steps;
      if (!expect.empty() && expect.size() < queued && expect.size() < kBurst) ++d.partial_steps;
      const QueueCounters& c = port->queue(3);
      EXPECT_EQ(c.enq_packets.get(), arrived) << step;
      EXPECT_EQ(c.enq_bytes.get(), arrived_bytes) << step;
      EXPECT_EQ(c.deq_packets.get(), fake.sent.size()) << step;
      EXPECT_EQ(c.depth_packets.get(), mq.size()) << step;
    }
    // Drain what is left, then the books.
    for (int i = 0; i < 1'000 && !mq.empty(); ++i) {
      now += 10'000;
      model.transmit(mq, now);
      transmit_at(now);
    }
    EXPECT_TRUE(mq.empty());
    EXPECT_EQ(port->queued_packets(), 0u);
    EXPECT_EQ(port->queue(3).enq_packets.get(), arrived);
    EXPECT_EQ(port->queue(3).deq_packets.get(), arrived);
    EXPECT_EQ(port->queue(3).deq_bytes.get(), arrived_bytes);
    EXPECT_EQ(all_port_drops(), 0u) << "the model has no limits: nothing may be tail-dropped";
    for (auto& s : fake.sent) d.lens.push_back(s.len);
    port->flush(ctx, DropReason::Shutdown);
    port.reset();
    return d;
  };
  const Departures fast = run(400.0);
  const Departures slow = run(8.0);
  RecordProperty("steps", fmt::format("400G whole {} partial {}; 8G whole {} partial {}; {} packets", fast.whole_steps,
                                      fast.partial_steps, slow.whole_steps, slow.partial_steps, slow.lens.size()));
  EXPECT_GT(fast.whole_steps, 500u);
  EXPECT_EQ(fast.partial_steps, 0u) << "at 400 Gb/s the credit always covers the queue";
  EXPECT_GT(slow.partial_steps, 100u) << "at 8 Gb/s the per-frame branch must be exercised";
  EXPECT_GT(slow.whole_steps, 100u) << "... and the fast branch on short queues";
  EXPECT_EQ(fast.lens.size(), slow.lens.size());
  EXPECT_EQ(fast.lens, slow.lens) << "the same packets in the same (arrival) order";
}

}  // namespace
}  // namespace rs::test
