// The fault model (dataplane/ports/fault_port.h) on a FakePort: each fault does what it says,
// in the direction it is given, at the rate it is given, reproducibly for a seed, and no frame
// is lost from the books or the pool (held frames are freed by stop()).
#include "dataplane/ports/fault_port.h"

#include <gtest/gtest.h>
#include <rte_mempool.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "dataplane/tm/pfc/pfc_frame.h"
#include "tests/support/constants.h"
#include "tests/support/eal_env.h"
#include "tests/support/fake_port.h"

namespace rs::test {
namespace {

constexpr uint64_t kT = 1'000'000;

// A 64-byte frame carrying its sequence number in its last four bytes.
rte_mbuf* numbered(uint32_t seq) {
  std::vector<uint8_t> b(64, 0x5a);
  std::memcpy(b.data() + 60, &seq, 4);
  return raw_frame(b);
}
uint32_t number_of(const rte_mbuf* m) {
  uint32_t s;
  std::memcpy(&s, rte_pktmbuf_mtod_offset(m, const uint8_t*, 60), 4);
  return s;
}

struct Rig {
  FakePort* inner;
  std::unique_ptr<FaultPort> port;
  unsigned pool_start = rte_mempool_in_use_count(test_pool());

  explicit Rig(const FaultSpec& f, uint64_t seed = 1) {
    auto p = std::make_unique<FakePort>(3, 25.0);
    p->keep = true;
    inner = p.get();
    port = std::make_unique<FaultPort>(std::move(p), f, test_pool(), seed);
  }
  // Sends `n` numbered frames through tx at `now`; returns how many the port took (the rest
  // are freed here, as the switch would keep and later drop them).
  uint16_t send(uint32_t first, uint16_t n, uint64_t now) {
    std::vector<rte_mbuf*> v;
    for (uint32_t i = 0; i < n; ++i) v.push_back(numbered(first + i));
    const uint16_t took = port->tx_burst(v.data(), n, now);
    for (uint16_t i = took; i < n; ++i) rte_pktmbuf_free(v[i]);
    return took;
  }
  // Every frame the port hands to the switch at `now` (rx), freed after its number is read.
  std::vector<uint32_t> receive(uint64_t now) {
    std::vector<uint32_t> got;
    rte_mbuf* b[32];
    while (true) {
      const uint16_t k = port->rx_burst(b, 32, now);
      for (uint16_t i = 0; i < k; ++i) {
        got.push_back(number_of(b[i]));
        rte_pktmbuf_free(b[i]);
      }
      if (k == 0 && inner->rx.empty()) return got;  // a burst may be all drops
    }
  }
  std::vector<uint32_t> delivered() {
    std::vector<uint32_t> v;
    for (auto* m : inner->kept) v.push_back(number_of(m));
    return v;
  }
  void inject(uint32_t first, uint32_t n) {
    for (uint32_t i = 0; i < n; ++i) inner->inject(numbered(first + i));
  }
  // The pool is back where it started once the port and what it delivered are gone.
  void expect_no_leak() {
    port->stop();
    for (auto* m : inner->kept) rte_pktmbuf_free(m);
    inner->kept.clear();
    EXPECT_EQ(rte_mempool_in_use_count(test_pool()), pool_start);
  }
};

TEST(FaultPort, NoFaultInADirectionLeavesItUntouched) {
  Rig r({.direction = FaultSpec::kRx, .drop = 1.0});
  EXPECT_EQ(r.send(0, 100, kT), 100);
  EXPECT_EQ(r.delivered().size(), 100u) << "tx is not a faulted direction";
  r.inject(0, 100);
  EXPECT_TRUE(r.receive(kT).empty()) << "rx drops everything";
  EXPECT_EQ(r.port->counters(0).dropped.get(), 100u);
  EXPECT_EQ(r.port->counters(1).dropped.get(), 0u);
  r.expect_no_leak();
}

TEST(FaultPort, DropsAtTheGivenRateAndTheSameSeedDropsTheSameFrames) {
  constexpr uint32_t kN = 20000;
  std::vector<uint32_t> first;
  // Fed a few thousand at a time: the test pool is smaller than the run.
  auto run_through = [](Rig& r) {
    std::vector<uint32_t> got;
    for (uint32_t at = 0; at < kN; at += 2000) {
      r.inject(at, 2000);
      for (uint32_t x : r.receive(kT)) got.push_back(x);
    }
    return got;
  };
  for (int run = 0; run < 2; ++run) {
    Rig r({.direction = FaultSpec::kRx, .drop = 0.25}, 42);
    const std::vector<uint32_t> got = run_through(r);
    EXPECT_EQ(got.size() + r.port->counters(0).dropped.get(), kN);
    EXPECT_NEAR(static_cast<double>(r.port->counters(0).dropped.get()) / kN, 0.25, 0.02);
    for (std::size_t i = 1; i < got.size(); ++i) ASSERT_LT(got[i - 1], got[i]) << "drops do not reorder";
    if (run == 0) first = got;
    else EXPECT_EQ(got, first) << "same seed, same frames lost";
    r.expect_no_leak();
  }
  Rig other({.direction = FaultSpec::kRx, .drop = 0.25}, 43);
  EXPECT_NE(run_through(other), first) << "another seed loses other frames";
  other.expect_no_leak();
}

TEST(FaultPort, CorruptChangesExactlyTheGivenByte) {
  Rig r({.direction = FaultSpec::kTx, .corrupt = 0.5, .corrupt_offset = 20});
  constexpr uint16_t kN = 1000;
  EXPECT_EQ(r.send(0, kN, kT), kN);
  ASSERT_EQ(r.inner->kept.size(), kN);
  uint64_t changed = 0;
  for (auto* m : r.inner->kept) {
    const uint8_t* p = rte_pktmbuf_mtod(m, const uint8_t*);
    for (uint32_t i = 0; i < 60; ++i)
      if (p[i] != 0x5a) {
        EXPECT_EQ(i, 20u) << "only byte 20 may change";
        ++changed;
      }
  }
  EXPECT_EQ(changed, r.port->counters(1).corrupted.get());
  EXPECT_NEAR(static_cast<double>(changed) / kN, 0.5, 0.06);
  r.expect_no_leak();
}

TEST(FaultPort, DuplicatesArriveTwiceAndInOrder) {
  Rig r({.direction = FaultSpec::kTx | FaultSpec::kRx, .duplicate = 1.0});
  EXPECT_EQ(r.send(0, 50, kT), 50);
  const std::vector<uint32_t> d = r.delivered();
  ASSERT_EQ(d.size(), 100u);
  for (uint32_t i = 0; i < 50; ++i) {
    EXPECT_EQ(d[2 * i], i);
    EXPECT_EQ(d[2 * i + 1], i);
  }
  EXPECT_EQ(r.port->counters(1).duplicated.get(), 50u);
  // On rx a duplicate comes with the next burst, after the frames of this one.
  r.inject(100, 3);
  EXPECT_EQ(r.receive(kT), (std::vector<uint32_t>{100, 101, 102, 100, 101, 102}));
  r.expect_no_leak();
}

TEST(FaultPort, DelayHoldsFramesUntilTheirTimeEvenWithoutNewTraffic) {
  Rig r({.direction = FaultSpec::kTx | FaultSpec::kRx, .delay_ns = 10'000});
  EXPECT_EQ(r.send(0, 20, kT), 20);
  EXPECT_TRUE(r.delivered().empty());
  r.receive(kT + 9'999);  // a poll: nothing due yet
  EXPECT_TRUE(r.delivered().empty());
  r.receive(kT + 10'000);  // the poll at the release time flushes them, in order
  const std::vector<uint32_t> d = r.delivered();
  ASSERT_EQ(d.size(), 20u);
  for (uint32_t i = 0; i < 20; ++i) EXPECT_EQ(d[i], i);
  r.inject(100, 5);
  EXPECT_TRUE(r.receive(kT + 20'000).empty());
  EXPECT_EQ(r.receive(kT + 30'000).size(), 5u);
  EXPECT_EQ(r.port->counters(0).delayed.get(), 5u);
  EXPECT_EQ(r.port->counters(1).delayed.get(), 20u);
  r.expect_no_leak();
}

TEST(FaultPort, JitterReordersButLosesNothing) {
  Rig r({.direction = FaultSpec::kTx, .delay_ns = 1'000, .jitter_ns = 50'000});
  constexpr uint16_t kN = 500;
  for (uint16_t i = 0; i < kN; ++i) EXPECT_EQ(r.send(i, 1, kT + i * 100), 1);
  r.receive(kT + 1'000'000);
  std::vector<uint32_t> d = r.delivered();
  ASSERT_EQ(d.size(), kN);
  std::size_t inversions = 0;
  for (std::size_t i = 1; i < d.size(); ++i) inversions += d[i] < d[i - 1];
  EXPECT_GT(inversions, 10u);
  std::sort(d.begin(), d.end());
  for (uint32_t i = 0; i < kN; ++i) EXPECT_EQ(d[i], i);
  r.expect_no_leak();
}

TEST(FaultPort, AFullReceiverBacksUpIntoTheSwitchInOrder) {
  Rig r({.direction = FaultSpec::kTx, .delay_ns = 1});
  r.inner->accept = 0;
  uint32_t sent = 0;
  while (true) {
    const uint16_t took = r.send(sent, 32, kT + 10);
    sent += took;
    if (took < 32) break;
  }
  EXPECT_EQ(sent, FaultPort::kHoldCapacity) << "the port holds a bounded number, then refuses";
  r.inner->accept = 0xFFFF;
  r.receive(kT + 20);
  const std::vector<uint32_t> d = r.delivered();
  ASSERT_EQ(d.size(), sent);
  for (uint32_t i = 0; i < sent; ++i) ASSERT_EQ(d[i], i);
  r.expect_no_leak();
}

TEST(FaultPort, StuckReceiverTakesNothingAndSendsXoffUntilItRecovers) {
  FaultSpec f;
  f.stuck_start_ns = kT + 1'000;
  f.stuck_stop_ns = kT + 1'000'000;
  f.stuck_pfc = 1u << 3 | 1u << 4;
  f.stuck_quanta = 1000;  // 20.48 us at 25 Gb/s: refreshed every 10.24 us
  Rig r(f);
  EXPECT_EQ(r.send(0, 4, kT), 4) << "before the window";
  EXPECT_EQ(r.send(4, 4, kT + 1'000), 0) << "stuck: the switch keeps its frames";
  uint64_t xoff = 0;
  for (uint64_t t = kT + 1'000; t < kT + 100'000; t += 1'000) {
    rte_mbuf* b[4];
    const uint16_t k = r.port->rx_burst(b, 4, t);
    for (uint16_t i = 0; i < k; ++i) {
      PauseFrame pf;
      ASSERT_EQ(decode_mac_control(rte_pktmbuf_mtod(b[i], const uint8_t*), b[i]->data_len, pf), MacControlError::Ok);
      EXPECT_EQ(pf.enable, f.stuck_pfc);
      EXPECT_EQ(pf.quanta[3], 1000);
      EXPECT_EQ(pf.quanta[0], 0);
      ++xoff;
      rte_pktmbuf_free(b[i]);
    }
  }
  // 99 us of stuck time refreshed every 10.24 us (first frame at once).
  EXPECT_GE(xoff, 9u);
  EXPECT_LE(xoff, 11u);
  EXPECT_EQ(r.port->stuck_pfc_frames(), xoff);
  EXPECT_EQ(r.send(4, 4, kT + 1'000'000), 4) << "recovered";
  EXPECT_EQ(r.delivered().size(), 8u);
  r.expect_no_leak();
}

TEST(FaultPort, StopFreesWhatItHolds) {
  Rig r({.direction = FaultSpec::kTx | FaultSpec::kRx, .duplicate = 0.5, .delay_ns = 1'000'000});
  EXPECT_EQ(r.send(0, 200, kT), 200);
  r.inject(0, 200);
  EXPECT_TRUE(r.receive(kT).empty());
  EXPECT_GT(r.port->held(0) + r.port->held(1), 400u);
  r.expect_no_leak();
}

}  // namespace
}  // namespace rs::test
