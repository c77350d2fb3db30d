// The emulated host's cable: each direction carries a frame for its serialisation time at the
// link rate (wire_bytes()), as the fabric's cables do. A frame the switch hands over at t
// reaches the host's counters, tracker and MAC when its last bit does, one after the other on a
// virtual clock, each its own serialisation after its handover in real time; a PFC frame goes
// at the next frame boundary, ahead of data not yet started; a frame the host
// starts at t comes out of rx_burst then; a held frame is an event for a fabric's clock
// (idle_until); a stopped switch's cable still delivers to the host and frees the rest; a full
// cable delivers its oldest frame early rather than lose one; a host behind a real wire
// (WiredHost) does not serialise twice.
#include <gtest/gtest.h>

#include <rte_byteorder.h>
#include <rte_ip.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "dataplane/core/types.h"
#include "dataplane/emu/emulated_host.h"
#include "dataplane/tm/queue/shaper.h"
#include "tests/support/constants.h"
#include "tests/support/eal_env.h"
#include "tests/support/host_net.h"
#include "tests/support/packet_builder.h"

namespace rs::test {
namespace {

constexpr double kGbps = 25;
const uint32_t kSender = rte_cpu_to_be_32(RTE_IPV4(10, 0, 7, 2));

// The first whole ns by which a frame started at `start_ns` and taking `ser` ns has its last bit in.
uint64_t last_bit(uint64_t start_ns, double ser) { return start_ns + static_cast<uint64_t>(std::ceil(ser)); }
double ser_ns(uint32_t len) { return wire_bytes(len) * 8.0 / kGbps; }

HostSpec receiver() {
  HostSpec h;
  h.ip = rte_cpu_to_be_32(RTE_IPV4(10, 0, 9, 2));
  h.mac = mac_of(9, false);
  h.bucket_ns = 200;  // on a virtual clock, as a fabric runs its hosts
  return h;
}

rte_mbuf* roce(uint32_t psn) {
  const PacketSpec s = Eth{} / Ipv4{.src = "10.0.7.2", .dst = "10.0.9.2", .dscp = kRoceDscp} / Udp{} /
                       Bth{.opcode = 0x04, .dest_qp = 0x77, .psn = psn} / Payload::of_size(kPayload);
  rte_mbuf* m = s.mbuf(test_pool());
  EXPECT_NE(m, nullptr);
  return m;
}

rte_mbuf* pfc_xoff(uint8_t priority, uint16_t quanta) {
  const std::vector<uint8_t> f = pfc_frame(static_cast<uint8_t>(1u << priority), quanta);
  rte_mbuf* m = rte_pktmbuf_alloc(test_pool());
  std::memcpy(rte_pktmbuf_append(m, static_cast<uint16_t>(f.size())), f.data(), f.size());
  return m;
}

// rx_burst at `now`, every frame it gives freed; how many.
uint16_t poll_rx(EmulatedHost& h, uint64_t now) {
  rte_mbuf* b[kBurst];
  const uint16_t n = h.rx_burst(b, kBurst, now);
  rte_pktmbuf_free_bulk(b, n);
  return n;
}

RxFlowStats flow(const EmulatedHost& h) {
  RxFlowStats s;
  h.rx_tracker().find(kSender, 0x77, s);
  return s;
}

TEST(HostWire, TheHostReceivesAFrameWhenItsLastBitArrives) {
  EmulatedHost h(receiver(), mac_of(1, true), kGbps, test_pool(), kT0);
  rte_mbuf* m = roce(0);
  ASSERT_EQ(m->pkt_len, kFrame);
  const uint64_t due = last_bit(kT0, ser_ns(kFrame));
  ASSERT_EQ(h.tx_burst(&m, 1, kT0), 1);
  EXPECT_EQ(h.received_packets(), 0u) << "only the first bit is in";
  EXPECT_EQ(h.on_wire_to_host(), 1u);
  EXPECT_EQ(h.idle_until(kT0), due) << "a frame on the cable is an event at its arrival";
  EXPECT_EQ(poll_rx(h, due - 1), 0);
  EXPECT_EQ(h.received_packets(), 0u);
  EXPECT_EQ(poll_rx(h, due), 0);
  EXPECT_EQ(h.received_packets(), 1u) << "the next call at or after its arrival receives it";
  EXPECT_EQ(h.on_wire_to_host(), 0u);
  EXPECT_EQ(flow(h).first_ns, due);
  EXPECT_EQ(h.idle_until(due), UINT64_MAX);
}

TEST(HostWire, FramesHandedOverTogetherArriveOneSerialisationApart) {
  EmulatedHost h(receiver(), mac_of(1, true), kGbps, test_pool(), kT0);
  rte_mbuf* b[3] = {roce(0), roce(1), roce(2)};
  ASSERT_EQ(h.tx_burst(b, 3, kT0), 3);
  const double s = ser_ns(kFrame);
  for (uint64_t k = 1; k <= 3; ++k) {
    const uint64_t due = last_bit(kT0, k * s);
    EXPECT_EQ(h.idle_until(kT0), due);
    poll_rx(h, due - 1);
    EXPECT_EQ(h.received_packets(), k - 1) << "frame " << k;
    poll_rx(h, due);
    EXPECT_EQ(h.received_packets(), k) << "frame " << k;
  }
  // One handed over while the cable is still busy starts when the one before has ended...
  rte_mbuf* a = roce(3);
  rte_mbuf* c = roce(4);
  ASSERT_EQ(h.tx_burst(&a, 1, kT0 + 2000), 1);
  ASSERT_EQ(h.tx_burst(&c, 1, kT0 + 2100), 1);
  const uint64_t a_due = last_bit(kT0 + 2000, s), c_due = last_bit(kT0 + 2000, 2 * s);
  // ...and the tx_burst that hands over the next receives what has arrived by then.
  rte_mbuf* d = roce(5);
  ASSERT_EQ(h.tx_burst(&d, 1, a_due), 1);
  EXPECT_EQ(h.received_packets(), 4u);
  poll_rx(h, c_due - 1);
  EXPECT_EQ(h.received_packets(), 4u);
  poll_rx(h, c_due);
  EXPECT_EQ(h.received_packets(), 5u);
  poll_rx(h, last_bit(kT0 + 2000, 3 * s));
  EXPECT_EQ(h.received_packets(), 6u);
  EXPECT_EQ(flow(h).out_of_order, 0u);
}

TEST(HostWire, InRealTimeEachFrameArrivesItsOwnSerialisationAfterItsHandover) {
  HostSpec spec = receiver();
  spec.bucket_ns = 0;  // a worker on the machine's clock: its shaper's burst stands for missed wire time
  EmulatedHost h(spec, mac_of(1, true), kGbps, test_pool(), kT0);
  rte_mbuf* b[3] = {roce(0), roce(1), roce(2)};
  ASSERT_EQ(h.tx_burst(b, 3, kT0), 3);
  const uint64_t due = last_bit(kT0, ser_ns(kFrame));
  EXPECT_EQ(h.idle_until(kT0), due);
  poll_rx(h, due - 1);
  EXPECT_EQ(h.received_packets(), 0u);
  poll_rx(h, due);
  EXPECT_EQ(h.received_packets(), 3u);
  EXPECT_EQ(flow(h).out_of_order, 0u);
}

TEST(HostWire, APauseActsWhenItHasArrived) {
  EmulatedHost h(receiver(), mac_of(1, true), kGbps, test_pool(), kT0);
  rte_mbuf* x = pfc_xoff(3, 1000);
  const uint64_t due = last_bit(kT0, ser_ns(x->pkt_len));  // a minimum frame's wire time
  ASSERT_EQ(h.tx_burst(&x, 1, kT0), 1);
  poll_rx(h, due - 1);
  EXPECT_FALSE(h.paused(3, due - 1));
  EXPECT_EQ(h.pfc_received(), 0u);
  poll_rx(h, due);
  EXPECT_EQ(h.pfc_received(), 1u);
  EXPECT_TRUE(h.paused(3, due));
  EXPECT_EQ(h.received_packets(), 0u) << "a MAC control frame is not a received packet";
}

TEST(HostWire, APauseOvertakesDataThatHasNotStarted) {
  EmulatedHost h(receiver(), mac_of(1, true), kGbps, test_pool(), kT0);
  rte_mbuf* b[3] = {roce(0), roce(1), roce(2)};
  ASSERT_EQ(h.tx_burst(b, 3, kT0), 3);
  rte_mbuf* x = pfc_xoff(3, 1000);
  const uint64_t due = last_bit(kT0, ser_ns(kFrame)) + static_cast<uint64_t>(std::ceil(ser_ns(x->pkt_len)));
  ASSERT_EQ(h.tx_burst(&x, 1, kT0 + 10), 1);
  EXPECT_EQ(h.on_wire_to_host(), 4u);
  EXPECT_EQ(h.idle_until(kT0 + 10), last_bit(kT0, ser_ns(kFrame)));
  poll_rx(h, due - 1);
  EXPECT_EQ(h.received_packets(), 1u) << "the frame on the wire when the pause came";
  EXPECT_EQ(h.pfc_received(), 0u);
  poll_rx(h, due);
  EXPECT_EQ(h.pfc_received(), 1u) << "next after the frame in progress";
  EXPECT_EQ(h.received_packets(), 1u) << "the rest had not started";
  h.stop();
  EXPECT_EQ(h.received_packets(), 3u);
}

TEST(HostWire, TheSwitchGetsAFrameWhenItsLastBitLeavesTheHost) {
  HostSpec spec = receiver();
  spec.bucket_ns = 200;  // as a fabric sets it
  HostFlowSpec f;
  f.dst_ip = rte_cpu_to_be_32(RTE_IPV4(10, 0, 7, 2));
  f.rate_gbps = 10;
  f.payload = kPayload;
  f.stop_ns = kT0 + 101;  // one frame: the one the first credit allows at kT0 + 100
  spec.flows.push_back(f);
  EmulatedHost h(spec, mac_of(1, true), kGbps, test_pool(), kT0);
  EXPECT_EQ(poll_rx(h, kT0), 0) << "no credit yet";
  rte_mbuf* b[kBurst];
  EXPECT_EQ(h.rx_burst(b, kBurst, kT0 + 100), 0) << "the frame has started, its last bit is not out";
  EXPECT_EQ(h.on_wire_to_switch(), 1u);
  EXPECT_EQ(h.sent_packets(), 0u) << "tx_packets counts frames that reached the switch";
  const uint64_t due = last_bit(kT0 + 100, ser_ns(kFrame));
  EXPECT_EQ(h.idle_until(kT0 + 200), due) << "the flow has stopped; the frame on the cable is the next event";
  EXPECT_EQ(h.rx_burst(b, kBurst, due - 1), 0);
  ASSERT_EQ(h.rx_burst(b, kBurst, due), 1);
  EXPECT_EQ(b[0]->pkt_len, kFrame);
  rte_pktmbuf_free(b[0]);
  EXPECT_EQ(h.sent_packets(), 1u);
  EXPECT_EQ(h.idle_until(due), UINT64_MAX);
}

TEST(HostWire, ABackloggedHostDeliversAtItsLinkRate) {
  HostSpec spec = receiver();
  spec.bucket_ns = 200;
  HostFlowSpec f;
  f.dst_ip = rte_cpu_to_be_32(RTE_IPV4(10, 0, 7, 2));
  f.rate_gbps = 100;  // above the link: the link paces it
  f.payload = kPayload;
  spec.flows.push_back(f);
  EmulatedHost h(spec, mac_of(1, true), kGbps, test_pool(), kT0);
  uint64_t got = 0;
  constexpr uint64_t kRun = 200 * kUs;
  for (uint64_t t = kT0; t <= kT0 + kRun; t += 100) got += poll_rx(h, t);
  const double frames = kRun / ser_ns(kFrame);
  EXPECT_NEAR(static_cast<double>(got), frames, 3.0) << "one frame a serialisation, less the one on the cable";
  EXPECT_LE(h.on_wire_to_switch(), 3u) << "a fabric step's worth of frames on the cable at most";
}

TEST(HostWire, AStoppedSwitchsCableStillDeliversAndFreesTheRest) {
  const unsigned avail = rte_mempool_avail_count(test_pool());
  {
    HostSpec spec = receiver();
    spec.bucket_ns = 200;
    HostFlowSpec f;
    f.dst_ip = kSender;
    f.rate_gbps = 25;
    spec.flows.push_back(f);
    EmulatedHost h(spec, mac_of(1, true), kGbps, test_pool(), kT0);
    rte_mbuf* b[2] = {roce(0), roce(1)};
    ASSERT_EQ(h.tx_burst(b, 2, kT0 + 100), 2);
    poll_rx(h, kT0 + 100);
    EXPECT_GT(h.on_wire_to_switch(), 0u);
    EXPECT_EQ(h.received_packets(), 0u);
    h.stop();
    EXPECT_EQ(h.received_packets(), 2u) << "the switch counted them sent: the host gets them";
    EXPECT_EQ(flow(h).last_ns, last_bit(kT0 + 100, 2 * ser_ns(kFrame))) << "each at its own time";
    EXPECT_EQ(h.on_wire_to_host(), 0u);
    EXPECT_EQ(h.on_wire_to_switch(), 0u);
    EXPECT_EQ(h.sent_packets(), 0u) << "what never reached the switch is not sent";
    h.stop();  // a switch's destructor stops its ports again
    // And one destroyed with frames on its cable frees them.
    EmulatedHost g(receiver(), mac_of(2, true), kGbps, test_pool(), kT0);
    rte_mbuf* c = roce(2);
    ASSERT_EQ(g.tx_burst(&c, 1, kT0), 1);
  }
  EXPECT_EQ(rte_mempool_avail_count(test_pool()), avail) << "an mbuf leaked";
}

TEST(HostWire, AFullCableDeliversItsOldestFrameEarlyAndLosesNone) {
  EmulatedHost h(receiver(), mac_of(1, true), kGbps, test_pool(), kT0);
  constexpr uint32_t kMore = 40;
  uint32_t psn = 0;
  for (uint32_t n = 0; n < EmulatedHost::kWireFrames + kMore; n += kBurst) {
    rte_mbuf* b[kBurst];
    const uint16_t k = static_cast<uint16_t>(std::min<uint32_t>(kBurst, EmulatedHost::kWireFrames + kMore - n));
    for (uint16_t i = 0; i < k; ++i) b[i] = roce(psn++);
    ASSERT_EQ(h.tx_burst(b, k, kT0), k) << "a host takes every frame";
  }
  EXPECT_EQ(h.on_wire_to_host(), EmulatedHost::kWireFrames);
  EXPECT_EQ(h.received_packets(), kMore);
  nlohmann::json j;
  h.stats(j);
  EXPECT_EQ(j["host"]["rx_wire_full"], kMore);
  h.stop();
  EXPECT_EQ(h.received_packets(), EmulatedHost::kWireFrames + kMore);
  const RxFlowStats s = flow(h);
  EXPECT_EQ(s.out_of_order + s.late + s.missing, 0u) << "in order";
}

TEST(HostWire, ARealWireSerialisesInsteadOfTheCable) {
  HostSpec spec = receiver();
  spec.bucket_ns = 200;
  HostFlowSpec f;
  f.dst_ip = kSender;
  f.rate_gbps = 10;
  f.stop_ns = kT0 + 101;
  spec.flows.push_back(f);
  EmulatedHost h(spec, mac_of(1, true), kGbps, test_pool(), kT0);
  h.set_wire_serialisation(false);
  rte_mbuf* m = roce(0);
  ASSERT_EQ(h.tx_burst(&m, 1, kT0), 1);
  EXPECT_EQ(h.received_packets(), 1u);
  poll_rx(h, kT0);
  EXPECT_EQ(poll_rx(h, kT0 + 100), 1) << "out as it is made";
  EXPECT_EQ(h.idle_until(kT0 + 200), UINT64_MAX);
}

}  // namespace
}  // namespace rs::test
