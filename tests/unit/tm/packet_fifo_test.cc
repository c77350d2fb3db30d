// PacketFifo: the ring under every egress queue. pop_burst() (transmit's pop loop) against a
// plain deque model: its `max`, its `more` callback (the packet that says "no more" is still
// popped), the byte books, wrapping past capacity; and the limits enqueue checks with fits().
// Real mbufs from the test pool, all freed: each test checks the pool is whole again.
#include "dataplane/tm/queue/packet_fifo.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <vector>

#include "tests/support/eal_env.h"
#include "tests/support/seeded_rng.h"

namespace rs::test {
namespace {

class PacketFifoTest : public ::testing::Test {
 protected:
  void SetUp() override { avail_at_start = rte_mempool_avail_count(test_pool()); }
  void TearDown() override {
    for (rte_mbuf* m : taken) rte_pktmbuf_free(m);
    EXPECT_EQ(rte_mempool_avail_count(test_pool()), avail_at_start) << "an mbuf was lost or freed twice";
  }

  // A packet of `len` bytes; the test gives it back with give_back() once popped (or the
  // fixture frees it at the end if it is still queued: see drain()).
  rte_mbuf* pkt(uint32_t len) {
    rte_mbuf* m = rte_pktmbuf_alloc(test_pool());
    EXPECT_NE(m, nullptr);
    if (len) {
      char* p = rte_pktmbuf_append(m, static_cast<uint16_t>(len));
      EXPECT_NE(p, nullptr);
      std::memset(p, 0, len);
    }
    EXPECT_EQ(m->pkt_len, len);
    return m;
  }
  // Pushes `count` packets of first_len, first_len + 1, ... bytes; returns them in order.
  std::vector<rte_mbuf*> fill(PacketFifo& f, uint32_t count, uint32_t first_len) {
    std::vector<rte_mbuf*> v;
    for (uint32_t i = 0; i < count; ++i) {
      v.push_back(pkt(first_len + i));
      f.push(v.back());
    }
    return v;
  }
  // What is still queued goes back to the pool at TearDown.
  void drain(PacketFifo& f) {
    while (!f.empty()) taken.push_back(f.pop());
  }
  // Frees the first `n` of `pkts`: `n` is always what pop_burst returned, never what the test
  // expected, so a failing test does not free slots it was never given.
  void free_all(rte_mbuf* const* pkts, uint16_t n) {
    for (uint16_t i = 0; i < n; ++i) rte_pktmbuf_free(pkts[i]);
  }
  // Drains `f` when the test body ends, by a failed ASSERT too, so the pool check at TearDown
  // reports what the code lost, not what an aborted test left queued.
  struct Drained {
    PacketFifoTest* t;
    PacketFifo& f;
    ~Drained() { t->drain(f); }
  };

  std::vector<rte_mbuf*> taken;
  unsigned avail_at_start = 0;
};

constexpr auto kAlways = [](uint32_t) { return true; };

TEST_F(PacketFifoTest, ReserveRoundsUpToAPowerOfTwo) {
  PacketFifo f(5);  // 8 slots
  Drained guard{this, f};
  std::vector<rte_mbuf*> in;
  for (int i = 0; i < 8; ++i) {
    EXPECT_FALSE(f.full()) << i;
    in.push_back(pkt(100));
    f.push(in.back());
  }
  EXPECT_TRUE(f.full());
  EXPECT_EQ(f.packets(), 8u);
  EXPECT_EQ(f.bytes(), 800u);
  for (rte_mbuf* m : in) EXPECT_EQ(f.pop(), m);  // FIFO order
  EXPECT_TRUE(f.empty());
  free_all(in.data(), static_cast<uint16_t>(in.size()));
}

TEST_F(PacketFifoTest, PopBurstTakesAtMostMax) {
  PacketFifo f(16);
  Drained guard{this, f};
  std::vector<rte_mbuf*> in = fill(f, 10, 100);
  ASSERT_EQ(f.bytes(), 1045u);  // 100 + ... + 109
  rte_mbuf* out[32];
  uint64_t bytes = 7;  // the caller's running total: added to, not overwritten
  uint16_t n = f.pop_burst(out, 4, bytes, kAlways);
  EXPECT_EQ(n, 4u);
  for (int i = 0; i < std::min<int>(n, 4); ++i) EXPECT_EQ(out[i], in[i]) << i;
  EXPECT_EQ(bytes, 7u + 100 + 101 + 102 + 103);
  EXPECT_EQ(f.packets(), 6u);
  EXPECT_EQ(f.bytes(), 1045u - 406);
  EXPECT_EQ(f.front(), in[4]);
  free_all(out, n);

  // max 0: nothing, and `more` is never asked.
  int asked = 0;
  EXPECT_EQ(f.pop_burst(out, 0, bytes, [&](uint32_t) { return ++asked, true; }), 0u);
  EXPECT_EQ(asked, 0);
  EXPECT_EQ(f.packets(), 6u);

  // max above what is queued: the rest, in order, and the FIFO is empty.
  bytes = 0;
  n = f.pop_burst(out, 32, bytes, kAlways);
  EXPECT_EQ(n, 6u);
  for (int i = 0; i < std::min<int>(n, 6); ++i) EXPECT_EQ(out[i], in[4 + i]) << i;
  EXPECT_EQ(bytes, 1045u - 406);
  EXPECT_TRUE(f.empty());
  EXPECT_EQ(f.packets(), 0u);
  EXPECT_EQ(f.bytes(), 0u);
  free_all(out, n);

  // Empty: nothing, `more` never asked, the caller's total untouched.
  EXPECT_EQ(f.pop_burst(out, 32, bytes, [&](uint32_t) { return ++asked, true; }), 0u);
  EXPECT_EQ(asked, 0);
  EXPECT_EQ(bytes, 1045u - 406);
}

TEST_F(PacketFifoTest, PopBurstStopsAfterThePacketMoreRefuses) {
  // The shaper's `more` says whether *another* frame may start: the frame it was asked about
  // has started, so it is popped; nothing after it is.
  PacketFifo f(16);
  Drained guard{this, f};
  std::vector<rte_mbuf*> in;
  for (uint32_t i = 0; i < 8; ++i) {
    in.push_back(pkt(60 + 10 * i));
    f.push(in.back());
  }
  std::vector<uint32_t> asked;
  rte_mbuf* out[16];
  uint64_t bytes = 0;
  uint16_t n = f.pop_burst(out, 16, bytes, [&](uint32_t len) {
    asked.push_back(len);
    return asked.size() < 3;  // false for the third packet
  });
  EXPECT_EQ(n, 3u);
  EXPECT_EQ(asked, (std::vector<uint32_t>{60, 70, 80})) << "`more` gets each popped packet's length, in order";
  for (int i = 0; i < std::min<int>(n, 3); ++i) EXPECT_EQ(out[i], in[i]) << i;
  EXPECT_EQ(bytes, 210u);
  EXPECT_EQ(f.packets(), 5u);
  EXPECT_EQ(f.bytes(), 90u + 100 + 110 + 120 + 130);
  EXPECT_EQ(f.front(), in[3]);
  free_all(out, n);

  // Refusing at the very first packet still pops that one.
  asked.clear();
  bytes = 0;
  n = f.pop_burst(out, 16, bytes, [&](uint32_t len) { return asked.push_back(len), false; });
  EXPECT_EQ(n, 1u);
  if (n) {
    EXPECT_EQ(out[0], in[3]);
  }
  EXPECT_EQ(asked, (std::vector<uint32_t>{90}));
  EXPECT_EQ(bytes, 90u);
  EXPECT_EQ(f.packets(), 4u);
  EXPECT_EQ(f.bytes(), 100u + 110 + 120 + 130);
  free_all(out, n);

  // `max` reached before `more` says no: `max` wins, the last one is asked about too.
  asked.clear();
  n = f.pop_burst(out, 2, bytes, [&](uint32_t len) { return asked.push_back(len), true; });
  EXPECT_EQ(n, 2u);
  EXPECT_EQ(asked, (std::vector<uint32_t>{100, 110}));
  EXPECT_EQ(f.packets(), 2u);
  free_all(out, n);
}

TEST_F(PacketFifoTest, PopUptoTakesMinOfMaxAndQueuedAcrossTheWrap) {
  // pop_upto(): transmit's loop on a link that can take the whole queue. 8 slots; the head
  // moved to slot 6 first, so the 7 queued packets wrap past the end of the ring.
  PacketFifo f(8);
  Drained guard{this, f};
  for (int i = 0; i < 6; ++i) {
    f.push(pkt(60));
    taken.push_back(f.pop());
  }
  std::vector<rte_mbuf*> in;
  uint64_t queued = 0;
  for (uint32_t i = 0; i < 7; ++i) {
    in.push_back(pkt(60 + i));
    queued += 60 + i;
    f.push(in.back());
  }
  rte_mbuf* out[8];
  std::vector<uint32_t> seen;
  uint64_t bytes = 5;  // added to, not overwritten
  const uint16_t n = f.pop_upto(out, 4, bytes, [&](uint32_t len) { seen.push_back(len); });
  ASSERT_EQ(n, 4u) << "max wins when more are queued";
  for (uint16_t i = 0; i < n; ++i) EXPECT_EQ(out[i], in[i]) << i;
  EXPECT_EQ(seen, (std::vector<uint32_t>{60, 61, 62, 63})) << "each(len) once per packet, in order";
  EXPECT_EQ(bytes, 5u + 60 + 61 + 62 + 63);
  EXPECT_EQ(f.packets(), 3u);
  EXPECT_EQ(f.bytes(), queued - (60 + 61 + 62 + 63));
  free_all(out, n);
  seen.clear();
  const uint16_t m = f.pop_upto(out, 8, bytes, [&](uint32_t len) { seen.push_back(len); });
  ASSERT_EQ(m, 3u) << "the queue wins when it holds fewer than max";
  for (uint16_t i = 0; i < m; ++i) EXPECT_EQ(out[i], in[4 + i]) << i;
  EXPECT_EQ(seen, (std::vector<uint32_t>{64, 65, 66}));
  EXPECT_TRUE(f.empty());
  EXPECT_EQ(f.bytes(), 0u);
  free_all(out, m);
  EXPECT_EQ(f.pop_upto(out, 8, bytes, [](uint32_t) { ADD_FAILURE() << "called on an empty FIFO"; }), 0u);
}

TEST_F(PacketFifoTest, PopBurstWrapsAroundTheRing) {
  PacketFifo f(8);
  Drained guard{this, f};
  std::vector<rte_mbuf*> first = fill(f, 6, 200);
  rte_mbuf* out[16];
  uint64_t bytes = 0;
  uint16_t n = f.pop_burst(out, 5, bytes, kAlways);
  free_all(out, n);
  ASSERT_EQ(n, 5u);
  // One left at slot 5; seven more fill slots 6, 7, 0, ..., 4: the ring is full and wrapped.
  std::vector<rte_mbuf*> expect = {first[5]};
  for (uint32_t i = 0; i < 7; ++i) {
    expect.push_back(pkt(300 + i));
    f.push(expect.back());
  }
  EXPECT_TRUE(f.full());
  EXPECT_EQ(f.packets(), 8u);
  EXPECT_EQ(f.bytes(), 205u + 7 * 300 + 21);
  bytes = 0;
  n = f.pop_burst(out, 16, bytes, kAlways);
  EXPECT_EQ(n, 8u);
  for (int i = 0; i < std::min<int>(n, 8); ++i) EXPECT_EQ(out[i], expect[i]) << "position " << i;
  EXPECT_EQ(bytes, 205u + 7 * 300 + 21);
  EXPECT_TRUE(f.empty());
  EXPECT_EQ(f.bytes(), 0u);
  free_all(out, n);
}

TEST_F(PacketFifoTest, MatchesADequeOverManyLapsOfTheRing) {
  // Random pushes, pop()s, pop_burst()s (with random max and a random refusal), pop_upto()s
  // and take_all()s through a 16-slot ring, hundreds of laps: the same packets in the same
  // order as a deque, and the same packet, byte, cell and padded-frame sums after every step;
  // take_all() succeeds exactly when the packets fit `max` and sit in consecutive slots.
  PacketFifo f(16);
  Drained guard{this, f};
  constexpr uint32_t kCellMask = 255;  // 256-byte cells
  f.set_cell_mask(kCellMask);
  std::deque<rte_mbuf*> model;
  uint64_t model_bytes = 0;
  uint32_t head_slot = 0;  // the slot the FIFO's head is in, as the test predicts it
  Rng rng(0xf1f0);
  uint64_t popped = 0, taken_whole = 0, refused_wrapped = 0;
  auto sums = [&](auto first, auto last) {
    struct {
      uint64_t cells = 0, frames = 0;
    } r;
    for (auto it = first; it != last; ++it) {
      r.cells += ((*it)->pkt_len + kCellMask) & ~kCellMask;
      r.frames += std::max<uint32_t>((*it)->pkt_len, 60);
    }
    return r;
  };
  for (int step = 0; step < 20'000; ++step) {
    const uint64_t op = rng.between(0, 11);
    if (op < 5) {
      if (f.full()) continue;
      // A few runts (below the 60-byte minimum frame) among full-size frames.
      rte_mbuf* m = pkt(static_cast<uint32_t>(rng.between(0, 3) == 0 ? rng.between(0, 70) : rng.between(0, 1500)));
      f.push(m);
      model.push_back(m);
      model_bytes += m->pkt_len;
    } else if (op < 7) {
      if (f.empty()) continue;
      rte_mbuf* m = f.pop();
      ASSERT_EQ(m, model.front()) << "step " << step;
      model_bytes -= m->pkt_len;
      model.pop_front();
      rte_pktmbuf_free(m);
      ++popped;
      head_slot = (head_slot + 1) % 16;
    } else if (op == 9) {
      rte_mbuf* out[16];
      const uint16_t max = static_cast<uint16_t>(rng.between(0, 16));
      uint64_t bytes = 0, calls = 0;
      const uint16_t n = f.pop_upto(out, max, bytes, [&](uint32_t) { ++calls; });
      const std::size_t expect_n = std::min<std::size_t>(max, model.size());
      if (n != expect_n) free_all(out, n);
      ASSERT_EQ(n, expect_n) << "step " << step;
      ASSERT_EQ(calls, n);
      bool in_order = true;
      for (uint16_t i = 0; i < n; ++i) {
        in_order &= out[i] == model.front();
        model_bytes -= out[i]->pkt_len;
        model.pop_front();
      }
      free_all(out, n);
      ASSERT_TRUE(in_order) << "step " << step;
      popped += n;
      head_slot = (head_slot + n) % 16;
    } else if (op == 10) {
      const uint32_t max = static_cast<uint32_t>(rng.between(0, 16));
      const auto expect = sums(model.begin(), model.end());
      PacketFifo::Taken t{};
      rte_mbuf** all = f.take_all(max, t);
      const bool fits = model.size() <= max, consecutive = head_slot + model.size() <= 16;
      ASSERT_EQ(all != nullptr, fits && consecutive) << "step " << step << ": " << model.size() << " queued from slot "
                                                     << head_slot << ", max " << max;
      if (!all) {
        refused_wrapped += fits;
      } else {
        ASSERT_EQ(t.packets, model.size());
        ASSERT_EQ(t.bytes, model_bytes);
        ASSERT_EQ(t.cells, expect.cells);
        ASSERT_EQ(t.frame_bytes, expect.frames);
        bool in_order = true;
        for (uint32_t i = 0; i < t.packets; ++i) {
          in_order &= all[i] == model.front();
          model.pop_front();
        }
        for (uint32_t i = 0; i < t.packets; ++i) rte_pktmbuf_free(all[i]);
        ASSERT_TRUE(in_order) << "step " << step;
        model_bytes = 0;
        popped += t.packets;
        taken_whole += t.packets != 0;
        head_slot = 0;  // a FIFO taken whole starts again at slot 0
      }
    } else {
      rte_mbuf* out[16];
      const uint16_t max = static_cast<uint16_t>(rng.between(0, 16));
      const uint64_t refuse_at = rng.between(1, 20);  // the refusing call, if it comes
      uint64_t calls = 0, bytes = 3;
      const uint16_t n = f.pop_burst(out, max, bytes, [&](uint32_t) { return ++calls < refuse_at; });
      const std::size_t expect_n = std::min<std::size_t>({max, model.size(), refuse_at});
      if (n != expect_n) free_all(out, n);  // gone from the FIFO: the model must not walk past its end
      ASSERT_EQ(n, expect_n) << "step " << step;
      ASSERT_EQ(calls, n);
      uint64_t sum = 0;
      bool in_order = true;
      for (uint16_t i = 0; i < n; ++i) {
        in_order &= out[i] == model.front();
        sum += out[i]->pkt_len;
        model.pop_front();
      }
      free_all(out, n);
      ASSERT_TRUE(in_order) << "step " << step;
      model_bytes -= sum;
      ASSERT_EQ(bytes, 3 + sum);
      popped += n;
      head_slot = (head_slot + n) % 16;
    }
    ASSERT_EQ(f.packets(), model.size()) << "step " << step;
    ASSERT_EQ(f.bytes(), model_bytes) << "step " << step;
    const auto expect = sums(model.begin(), model.end());
    ASSERT_EQ(f.cells(), expect.cells) << "step " << step;
    ASSERT_EQ(f.frame_bytes(), expect.frames) << "step " << step;
    ASSERT_EQ(f.empty(), model.empty());
    ASSERT_EQ(f.full(), model.size() == 16);
    if (!model.empty()) {
      ASSERT_EQ(f.front(), model.front());
    }
  }
  EXPECT_GT(popped, 16u * 200) << "the ring should have wrapped hundreds of times";
  EXPECT_GT(taken_whole, 100u) << "take_all() should have taken non-empty queues";
  EXPECT_GT(refused_wrapped, 10u) << "take_all() should have met queues that wrap past the ring's end";
}

TEST_F(PacketFifoTest, TakeAllHandsOverTheQueuedSlotsWithTheirTotals) {
  // The egress fast case: a queue that drained last time (so starts at slot 0) goes out
  // whole; the caller passes the FIFO's own slots to the PMD, so they must be the packets in
  // order, and the FIFO must be empty and at slot 0 again at once.
  PacketFifo f(8);
  Drained guard{this, f};
  f.set_cell_mask(63);  // 64-byte cells
  std::vector<rte_mbuf*> in = {pkt(10), pkt(60), pkt(100)};
  for (rte_mbuf* m : in) f.push(m);
  EXPECT_EQ(f.cells(), 64u + 64 + 128);
  EXPECT_EQ(f.frame_bytes(), 60u + 60 + 100) << "the 10-byte runt is padded to the 60-byte minimum";
  PacketFifo::Taken t{};
  EXPECT_EQ(f.take_all(2, t), nullptr) << "three packets are more than max";
  EXPECT_EQ(f.packets(), 3u) << "a refused take_all() takes nothing";
  rte_mbuf** all = f.take_all(8, t);
  ASSERT_NE(all, nullptr);
  ASSERT_EQ(t.packets, 3u);
  for (uint32_t i = 0; i < t.packets; ++i) EXPECT_EQ(all[i], in[i]) << i;
  EXPECT_EQ(t.bytes, 170u);
  EXPECT_EQ(t.cells, 256u);
  EXPECT_EQ(t.frame_bytes, 220u);
  EXPECT_TRUE(f.empty());
  EXPECT_EQ(f.bytes(), 0u);
  EXPECT_EQ(f.cells(), 0u);
  EXPECT_EQ(f.frame_bytes(), 0u);
  EXPECT_EQ(f.front(), in[0]) << "the next push goes to slot 0";
  for (uint32_t i = 0; i < t.packets; ++i) taken.push_back(all[i]);
  // An empty FIFO is taken whole too (no packets, non-null): the caller sends nothing.
  all = f.take_all(8, t);
  EXPECT_NE(all, nullptr);
  EXPECT_EQ(t.packets, 0u);
}

TEST_F(PacketFifoTest, FitsAtThePacketAndByteLimits) {
  PacketFifo f(8);
  Drained guard{this, f};
  // No limits set: anything fits.
  EXPECT_EQ(f.limit_packets(), UINT32_MAX);
  EXPECT_EQ(f.limit_bytes(), UINT64_MAX);
  EXPECT_TRUE(f.fits(9216));
  f.set_limits(3, 1'000);
  EXPECT_EQ(f.limit_packets(), 3u);
  EXPECT_EQ(f.limit_bytes(), 1'000u);
  EXPECT_TRUE(f.fits(1'000)) << "exactly the byte limit fits";
  EXPECT_FALSE(f.fits(1'001));
  f.push(pkt(400));
  f.push(pkt(400));
  EXPECT_TRUE(f.fits(200)) << "800 + 200 = 1000: at the limit";
  EXPECT_FALSE(f.fits(201));
  f.push(pkt(100));  // three packets, 900 bytes: the packet limit now rules
  EXPECT_FALSE(f.fits(0)) << "three of three packets: even an empty one does not fit";
  EXPECT_FALSE(f.fits(100));
  // The first 400 out: room for one packet again, and for 1000 - 500 bytes.
  taken.push_back(f.pop());
  EXPECT_EQ(f.bytes(), 500u);
  EXPECT_TRUE(f.fits(500));
  EXPECT_FALSE(f.fits(501));
  // The limits are independent of the ring's capacity (8 slots here).
  f.set_limits(8, 500);
  EXPECT_FALSE(f.fits(1));
}

TEST_F(PacketFifoTest, RewindIfEmptyRestartsAtSlotZeroOnlyWhenEmpty) {
  PacketFifo f(8);
  Drained guard{this, f};
  rte_mbuf* a = pkt(100);
  rte_mbuf* b = pkt(200);
  rte_mbuf* c = pkt(300);
  f.push(a);
  f.push(b);
  f.push(c);
  taken.push_back(f.pop());  // a, from slot 0
  // Not empty: nothing moves.
  f.rewind_if_empty();
  EXPECT_EQ(f.packets(), 2u);
  EXPECT_EQ(f.bytes(), 500u);
  EXPECT_EQ(f.front(), b);
  taken.push_back(f.pop());
  taken.push_back(f.pop());
  ASSERT_TRUE(f.empty());
  // front() of an empty FIFO reads the slot the next push fills. Without a rewind that is
  // slot 3 (never written: null); after it, slot 0 again (still holding the stale `a`).
  EXPECT_EQ(f.front(), nullptr);
  f.rewind_if_empty();
  EXPECT_TRUE(f.empty());
  EXPECT_EQ(f.packets(), 0u);
  EXPECT_EQ(f.bytes(), 0u);
  EXPECT_EQ(f.front(), a) << "an emptied FIFO starts again at slot 0";
  // And it works as before: a full ring from slot 0, in order.
  std::vector<rte_mbuf*> in;
  for (int i = 0; i < 8; ++i) {
    in.push_back(pkt(64));
    f.push(in.back());
  }
  EXPECT_TRUE(f.full());
  rte_mbuf* out[8];
  uint64_t bytes = 0;
  const uint16_t n = f.pop_burst(out, 8, bytes, kAlways);
  EXPECT_EQ(n, 8u);
  for (int i = 0; i < std::min<int>(n, 8); ++i) EXPECT_EQ(out[i], in[i]);
  free_all(out, n);
}

}  // namespace
}  // namespace rs::test
