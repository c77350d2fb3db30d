// The emulated cable on its own: frames leave one after the other at the link rate with the
// wire's overhead and arrive a propagation delay later, in order; a loss rate loses about that
// share (the same frames for the same seed); a cut link loses carrier and what is sent into it;
// a full cable refuses frames (the sender keeps them).
#include "dataplane/fabric/emulated_link.h"

#include <gtest/gtest.h>

#include <vector>

#include "tests/support/constants.h"

namespace rs::test {
namespace {

rte_mbuf* frame(uint32_t len) {
  rte_mbuf* m = rte_pktmbuf_alloc(test_pool());
  EXPECT_NE(m, nullptr);
  rte_pktmbuf_append(m, static_cast<uint16_t>(len));
  return m;
}

uint16_t rx(Port& p, uint64_t now, std::vector<rte_mbuf*>* keep = nullptr) {
  rte_mbuf* got[32];
  const uint16_t n = p.rx_burst(got, 32, now);
  for (uint16_t i = 0; i < n; ++i) keep ? keep->push_back(got[i]) : rte_pktmbuf_free(got[i]);
  return n;
}

TEST(EmulatedLink, SerialisesAtTheRateAndDelays) {
  EmulatedLink link("l", {.gbps = 10, .delay_ns = 1000});
  auto a = link.make_end(0), b = link.make_end(1);
  // 1000-byte frames: 1024 bytes on the wire (FCS, preamble, gap) = 819.2 ns at 10 Gb/s.
  rte_mbuf* two[2] = {frame(1000), frame(1000)};
  EXPECT_EQ(a->tx_burst(two, 2, kT0), 2);
  EXPECT_EQ(link.in_flight(), 2u);
  EXPECT_EQ(rx(*b, kT0 + 1818), 0) << "the first frame's last bit is still on its way";
  EXPECT_EQ(rx(*a, kT0 + 5000), 0) << "nothing comes back the other way";
  EXPECT_EQ(rx(*b, kT0 + 1820), 1);
  EXPECT_EQ(rx(*b, kT0 + 2637), 0);
  EXPECT_EQ(rx(*b, kT0 + 2638), 1) << "the second right behind it: 1638.4 ns, whole nanoseconds down";
  EXPECT_EQ(link.in_flight(), 0u);
  // A frame sent later than the cable is busy starts when it is sent.
  rte_mbuf* one[1] = {frame(1000)};
  EXPECT_EQ(b->tx_burst(one, 1, kT0 + 10'000), 1);
  EXPECT_EQ(link.next_arrival_ns(), kT0 + 10'000 + 1000 + 819);
  EXPECT_EQ(rx(*a, kT0 + 11'819), 1);
  EXPECT_EQ(link.next_arrival_ns(), UINT64_MAX);
}

TEST(EmulatedLink, LosesAboutItsRateTheSameFramesForTheSameSeed) {
  auto run = [](uint64_t seed) {
    EmulatedLink link("lossy", {.gbps = 100, .loss = 0.1, .seed = seed});
    auto a = link.make_end(0), b = link.make_end(1);
    std::vector<int> got;
    for (int i = 0; i < 4000; ++i) {
      rte_mbuf* m[1] = {frame(100)};
      *rte_pktmbuf_mtod(m[0], uint32_t*) = static_cast<uint32_t>(i);
      EXPECT_EQ(a->tx_burst(m, 1, kT0 + static_cast<uint64_t>(i) * 100), 1);
      std::vector<rte_mbuf*> in;
      rx(*b, kT0 + static_cast<uint64_t>(i) * 100 + 99, &in);
      for (rte_mbuf* x : in) got.push_back(static_cast<int>(*rte_pktmbuf_mtod(x, uint32_t*))), rte_pktmbuf_free(x);
    }
    std::vector<rte_mbuf*> in;
    rx(*b, UINT64_MAX - 1, &in);
    for (rte_mbuf* x : in) got.push_back(static_cast<int>(*rte_pktmbuf_mtod(x, uint32_t*))), rte_pktmbuf_free(x);
    EXPECT_EQ(got.size() + link.lost(), 4000u);
    EXPECT_TRUE(std::is_sorted(got.begin(), got.end())) << "in order";
    return got;
  };
  const auto x = run(1), y = run(1), z = run(2);
  EXPECT_NEAR(static_cast<double>(x.size()), 3600, 120);
  EXPECT_EQ(x, y);
  EXPECT_NE(x, z);
}

TEST(EmulatedLink, ACutLinkHasNoCarrierAndLosesWhatIsSent) {
  EmulatedLink link("cut", {.gbps = 100, .delay_ns = 100});
  auto a = link.make_end(0), b = link.make_end(1);
  EXPECT_TRUE(a->carrier());
  link.set_up(false);
  EXPECT_FALSE(a->carrier());
  EXPECT_FALSE(b->carrier());
  rte_mbuf* m[1] = {frame(64)};
  EXPECT_EQ(a->tx_burst(m, 1, kT0), 1) << "taken, and lost";
  EXPECT_EQ(link.lost(), 1u);
  EXPECT_EQ(rx(*b, kT0 + kMs), 0);
  link.set_up(true);
  m[0] = frame(64);
  EXPECT_EQ(a->tx_burst(m, 1, kT0 + kMs), 1);
  EXPECT_EQ(rx(*b, kT0 + 2 * kMs), 1);
  nlohmann::json j;
  link.stats(j);
  EXPECT_EQ(j["directions"][0]["lost_link_down"], 1);
  EXPECT_EQ(j["directions"][0]["received_frames"], 1);
}

TEST(EmulatedLink, AFullCableRefusesTheRest) {
  EmulatedLink link("short", {.gbps = 1, .delay_ns = 0, .capacity = 4});
  auto a = link.make_end(0);
  rte_mbuf* m[6];
  for (auto& x : m) x = frame(64);
  const uint16_t took = a->tx_burst(m, 6, kT0);
  EXPECT_EQ(took, 4);
  for (uint16_t i = took; i < 6; ++i) rte_pktmbuf_free(m[i]);  // the sender's to count and free
}

}  // namespace
}  // namespace rs::test
