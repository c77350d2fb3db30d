// Egress rewrite: next-hop DMAC, egress-port SMAC, TTL / hop-limit decrement with an incremental
// IPv4 checksum that must equal a full recompute (every checksum value, carry cases included),
// and a RoCE ICRC that stays valid because only fields it masks change.
#include "dataplane/stages/egress/egress_rewrite.h"

#include <gtest/gtest.h>
#include <rte_ether.h>

#include <fmt/core.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "dataplane/core/icrc.h"
#include "tests/support/stage_harness.h"
#include "tests/unit/stages/stage_test_util.h"

namespace rs::test {
namespace {

constexpr const char* kNhMac = "02:00:00:00:bb:02";

// Parsed packets with the metadata the next-hop stage writes: next hop `nh` on port `port`.
std::vector<rte_mbuf*> routed(const std::vector<PacketSpec>& specs, uint32_t nh, uint16_t port) {
  auto v = parsed(specs);
  for (auto* m : v) {
    meta(m).nexthop = nh;
    meta(m).out_port = port;
  }
  return v;
}

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

class EgressRewriteTest : public ::testing::Test {
 protected:
  TestWorld w;
  StageHarness<EgressRewrite> h{{}, &w};
  uint32_t nh = w.fib->add_nexthop({2, mac(kNhMac)});
};

TEST_F(EgressRewriteTest, Ipv4MacsTtlAndChecksum) {
  const PacketSpec s = Eth{} / Ipv4{.dscp = 26, .ttl = 64} / Udp{} / Bth{} / Payload::of_size(64);
  const auto before = s.bytes();
  auto out = h.run_mbufs(routed({s}, nh, 2));
  ASSERT_EQ(out[EgressRewrite::Enqueue].size(), 1u);
  const auto after = mbuf_bytes(out[EgressRewrite::Enqueue][0]);
  EXPECT_EQ(0, std::memcmp(&after[0], mac(kNhMac).addr_bytes, 6)) << "DMAC = next hop MAC";
  EXPECT_EQ(0, std::memcmp(&after[6], w.port_mac[2].addr_bytes, 6)) << "SMAC = egress port MAC";
  EXPECT_EQ(after[14 + 8], 63);
  EXPECT_TRUE(ipv4_checksum_ok(after));
  EXPECT_EQ(after, expected_rewrite(before, mac(kNhMac), w.port_mac[2], 14, false));
  EXPECT_EQ(h.counter("ipv4"), 1u);
  EXPECT_EQ(h.counter("ipv6"), 0u);
}

TEST_F(EgressRewriteTest, Ipv6MacsAndHopLimit) {
  const PacketSpec s = Eth{} / Ipv6{.dscp = 3, .hop_limit = 2, .flow_label = 0xABCDE} / Udp{} / Bth{} / Payload::of_size(64);
  const auto before = s.bytes();
  auto out = h.run_mbufs(routed({s}, nh, 2));
  ASSERT_EQ(out[EgressRewrite::Enqueue].size(), 1u);
  const auto after = mbuf_bytes(out[EgressRewrite::Enqueue][0]);
  EXPECT_EQ(after[14 + 7], 1);
  EXPECT_EQ(after, expected_rewrite(before, mac(kNhMac), w.port_mac[2], 14, true));
  EXPECT_EQ(h.counter("ipv6"), 1u);
}

TEST_F(EgressRewriteTest, VlanTaggedKeepsTheTag) {
  // The IP header sits at l3_offset 18; the tag (PCP 3) and the EtherTypes are not touched.
  const PacketSpec s = Eth{} / Vlan{.pcp = 3, .vid = 77} / Ipv4{.ttl = 10} / Udp{} / Bth{} / Payload::of_size(64);
  const auto before = s.bytes();
  auto out = h.run_mbufs(routed({s}, nh, 2));
  ASSERT_EQ(out[EgressRewrite::Enqueue].size(), 1u);
  const auto after = mbuf_bytes(out[EgressRewrite::Enqueue][0]);
  EXPECT_EQ(after[18 + 8], 9);
  EXPECT_TRUE(ipv4_checksum_ok(after, 18));
  EXPECT_EQ(after, expected_rewrite(before, mac(kNhMac), w.port_mac[2], 18, false));
}

TEST_F(EgressRewriteTest, IcrcStaysValid) {
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
  auto out = h.run_mbufs(routed(specs, nh, 2));
  ASSERT_EQ(out[EgressRewrite::Enqueue].size(), specs.size());
  for (auto* m : out[EgressRewrite::Enqueue]) {
    const auto f = mbuf_bytes(m);
    const std::size_t l3 = meta(m).l3_offset;
    const bool v6 = meta(m).l3 == L3Type::Ipv6;
    EXPECT_TRUE(roce_icrc_ok(&f[l3], datagram_len(f, l3, v6), v6)) << "packet at l3 " << l3 << (v6 ? " v6" : " v4");
  }
}

TEST_F(EgressRewriteTest, IcrcCheckIsSensitive) {
  // Guard for the test above: a change the ICRC covers (one payload byte) must fail it.
  auto f = (Eth{} / Ipv4{} / Udp{} / Bth{} / Payload::of_size(64)).bytes();
  f[14 + 20 + 8 + 12 + 5] ^= 1;
  EXPECT_FALSE(roce_icrc_ok(&f[14], datagram_len(f, 14, false), false));
}

TEST_F(EgressRewriteTest, PayloadUntouchedInLargeFrames) {
  // A full-MTU RoCE write (1500 bytes of payload, one mbuf of the test pool): every byte past
  // the IPv4 header must come out as it went in.
  const PacketSpec s = Eth{} / Ipv4{.ttl = 200} / Udp{} / Bth{.opcode = 0x0a} / Payload::of_size(1500, 9);
  const auto before = s.bytes();
  auto out = h.run_mbufs(routed({s}, nh, 2));
  ASSERT_EQ(out[EgressRewrite::Enqueue].size(), 1u);
  const auto after = mbuf_bytes(out[EgressRewrite::Enqueue][0]);
  ASSERT_EQ(after.size(), before.size());
  EXPECT_TRUE(std::equal(before.begin() + 34, before.end(), after.begin() + 34)) << "bytes after the IPv4 header changed";
}

// Builds a raw IPv4/UDP frame whose header fields are random, TTL as given, and the source
// address' low 16 bits set to `w16`; checksum valid.
std::vector<uint8_t> random_v4(std::mt19937& rng, uint8_t ttl, uint16_t w16) {
  std::vector<uint8_t> f = (Eth{} / Ipv4{.ttl = ttl} / Udp{.dport = 9} / Payload::of_size(26)).bytes();
  const std::size_t l3 = 14;
  f[l3 + 1] = static_cast<uint8_t>(rng());      // DSCP/ECN
  f[l3 + 4] = static_cast<uint8_t>(rng());      // identification
  f[l3 + 5] = static_cast<uint8_t>(rng());
  f[l3 + 12] = static_cast<uint8_t>(rng());     // source address
  f[l3 + 13] = static_cast<uint8_t>(rng());
  f[l3 + 14] = static_cast<uint8_t>(w16 >> 8);
  f[l3 + 15] = static_cast<uint8_t>(w16);
  f[l3 + 16] = static_cast<uint8_t>(rng());     // destination address
  f[l3 + 17] = static_cast<uint8_t>(rng());
  f[l3 + 18] = static_cast<uint8_t>(rng());
  f[l3 + 19] = static_cast<uint8_t>(rng());
  const uint16_t c = ipv4_full_checksum(f, l3);
  f[l3 + 10] = static_cast<uint8_t>(c >> 8);
  f[l3 + 11] = static_cast<uint8_t>(c);
  return f;
}

// Rewrites the frames in pool-sized batches; returns how many headers mismatched a full sum.
int checksum_mismatches(StageHarness<EgressRewrite>& h, TestWorld& w, uint32_t nh,
                        const std::vector<std::vector<uint8_t>>& frames, std::string& first_bad) {
  int bad = 0;
  Parser parser{StageEnv{}};
  for (std::size_t at = 0; at < frames.size(); at += 4096) {
    std::vector<rte_mbuf*> v;
    for (std::size_t i = at; i < std::min(frames.size(), at + 4096); ++i) {
      rte_mbuf* m = raw_mbuf(frames[i]);
      if (!m) return -1;
      EXPECT_EQ(parser.parse_one(m), Parser::Ip);
      meta(m).nexthop = nh;
      meta(m).out_port = 2;
      v.push_back(m);
    }
    auto out = h.run_mbufs(v);
    const auto& done = out[EgressRewrite::Enqueue];
    EXPECT_EQ(done.size(), v.size());
    for (std::size_t i = 0; i < done.size(); ++i) {
      const auto got = mbuf_bytes(done[i]);
      const auto want = expected_rewrite(frames[at + i], mac(kNhMac), w.port_mac[2], 14, false);
      if (got != want || !ipv4_checksum_ok(got)) {
        if (bad++ == 0)
          first_bad = fmt::format("ttl {} csum before {:04x} after {:04x} want {:04x}", frames[at + i][22],
                                  frames[at + i][24] << 8 | frames[at + i][25], got[24] << 8 | got[25],
                                  want[24] << 8 | want[25]);
      }
    }
  }
  return bad;
}

TEST_F(EgressRewriteTest, IncrementalChecksumEqualsFullRecomputeForEveryChecksumValue) {
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
    EXPECT_EQ(checksum_mismatches(h, w, nh, frames, first_bad), 0) << "ttl " << int{ttl} << ": " << first_bad;
  }
}

TEST_F(EgressRewriteTest, IncrementalChecksumForEveryTtl) {
  // Every TTL the rewrite can see (2..255) with random headers: the TTL/protocol word changes
  // by 0x0100 and borrows are never needed in the byte, but the sum may wrap.
  std::mt19937 rng(7);
  std::vector<std::vector<uint8_t>> frames;
  for (int rep = 0; rep < 16; ++rep)
    for (int ttl = 2; ttl <= 255; ++ttl) frames.push_back(random_v4(rng, static_cast<uint8_t>(ttl), static_cast<uint16_t>(rng())));
  std::string first_bad;
  EXPECT_EQ(checksum_mismatches(h, w, nh, frames, first_bad), 0) << first_bad;
}

}  // namespace
}  // namespace rs::test
