// rewrite_enqueue: the rewrite (next-hop DMAC, egress-port SMAC, TTL / hop-limit decrement with
// an incremental IPv4 checksum that must equal a full recompute for every checksum value, carry
// cases included, and a RoCE ICRC that stays valid because only fields it masks change), then the
// enqueue: a packet whose egress port this worker owns goes straight into that port's priority
// queue (from meta.queue); one owned by another worker lands in the handoff burst for that
// worker. Consumes every packet (no next edges).
#include "dataplane/stages/rewrite_enqueue.h"

#include <fmt/core.h>
#include <gtest/gtest.h>
#include <rte_ether.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "dataplane/proto/icrc.h"
#include "dataplane/tm/queue/egress_port.h"
#include "tests/support/fake_port.h"
#include "tests/support/stage_harness.h"
#include "tests/unit/stages/stage_test_util.h"

namespace rs::test {
namespace {

constexpr const char* kNhMac = "02:00:00:00:bb:02";

// What the rewrite must produce, computed independently: new MACs, TTL - 1 and a checksum
// summed from scratch (IPv4), hop limit - 1 (IPv6). Everything else byte for byte the same.
std::vector<uint8_t> expected_rewrite(std::vector<uint8_t> f, const rte_ether_addr& dmac, const rte_ether_addr& smac,
                                      std::size_t l3, bool v6) {
  std::memcpy(&f[0], dmac.addr_bytes, 6);
  std::memcpy(&f[6], smac.addr_bytes, 6);
  if (v6) {
    f[l3 + 7] = static_cast<uint8_t>(f[l3 + 7] - 1);
  } else {
    f[l3 + 8] = static_cast<uint8_t>(f[l3 + 8] - 1);
    const uint16_t c = ipv4_full_checksum(f, l3);
    f[l3 + 10] = static_cast<uint8_t>(c >> 8);
    f[l3 + 11] = static_cast<uint8_t>(c);
  }
  return f;
}

// Length of the IP datagram (header through ICRC) from its own length field.
std::size_t datagram_len(const std::vector<uint8_t>& f, std::size_t l3, bool v6) {
  if (v6) return 40u + (f[l3 + 4] << 8 | f[l3 + 5]);
  return static_cast<std::size_t>(f[l3 + 2] << 8 | f[l3 + 3]);
}

// noinline: GCC 12 at -O2 reports a false -Wmaybe-uninitialized in std::variant's move when the
// packet builder is inlined into a loop.
[[gnu::noinline]] PacketSpec roce(int i) {
  return Eth{} / Ipv4{} / Udp{.sport = static_cast<uint16_t>(0xC000 + i)} / Bth{.psn = static_cast<uint32_t>(i)} / Payload::of_size(64);
}

// World: 4 ports. This worker (0) owns ports 0 and 1; worker 2 owns port 2, worker 3 port 3.
class RewriteEnqueueTest : public ::testing::Test {
 public:  // checksum_mismatches() below drives it too
  void SetUp() override {
    w.port_owner[2] = 2;
    w.port_owner[3] = 3;
    for (uint16_t p = 0; p < 2; ++p) {
      port[p] = std::make_unique<FakePort>(p);
      port[p]->keep = true;
      egress[p] = std::make_unique<EgressPort>(p, port[p].get(), EgressConfig{}, 0);
      egress_ptrs[p] = egress[p].get();
    }
    // TestWorld leaves both null: a real worker wires them.
    w.ctx.egress = egress_ptrs;
    w.ctx.handoff = handoff;
  }
  void TearDown() override {
    for (auto& b : handoff) {
      for (uint16_t i = 0; i < b.n; ++i) rte_pktmbuf_free(b.pkts[i]);
      b.clear();
    }
    free_all(handed);
    for (auto& e : egress)
      if (e) e->flush(w.ctx, DropReason::Shutdown);
  }
  // Egress ports publish their counters once per transmit(); the stage alone never transmits.
  void publish() {
    for (auto& e : egress)
      if (e) e->publish_counters();
  }
  // Parsed packets with the metadata the route or nexthop_select stage writes: next hop `nh`
  // on port `out_port`, and queue `q` when given (else the classify step's).
  std::vector<rte_mbuf*> routed(const std::vector<PacketSpec>& specs, uint32_t nh, uint16_t out_port, int q = -1) {
    auto v = parsed(specs);
    for (auto* m : v) {
      meta(m).nexthop = nh;
      meta(m).out_port = out_port;
      if (q >= 0) meta(m).queue = meta(m).tc = static_cast<uint8_t>(q);
    }
    return v;
  }
  std::vector<rte_mbuf*> to_port(uint16_t out_port, uint8_t q, int n) {
    std::vector<PacketSpec> specs;
    for (int i = 0; i < n; ++i) specs.push_back(roce(i));
    return routed(specs, nh, out_port, q);
  }
  // Runs the packets a burst at a time and, as a worker does after each burst, moves what was
  // handed to other workers into `handed` (in order).
  void run(const std::vector<rte_mbuf*>& v) {
    for (std::size_t at = 0; at < v.size(); at += kBurst) {
      std::vector<rte_mbuf*> burst(v.begin() + static_cast<long>(at), v.begin() + static_cast<long>(std::min(v.size(), at + kBurst)));
      auto out = h.run_mbufs(burst);
      EXPECT_TRUE(out.edge.empty()) << "every packet is consumed";
      for (auto& b : handoff) {
        handed.insert(handed.end(), b.pkts, b.pkts + b.n);
        b.clear();
      }
    }
  }
  // The packets queued on local port `p`, queue `q`, front first.
  std::vector<rte_mbuf*> queued(uint16_t p, uint8_t q) const {
    std::vector<rte_mbuf*> v;
    for (uint32_t i = 0; i < egress[p]->fifo(q).packets(); ++i) v.push_back(egress[p]->fifo(q).at(i));
    return v;
  }

  TestWorld w;
  StageHarness<RewriteEnqueue> h{{}, &w};
  uint32_t nh = w.fib->add_nexthop({2, mac(kNhMac)});
  std::unique_ptr<FakePort> port[2];
  std::unique_ptr<EgressPort> egress[2];
  EgressPort* egress_ptrs[kMaxPorts] = {};
  Burst handoff[kMaxWorkers];
  std::vector<rte_mbuf*> handed;
};

// --- Rewrite ----------------------------------------------------------------------------------

TEST_F(RewriteEnqueueTest, Ipv4MacsTtlAndChecksum) {
  const PacketSpec s = Eth{} / Ipv4{.dscp = 26, .ttl = 64} / Udp{} / Bth{} / Payload::of_size(64);
  const auto before = s.bytes();
  run(routed({s}, nh, 2));
  ASSERT_EQ(handed.size(), 1u);
  const auto after = mbuf_bytes(handed[0]);
  EXPECT_EQ(0, std::memcmp(&after[0], mac(kNhMac).addr_bytes, 6)) << "DMAC = next hop MAC";
  EXPECT_EQ(0, std::memcmp(&after[6], w.port_mac[2].addr_bytes, 6)) << "SMAC = egress port MAC";
  EXPECT_EQ(after[14 + 8], 63);
  EXPECT_TRUE(ipv4_checksum_ok(after));
  EXPECT_EQ(after, expected_rewrite(before, mac(kNhMac), w.port_mac[2], 14, false));
  EXPECT_EQ(h.counter("ipv4"), 1u);
  EXPECT_EQ(h.counter("ipv6"), 0u);
}

TEST_F(RewriteEnqueueTest, Ipv6MacsAndHopLimit) {
  const PacketSpec s = Eth{} / Ipv6{.dscp = 3, .hop_limit = 2, .flow_label = 0xABCDE} / Udp{} / Bth{} / Payload::of_size(64);
  const auto before = s.bytes();
  run(routed({s}, nh, 2));
  ASSERT_EQ(handed.size(), 1u);
  const auto after = mbuf_bytes(handed[0]);
  EXPECT_EQ(after[14 + 7], 1);
  EXPECT_EQ(after, expected_rewrite(before, mac(kNhMac), w.port_mac[2], 14, true));
  EXPECT_EQ(h.counter("ipv6"), 1u);
}

TEST_F(RewriteEnqueueTest, VlanTaggedKeepsTheTag) {
  // The IP header sits at l3_offset 18; the tag (PCP 3) and the EtherTypes are not touched.
  const PacketSpec s = Eth{} / Vlan{.pcp = 3, .vid = 77} / Ipv4{.ttl = 10} / Udp{} / Bth{} / Payload::of_size(64);
  const auto before = s.bytes();
  run(routed({s}, nh, 2));
  ASSERT_EQ(handed.size(), 1u);
  const auto after = mbuf_bytes(handed[0]);
  EXPECT_EQ(after[18 + 8], 9);
  EXPECT_TRUE(ipv4_checksum_ok(after, 18));
  EXPECT_EQ(after, expected_rewrite(before, mac(kNhMac), w.port_mac[2], 18, false));
}

TEST_F(RewriteEnqueueTest, LocalPortGetsTheRewrittenFrame) {
  // Rewritten before it is queued: what sits in the local queue is what leaves.
  const PacketSpec s = Eth{} / Ipv4{.ttl = 33} / Udp{} / Bth{} / Payload::of_size(64);
  run(routed({s}, nh, 1, 5));
  const auto q = queued(1, 5);
  ASSERT_EQ(q.size(), 1u);
  EXPECT_EQ(mbuf_bytes(q[0]), expected_rewrite(s.bytes(), mac(kNhMac), w.port_mac[1], 14, false));
}

TEST_F(RewriteEnqueueTest, IcrcStaysValid) {
  // The switch never recomputes the ICRC: everything it changes must be masked by it.
  std::vector<PacketSpec> specs = {
      Eth{} / Ipv4{.dscp = 26, .ecn = 2, .ttl = 64} / Udp{.sport = 0xC0DE} / Bth{.opcode = 0x0a, .dest_qp = 0x123, .psn = 77} / Payload::of_size(256, 3),
      Eth{} / Vlan{.pcp = 3} / Ipv4{.ttl = 2} / Udp{} / Bth{} / Payload::of_size(61),
      Eth{} / Ipv6{.dscp = 3, .hop_limit = 64, .flow_label = 0x12345} / Udp{} / Bth{.psn = 0xFFFFFF} / Payload::of_size(1024),
      Eth{} / Ipv4{.dscp = 48} / Udp{} / Bth{.opcode = 0x81, .becn = true} / Payload::of_size(16),
  };
  for (const auto& s : specs) {
    const auto f = s.bytes();
    const std::size_t l3 = f[12] == 0x81 ? 18 : 14;
    const bool v6 = f[l3] >> 4 == 6;
    ASSERT_TRUE(roce_icrc_ok(&f[l3], datagram_len(f, l3, v6), v6)) << "the builder must make valid ICRCs";
  }
  run(routed(specs, nh, 2));
  ASSERT_EQ(handed.size(), specs.size());
  for (auto* m : handed) {
    const auto f = mbuf_bytes(m);
    const std::size_t l3 = meta(m).l3_offset;
    const bool v6 = meta(m).l3 == L3Type::Ipv6;
    EXPECT_TRUE(roce_icrc_ok(&f[l3], datagram_len(f, l3, v6), v6)) << "packet at l3 " << l3 << (v6 ? " v6" : " v4");
  }
}

TEST_F(RewriteEnqueueTest, IcrcCheckIsSensitive) {
  // Guard for the test above: a change the ICRC covers (one payload byte) must fail it.
  auto f = (Eth{} / Ipv4{} / Udp{} / Bth{} / Payload::of_size(64)).bytes();
  f[14 + 20 + 8 + 12 + 5] ^= 1;
  EXPECT_FALSE(roce_icrc_ok(&f[14], datagram_len(f, 14, false), false));
}

TEST_F(RewriteEnqueueTest, PayloadUntouchedInLargeFrames) {
  // A full-MTU RoCE write (1500 bytes of payload, one mbuf of the test pool): every byte past
  // the IPv4 header must come out as it went in.
  const PacketSpec s = Eth{} / Ipv4{.ttl = 200} / Udp{} / Bth{.opcode = 0x0a} / Payload::of_size(1500, 9);
  const auto before = s.bytes();
  run(routed({s}, nh, 2));
  ASSERT_EQ(handed.size(), 1u);
  const auto after = mbuf_bytes(handed[0]);
  ASSERT_EQ(after.size(), before.size());
  EXPECT_TRUE(std::equal(before.begin() + 34, before.end(), after.begin() + 34)) << "bytes after the IPv4 header changed";
}

// Builds a raw IPv4/UDP frame whose header fields are random, TTL as given, and the source
// address' low 16 bits set to `w16`; checksum valid.
std::vector<uint8_t> random_v4(std::mt19937& rng, uint8_t ttl, uint16_t w16) {
  std::vector<uint8_t> f = (Eth{} / Ipv4{.ttl = ttl} / Udp{.dport = 9} / Payload::of_size(26)).bytes();
  const std::size_t l3 = 14;
  f[l3 + 1] = static_cast<uint8_t>(rng());   // DSCP/ECN
  f[l3 + 4] = static_cast<uint8_t>(rng());   // identification
  f[l3 + 5] = static_cast<uint8_t>(rng());
  f[l3 + 12] = static_cast<uint8_t>(rng());  // source address
  f[l3 + 13] = static_cast<uint8_t>(rng());
  f[l3 + 14] = static_cast<uint8_t>(w16 >> 8);
  f[l3 + 15] = static_cast<uint8_t>(w16);
  for (int i = 16; i < 20; ++i) f[l3 + i] = static_cast<uint8_t>(rng());  // destination address
  const uint16_t c = ipv4_full_checksum(f, l3);
  f[l3 + 10] = static_cast<uint8_t>(c >> 8);
  f[l3 + 11] = static_cast<uint8_t>(c);
  return f;
}

// Rewrites the frames (handed to worker 2) in pool-sized batches; returns how many headers
// mismatched a full sum.
int checksum_mismatches(RewriteEnqueueTest& t, const std::vector<std::vector<uint8_t>>& frames, std::string& first_bad) {
  int bad = 0;
  L3Input parse{StageEnv{}};
  for (std::size_t at = 0; at < frames.size(); at += 4096) {
    std::vector<rte_mbuf*> v;
    for (std::size_t i = at; i < std::min(frames.size(), at + 4096); ++i) {
      rte_mbuf* m = raw_mbuf(frames[i]);
      if (!m) return -1;
      EXPECT_EQ(parse.process_one(m), L3Input::Ipv4);
      meta(m).nexthop = t.nh;
      meta(m).out_port = 2;
      v.push_back(m);
    }
    t.run(v);
    EXPECT_EQ(t.handed.size(), v.size());
    for (std::size_t i = 0; i < t.handed.size(); ++i) {
      const auto got = mbuf_bytes(t.handed[i]);
      const auto want = expected_rewrite(frames[at + i], mac(kNhMac), t.w.port_mac[2], 14, false);
      if (got != want || !ipv4_checksum_ok(got)) {
        if (bad++ == 0)
          first_bad = fmt::format("ttl {} csum before {:04x} after {:04x} want {:04x}", frames[at + i][22],
                                  frames[at + i][24] << 8 | frames[at + i][25], got[24] << 8 | got[25],
                                  want[24] << 8 | want[25]);
      }
    }
    free_all(t.handed);
  }
  return bad;
}

TEST_F(RewriteEnqueueTest, IncrementalChecksumEqualsFullRecomputeForEveryChecksumValue) {
  // Sweeping the source address' low word over all 65536 values makes the original checksum
  // take every value 0x0000..0xFFFE, so each end-around-carry case of RFC 1624 eqn. 3 occurs
  // (including the -0/+0 case: an original checksum of 0x0000). TTL 64 and TTL 2 (-> 1).
  std::mt19937 rng(42);
  for (uint8_t ttl : {uint8_t{64}, uint8_t{2}}) {
    std::vector<std::vector<uint8_t>> frames;
    frames.reserve(65536);
    const auto fields_seed = static_cast<uint32_t>(rng());
    for (uint32_t w16 = 0; w16 < 65536; ++w16) {
      // The other fields stay fixed within a sweep, so only w16 moves the checksum.
      std::mt19937 fixed(fields_seed);
      frames.push_back(random_v4(fixed, ttl, static_cast<uint16_t>(w16)));
    }
    std::set<uint16_t> before;
    for (auto& f : frames) before.insert(static_cast<uint16_t>(f[24] << 8 | f[25]));
    EXPECT_GE(before.size(), 65535u) << "the sweep must reach every checksum value";
    EXPECT_TRUE(before.count(0x0000)) << "checksum 0x0000 is the carry edge";
    std::string first_bad;
    EXPECT_EQ(checksum_mismatches(*this, frames, first_bad), 0) << "ttl " << int{ttl} << ": " << first_bad;
  }
}

TEST_F(RewriteEnqueueTest, IncrementalChecksumForEveryTtl) {
  // Every TTL the rewrite can see (2..255) with random headers: the TTL/protocol word changes
  // by 0x0100 and borrows are never needed in the byte, but the sum may wrap.
  std::mt19937 rng(7);
  std::vector<std::vector<uint8_t>> frames;
  for (int rep = 0; rep < 16; ++rep)
    for (int ttl = 2; ttl <= 255; ++ttl) frames.push_back(random_v4(rng, static_cast<uint8_t>(ttl), static_cast<uint16_t>(rng())));
  std::string first_bad;
  EXPECT_EQ(checksum_mismatches(*this, frames, first_bad), 0) << first_bad;
}

// --- Enqueue ----------------------------------------------------------------------------------

TEST_F(RewriteEnqueueTest, OwnPortGoesToItsQueue) {
  auto v = to_port(1, 3, 5);
  run(v);
  publish();
  EXPECT_EQ(egress[1]->queue(3).enq_packets.get(), 5u);
  EXPECT_EQ(egress[1]->queue(3).depth_packets.get(), 5u);
  EXPECT_EQ(egress[1]->queued_packets(), 5u);
  EXPECT_EQ(egress[0]->queued_packets(), 0u);
  EXPECT_TRUE(handed.empty());
  EXPECT_EQ(h.counter("local"), 5u);
  EXPECT_EQ(h.counter("handoff"), 0u);
  // Let the shaper earn credit, then the packets leave through the fake port in order.
  w.ctx.now_ns = 1'000'000;
  EXPECT_EQ(egress[1]->transmit(w.ctx), 5);
  EXPECT_EQ(port[1]->kept, v);
}

TEST_F(RewriteEnqueueTest, QueueComesFromMeta) {
  auto a = to_port(0, 0, 2);
  auto b = to_port(0, 7, 3);
  a.insert(a.end(), b.begin(), b.end());
  run(a);
  publish();
  EXPECT_EQ(egress[0]->queue(0).enq_packets.get(), 2u);
  EXPECT_EQ(egress[0]->queue(7).enq_packets.get(), 3u);
  EXPECT_EQ(egress[0]->queued_packets(), 5u);
}

TEST_F(RewriteEnqueueTest, OtherWorkersPortGoesToItsHandoffBurst) {
  auto v2 = to_port(2, 3, 4);
  auto v3 = to_port(3, 5, 2);
  std::vector<rte_mbuf*> all = v2;
  all.insert(all.end(), v3.begin(), v3.end());
  auto out = h.run_mbufs(all);  // one burst; the handoff bursts are read before any flush
  publish();
  EXPECT_TRUE(out.edge.empty());
  ASSERT_EQ(handoff[2].n, 4);
  ASSERT_EQ(handoff[3].n, 2);
  for (uint16_t i = 0; i < 4; ++i) EXPECT_EQ(handoff[2].pkts[i], v2[i]) << "order within a handoff burst is kept";
  for (uint16_t i = 0; i < 2; ++i) EXPECT_EQ(handoff[3].pkts[i], v3[i]);
  EXPECT_EQ(handoff[0].n, 0) << "nothing is handed to ourselves";
  EXPECT_EQ(handoff[1].n, 0);
  EXPECT_EQ(egress[0]->queued_packets() + egress[1]->queued_packets(), 0u);
  EXPECT_EQ(h.counter("handoff"), 6u);
  EXPECT_EQ(h.counter("local"), 0u);
}

TEST_F(RewriteEnqueueTest, MixedBurstSplitsByOwner) {
  // One full burst alternating over the four ports.
  constexpr uint16_t kEach = kBurst / 4;
  std::vector<rte_mbuf*> v;
  for (int i = 0; i < kEach; ++i)
    for (uint16_t p = 0; p < 4; ++p) {
      auto one = to_port(p, 1, 1);
      v.push_back(one[0]);
    }
  ASSERT_EQ(v.size(), kBurst);
  auto out = h.run_mbufs(v);
  publish();
  EXPECT_EQ(egress[0]->queued_packets(), kEach);
  EXPECT_EQ(egress[1]->queued_packets(), kEach);
  EXPECT_EQ(handoff[2].n, kEach);
  EXPECT_EQ(handoff[3].n, kEach);
  EXPECT_EQ(h.counter("local"), 2u * kEach);
  EXPECT_EQ(h.counter("handoff"), 2u * kEach);
}

TEST_F(RewriteEnqueueTest, FullQueueTailDropsAndCounts) {
  // The stage hands over; the egress port applies its own limit and counts the drop against
  // the egress port (the packet is still consumed, never returned).
  EgressConfig cfg;
  cfg.limits[2].packets = 2;
  egress[0] = std::make_unique<EgressPort>(0, port[0].get(), cfg, 0);
  egress_ptrs[0] = egress[0].get();
  run(to_port(0, 2, 5));
  publish();
  EXPECT_EQ(egress[0]->queue(2).enq_packets.get(), 2u);
  EXPECT_EQ(egress[0]->queue(2).drops[static_cast<std::size_t>(DropReason::TailDropPackets)].get(), 3u);
  EXPECT_EQ(w.counters.port_drops[0][static_cast<std::size_t>(DropReason::TailDropPackets)].get(), 3u);
}

}  // namespace
}  // namespace rs::test
