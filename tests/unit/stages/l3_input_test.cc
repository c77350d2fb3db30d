// l3_input (parse + classify) on well-formed frames: which edge each header stack takes, the
// metadata it fills, the flow hash, and the traffic class and queue from the QoS maps (P4
// dscp_to_tc / pcp_to_tc / tc_to_queue). Every test runs on both forms of the stage: `l3_input`
// (common shape first) and `l3_input_general`. Malformed frames: l3_input_malformed_test.cc.
#include "dataplane/stages/l3_input.h"

#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "tests/support/stage_harness.h"
#include "tests/unit/stages/stage_test_util.h"

namespace rs::test {
namespace {

template <typename T>
class L3InputTest : public ::testing::Test {};
using Forms = ::testing::Types<L3Input, L3InputGeneral>;
TYPED_TEST_SUITE(L3InputTest, Forms);

// --- Well-formed stacks ----------------------------------------------------------------------

TYPED_TEST(L3InputTest, RoceOverIpv4FillsMeta) {
  StageHarness<TypeParam> h;
  auto out = h.run({Eth{} / Ipv4{.dscp = 26, .ecn = 2} / Udp{.sport = 0xC123} / Bth{.opcode = 0x0a, .dest_qp = 0x11, .psn = 7} / Payload::of_size(64)}, 3);
  ASSERT_EQ(out[TypeParam::Ipv4].size(), 1u);
  const PacketMeta& m = meta(out[TypeParam::Ipv4][0]);
  EXPECT_EQ(m.l3, L3Type::Ipv4);
  EXPECT_EQ(m.l3_offset, 14);
  EXPECT_EQ(m.l4_offset, 34);
  EXPECT_EQ(m.in_port, 3) << "the stage must keep the rx port";
  EXPECT_EQ(m.out_port, kInvalidPort);
  EXPECT_EQ(m.ip_proto, 17);
  EXPECT_EQ(m.dscp, 26);
  EXPECT_EQ(m.ecn, 2);
  EXPECT_TRUE(m.flags & meta_flag::kUdp);
  EXPECT_TRUE(m.flags & meta_flag::kRoce);
  EXPECT_FALSE(m.flags & meta_flag::kCnp);
  EXPECT_FALSE(m.flags & meta_flag::kVlan);
  EXPECT_EQ(m.bth_opcode, 0x0a);
  EXPECT_EQ(m.dest_qp, 0x11u);
  EXPECT_EQ(m.psn, 7u);
  EXPECT_EQ(m.drop_reason, DropReason::None);
  EXPECT_EQ(h.counter("ipv4"), 1u);
  EXPECT_EQ(h.counter("udp"), 1u);
  EXPECT_EQ(h.counter("roce"), 1u);
  EXPECT_EQ(h.counter("ipv6"), 0u);
}

TYPED_TEST(L3InputTest, RoceOverIpv6FillsMeta) {
  StageHarness<TypeParam> h;
  // 24-bit QP and PSN at their maximum catch a byte-order or width mistake.
  auto out = h.run({Eth{} / Ipv6{.dscp = 3, .ecn = 1} / Udp{} / Bth{.opcode = 0x0c, .dest_qp = 0xABCDEF, .psn = 0xFFFFFF} / Payload::of_size(32)});
  ASSERT_EQ(out[TypeParam::Ipv6].size(), 1u);
  const PacketMeta& m = meta(out[TypeParam::Ipv6][0]);
  EXPECT_EQ(m.l3, L3Type::Ipv6);
  EXPECT_EQ(m.l3_offset, 14);
  EXPECT_EQ(m.l4_offset, 54);
  EXPECT_EQ(m.dscp, 3);
  EXPECT_EQ(m.ecn, 1);
  EXPECT_EQ(m.ip_proto, 17);
  EXPECT_TRUE(m.flags & meta_flag::kRoce);
  EXPECT_EQ(m.bth_opcode, 0x0c);
  EXPECT_EQ(m.dest_qp, 0xABCDEFu);
  EXPECT_EQ(m.psn, 0xFFFFFFu);
  EXPECT_EQ(h.counter("ipv6"), 1u);
  EXPECT_EQ(h.counter("roce"), 1u);
}

TYPED_TEST(L3InputTest, CnpOpcodeSetsCnpFlag) {
  StageHarness<TypeParam> h;
  auto out = h.run({Eth{} / Ipv4{.dscp = 48} / Udp{} / Bth{.opcode = 0x81, .becn = true} / Payload::of_size(16),
                    Eth{} / Ipv4{} / Udp{} / Bth{.opcode = 0x80} / Payload::of_size(16)});
  ASSERT_EQ(out[TypeParam::Ipv4].size(), 2u);
  EXPECT_TRUE(meta(out[TypeParam::Ipv4][0]).flags & meta_flag::kCnp);
  EXPECT_EQ(meta(out[TypeParam::Ipv4][0]).bth_opcode, 0x81);
  EXPECT_FALSE(meta(out[TypeParam::Ipv4][1]).flags & meta_flag::kCnp) << "only 0x81 is a CNP";
  EXPECT_EQ(h.counter("cnp"), 1u);
  EXPECT_EQ(h.counter("roce"), 2u);
}

TYPED_TEST(L3InputTest, PlainUdpIsNotRoce) {
  StageHarness<TypeParam> h;
  auto out = h.run({Eth{} / Ipv4{} / Udp{.dport = 4792} / Payload::of_size(40)});
  ASSERT_EQ(out[TypeParam::Ipv4].size(), 1u);
  const PacketMeta& m = meta(out[TypeParam::Ipv4][0]);
  EXPECT_TRUE(m.flags & meta_flag::kUdp);
  EXPECT_FALSE(m.flags & meta_flag::kRoce);
  EXPECT_EQ(m.bth_opcode, 0);
  EXPECT_EQ(m.dest_qp, 0u);
  EXPECT_EQ(h.counter("roce"), 0u);
}

TYPED_TEST(L3InputTest, NonUdpIpIsForwardedWithoutL4) {
  StageHarness<TypeParam> h;
  auto out = h.run({Eth{} / Ipv4{.proto = 6} / Payload::of_size(40)});
  ASSERT_EQ(out[TypeParam::Ipv4].size(), 1u);
  EXPECT_EQ(meta(out[TypeParam::Ipv4][0]).ip_proto, 6);
  EXPECT_EQ(meta(out[TypeParam::Ipv4][0]).l4_offset, 0);
  EXPECT_FALSE(meta(out[TypeParam::Ipv4][0]).flags & meta_flag::kUdp);
}

TYPED_TEST(L3InputTest, LaterFragmentHasNoL4) {
  // A non-first fragment starts with payload bytes, not a UDP header: reading "ports" there
  // would spread one datagram's fragments over several paths.
  StageHarness<TypeParam> h;
  auto out = h.run({Eth{} / Ipv4{.frag = 0x0010} / Udp{} / Bth{} / Payload::of_size(40)});
  ASSERT_EQ(out[TypeParam::Ipv4].size(), 1u);
  EXPECT_EQ(meta(out[TypeParam::Ipv4][0]).ip_proto, 0);
  EXPECT_FALSE(meta(out[TypeParam::Ipv4][0]).flags & meta_flag::kRoce);
}

TYPED_TEST(L3InputTest, VlanPcpAndOffsets) {
  StageHarness<TypeParam> h;
  std::vector<PacketSpec> pkts;
  for (uint8_t pcp = 0; pcp < 8; ++pcp)
    pkts.push_back(Eth{} / Vlan{.pcp = pcp, .vid = 100} / Ipv4{.dscp = 46} / Udp{} / Bth{} / Payload::of_size(32));
  auto out = h.run(pkts);
  ASSERT_EQ(out[TypeParam::Ipv4].size(), 8u);
  for (uint8_t pcp = 0; pcp < 8; ++pcp) {
    const PacketMeta& m = meta(out[TypeParam::Ipv4][pcp]);
    EXPECT_EQ(m.pcp, pcp);
    EXPECT_TRUE(m.flags & meta_flag::kVlan);
    EXPECT_EQ(m.l3_offset, 18);
    EXPECT_EQ(m.l4_offset, 38);
    EXPECT_EQ(m.dscp, 46);
    EXPECT_TRUE(m.flags & meta_flag::kRoce);
  }
  EXPECT_EQ(h.counter("vlan"), 8u);
}

TYPED_TEST(L3InputTest, MacControlTakesItsOwnEdge) {
  StageHarness<TypeParam> h;
  auto out = h.run({Eth{.dst = "01:80:c2:00:00:01"} / MacCtl{.opcode = 0x0101, .class_enable = 0x08},
                    Eth{.dst = "01:80:c2:00:00:01"} / MacCtl{.opcode = 0x0001}});
  ASSERT_EQ(out[TypeParam::MacControl].size(), 2u);
  EXPECT_EQ(meta(out[TypeParam::MacControl][0]).l3_offset, 14) << "mac_control reads the opcode at l3_offset";
  EXPECT_EQ(out.dropped(), 0u);
}

TYPED_TEST(L3InputTest, ArpIsNonIpDrop) {
  StageHarness<TypeParam> h;
  auto out = h.run({Eth{.dst = "ff:ff:ff:ff:ff:ff", .type = 0x0806} / Payload::of_size(28),
                    Eth{.type = 0x88CC} / Payload::of_size(40)});  // LLDP too
  ASSERT_EQ(out.dropped(), 2u);
  for (auto* m : out[kNextDrop]) EXPECT_EQ(meta(m).drop_reason, DropReason::NonIp);
}

TYPED_TEST(L3InputTest, SplitsIpv4FromIpv6InOneBurst) {
  StageHarness<TypeParam> h;
  auto out = h.run({Eth{} / Ipv4{.dscp = 3} / Udp{} / Bth{} / Payload::of_size(16), Eth{} / Ipv6{.dscp = 3} / Udp{} / Bth{},
                    Eth{} / Ipv4{.dscp = 4} / Udp{} / Bth{}, Eth{} / Vlan{} / Ipv4{.dscp = 3} / Udp{} / Bth{},
                    Eth{} / Ipv6{.dscp = 4} / Udp{} / Bth{}});
  EXPECT_EQ(out[TypeParam::Ipv4].size(), 3u);
  EXPECT_EQ(out[TypeParam::Ipv6].size(), 2u);
  for (auto* m : out[TypeParam::Ipv4]) EXPECT_EQ(meta(m).l3, L3Type::Ipv4);
  for (auto* m : out[TypeParam::Ipv6]) EXPECT_EQ(meta(m).l3, L3Type::Ipv6);
  EXPECT_EQ(out.dropped(), 0u) << "classification never drops";
}

// --- Flow hash --------------------------------------------------------------------------------

template <typename T>
uint32_t hash_of(const PacketSpec& s, uint32_t seed = 0) {
  T stage{StageEnv{.qos = nullptr, .hash_seed = seed}};
  rte_mbuf* m = s.mbuf(test_pool());
  EXPECT_NE(m, nullptr);
  if (!m) return 0;
  const uint8_t e = stage.process_one(m);
  EXPECT_TRUE(e == T::Ipv4 || e == T::Ipv6) << drop_reason_name(meta(m).drop_reason);
  const uint32_t h = meta(m).flow_hash;
  rte_pktmbuf_free(m);
  return h;
}

TYPED_TEST(L3InputTest, FlowHashDependsOnlyOnFiveTuple) {
  // Same 5-tuple, different everything else (DSCP, ECN, TTL, BTH, payload, VLAN, in_port).
  const uint32_t a = hash_of<TypeParam>(Eth{} / Ipv4{} / Udp{.sport = 0xC001} / Bth{.psn = 1} / Payload::of_size(64));
  const uint32_t b = hash_of<TypeParam>(Eth{.src = "02:00:00:00:aa:09"} / Vlan{.pcp = 3} / Ipv4{.dscp = 26, .ecn = 3, .ttl = 9} /
                                        Udp{.sport = 0xC001} / Bth{.opcode = 0x81, .dest_qp = 7, .psn = 99} / Payload::of_size(200, 5));
  EXPECT_EQ(a, b);
  // IPv6 likewise ignores the traffic class, flow label and hop limit.
  const uint32_t c = hash_of<TypeParam>(Eth{} / Ipv6{} / Udp{} / Bth{} / Payload::of_size(64));
  const uint32_t d =
      hash_of<TypeParam>(Eth{} / Ipv6{.dscp = 3, .hop_limit = 2, .flow_label = 0x12345} / Udp{} / Bth{} / Payload::of_size(8));
  EXPECT_EQ(c, d);
}

TYPED_TEST(L3InputTest, FlowHashChangesWithEveryTupleField) {
  const uint32_t base = hash_of<TypeParam>(Eth{} / Ipv4{} / Udp{} / Payload::of_size(20));
  EXPECT_NE(base, hash_of<TypeParam>(Eth{} / Ipv4{.src = "10.0.1.3"} / Udp{} / Payload::of_size(20)));
  EXPECT_NE(base, hash_of<TypeParam>(Eth{} / Ipv4{.dst = "10.0.2.3"} / Udp{} / Payload::of_size(20)));
  EXPECT_NE(base, hash_of<TypeParam>(Eth{} / Ipv4{} / Udp{.sport = 0xC002} / Payload::of_size(20)));
  EXPECT_NE(base, hash_of<TypeParam>(Eth{} / Ipv4{} / Udp{.dport = 4792} / Payload::of_size(20)));
  // Swapping source and destination is a different (reverse) flow.
  EXPECT_NE(base, hash_of<TypeParam>(Eth{} / Ipv4{.src = "10.0.2.2", .dst = "10.0.1.2"} / Udp{} / Payload::of_size(20)));
}

TYPED_TEST(L3InputTest, FlowHashSpreadsUdpSourcePorts) {
  // RoCE NICs put the per-QP entropy in the UDP source port only: 1024 source ports must give
  // (almost) 1024 hashes, and the low bits that index a redirection table must all be used.
  std::set<uint32_t> seen;
  std::set<uint32_t> low6;
  for (uint32_t i = 0; i < 1024; ++i) {
    const uint32_t h =
        hash_of<TypeParam>(Eth{} / Ipv4{} / Udp{.sport = static_cast<uint16_t>(0xC000 + i)} / Bth{} / Payload::of_size(8));
    seen.insert(h);
    low6.insert(h & 63);
  }
  EXPECT_GE(seen.size(), 1020u);
  EXPECT_EQ(low6.size(), 64u);
}

TYPED_TEST(L3InputTest, FlowHashSeedChangesHash) {
  // Different seeds per switch tier avoid ECMP polarisation.
  int differ = 0;
  for (uint32_t i = 0; i < 64; ++i) {
    const PacketSpec s = Eth{} / Ipv4{} / Udp{.sport = static_cast<uint16_t>(0xC000 + i)} / Bth{} / Payload::of_size(8);
    const uint32_t a = hash_of<TypeParam>(s, 1), b = hash_of<TypeParam>(s, 2);
    EXPECT_EQ(a, hash_of<TypeParam>(s, 1)) << "the hash must be deterministic for one seed";
    differ += a != b;
  }
  EXPECT_EQ(differ, 64);
  const PacketSpec v6 = Eth{} / Ipv6{} / Udp{} / Bth{} / Payload::of_size(8);
  EXPECT_NE(hash_of<TypeParam>(v6, 1), hash_of<TypeParam>(v6, 0x9e3779b9));
}

// --- Classify (dscp_to_tc, pcp_to_tc, tc_to_queue) --------------------------------------------

PacketSpec v4(uint8_t dscp) { return Eth{} / Ipv4{.dscp = dscp} / Udp{} / Bth{} / Payload::of_size(16); }
PacketSpec v6(uint8_t dscp) { return Eth{} / Ipv6{.dscp = dscp} / Udp{} / Bth{} / Payload::of_size(16); }
PacketSpec tagged(uint8_t pcp, uint8_t dscp) {
  return Eth{} / Vlan{.pcp = pcp, .vid = 10} / Ipv4{.dscp = dscp} / Udp{} / Bth{} / Payload::of_size(16);
}
PacketSpec cnp(uint8_t dscp) { return Eth{} / Ipv4{.dscp = dscp} / Udp{} / Bth{.opcode = 0x81} / Payload::of_size(16); }

// SONiC's AZURE profile, written out independently of QosMaps::sonic_default().
uint8_t sonic_tc(uint8_t dscp) {
  switch (dscp) {
    case 3: return 3;
    case 4: return 4;
    case 46: return 5;
    case 48: return 6;
    case 8: return 0;
    case 5: return 2;
    default: return 1;
  }
}

TYPED_TEST(L3InputTest, SonicDefaultDscpMapForEveryDscp) {
  // No maps in the env: the stage falls back to SONiC's default.
  StageHarness<TypeParam> h;
  std::vector<PacketSpec> pkts;
  for (uint8_t d = 0; d < 64; ++d) pkts.push_back(v4(d));
  auto out = h.run(pkts);
  ASSERT_EQ(out[TypeParam::Ipv4].size(), 64u);
  for (uint8_t d = 0; d < 64; ++d) {
    const PacketMeta& m = meta(out[TypeParam::Ipv4][d]);
    EXPECT_EQ(m.tc, sonic_tc(d)) << "dscp " << int{d};
    EXPECT_EQ(m.queue, sonic_tc(d)) << "default tc_to_queue is the identity; dscp " << int{d};
  }
  EXPECT_EQ(h.counter("by_dscp"), 64u);
  EXPECT_EQ(h.counter("by_pcp"), 0u);
}

TEST(Classify, ExplicitSonicDefaultEqualsFallback) {
  const QosMaps maps = QosMaps::sonic_default();
  for (uint8_t d = 0; d < 64; ++d) EXPECT_EQ(maps.dscp_to_tc[d], sonic_tc(d)) << "dscp " << int{d};
  EXPECT_EQ(maps.trust, QosTrust::Dscp);
}

TYPED_TEST(L3InputTest, Ipv6ReadsDscpFromTrafficClass) {
  StageHarness<TypeParam> h;
  auto out = h.run({v6(3), v6(46), v6(0)});
  ASSERT_EQ(out[TypeParam::Ipv6].size(), 3u);
  EXPECT_EQ(out[TypeParam::Ipv4].size(), 0u);
  EXPECT_EQ(meta(out[TypeParam::Ipv6][0]).tc, 3);
  EXPECT_EQ(meta(out[TypeParam::Ipv6][1]).tc, 5);
  EXPECT_EQ(meta(out[TypeParam::Ipv6][2]).tc, 1);
}

TYPED_TEST(L3InputTest, CustomDscpMapAndTcToQueue) {
  QosMaps maps = QosMaps::sonic_default();
  maps.dscp_to_tc[26] = 3;  // a RoCE NIC configured for DSCP 26
  maps.dscp_to_tc[3] = 1;
  for (uint8_t tc = 0; tc < 8; ++tc) maps.tc_to_queue[tc] = static_cast<uint8_t>(7 - tc);
  StageHarness<TypeParam> h{StageEnv{.qos = &maps}};
  auto out = h.run({v4(26), v4(3), v4(46), v6(26)});
  ASSERT_EQ(out[TypeParam::Ipv4].size(), 3u);
  ASSERT_EQ(out[TypeParam::Ipv6].size(), 1u);
  EXPECT_EQ(meta(out[TypeParam::Ipv4][0]).tc, 3);
  EXPECT_EQ(meta(out[TypeParam::Ipv4][0]).queue, 4);
  EXPECT_EQ(meta(out[TypeParam::Ipv4][1]).tc, 1);
  EXPECT_EQ(meta(out[TypeParam::Ipv4][1]).queue, 6);
  EXPECT_EQ(meta(out[TypeParam::Ipv4][2]).tc, 5);
  EXPECT_EQ(meta(out[TypeParam::Ipv4][2]).queue, 2);
  EXPECT_EQ(meta(out[TypeParam::Ipv6][0]).tc, 3);
  EXPECT_EQ(meta(out[TypeParam::Ipv6][0]).queue, 4);
}

TYPED_TEST(L3InputTest, QueueForEveryTosByteAgreesWithTheMaps) {
  // For every TOS byte (ECN bits ignored): DSCP through dscp_to_tc and a tc_to_queue that is
  // not the identity; CNPs to the configured CNP queue whatever their DSCP, and counted so.
  QosMaps maps = QosMaps::sonic_default();
  maps.dscp_to_tc[26] = 3;
  for (uint8_t tc = 0; tc < 8; ++tc) maps.tc_to_queue[tc] = static_cast<uint8_t>(7 - tc);
  maps.cnp_queue = 6;
  StageHarness<TypeParam> h{StageEnv{.qos = &maps}};
  std::vector<PacketSpec> pkts;
  for (unsigned tos = 0; tos < 256; ++tos)
    pkts.push_back(Eth{} / Ipv4{.dscp = static_cast<uint8_t>(tos >> 2), .ecn = static_cast<uint8_t>(tos & 3)} / Udp{} / Bth{});
  for (uint8_t d : {uint8_t{0}, uint8_t{26}, uint8_t{48}}) pkts.push_back(cnp(d));
  auto out = h.run(pkts);
  ASSERT_EQ(out[TypeParam::Ipv4].size(), 259u);
  for (unsigned tos = 0; tos < 256; ++tos) {
    const PacketMeta& m = meta(out[TypeParam::Ipv4][tos]);
    EXPECT_EQ(m.tc, maps.dscp_to_tc[tos >> 2]) << "tos " << tos;
    EXPECT_EQ(m.queue, maps.tc_to_queue[maps.dscp_to_tc[tos >> 2]]) << "tos " << tos;
  }
  EXPECT_EQ(meta(out[TypeParam::Ipv4][26 << 2 | 2]).queue, 4);
  for (std::size_t i = 256; i < 259; ++i) EXPECT_EQ(meta(out[TypeParam::Ipv4][i]).queue, 6) << "cnp " << i;
  EXPECT_EQ(meta(out[TypeParam::Ipv4][257]).tc, 3) << "the CNP keeps its DSCP's traffic class";
  EXPECT_EQ(h.counter("cnp_to_queue"), 3u);
  // Without a CNP queue, CNPs are classified by their DSCP like any packet.
  maps.cnp_queue = -1;
  StageHarness<TypeParam> plain{StageEnv{.qos = &maps}};
  auto out2 = plain.run({cnp(48)});
  ASSERT_EQ(out2[TypeParam::Ipv4].size(), 1u);
  EXPECT_EQ(meta(out2[TypeParam::Ipv4][0]).queue, maps.tc_to_queue[maps.dscp_to_tc[48]]);
  EXPECT_EQ(plain.counter("cnp_to_queue"), 0u);
}

TYPED_TEST(L3InputTest, MapsAreCopiedAtConstruction) {
  // The stage keeps its own copy: the control plane must build a new pipeline (or snapshot)
  // to change maps, never poke the one a worker reads.
  QosMaps maps = QosMaps::sonic_default();
  StageHarness<TypeParam> h{StageEnv{.qos = &maps}};
  maps.dscp_to_tc[3] = 7;
  auto out = h.run({v4(3)});
  ASSERT_EQ(out[TypeParam::Ipv4].size(), 1u);
  EXPECT_EQ(meta(out[TypeParam::Ipv4][0]).tc, 3);
}

TYPED_TEST(L3InputTest, PcpTrustOnTaggedFrames) {
  QosMaps maps = QosMaps::sonic_default();
  maps.trust = QosTrust::Pcp;
  for (uint8_t p = 0; p < 8; ++p) maps.pcp_to_tc[p] = static_cast<uint8_t>((p + 1) % 8);
  maps.tc_to_queue[6] = 2;
  StageHarness<TypeParam> h{StageEnv{.qos = &maps}};
  std::vector<PacketSpec> pkts;
  // DSCP 46 would say TC5: with PCP trust the tag wins.
  for (uint8_t p = 0; p < 8; ++p) pkts.push_back(tagged(p, 46));
  auto out = h.run(pkts);
  ASSERT_EQ(out[TypeParam::Ipv4].size(), 8u);
  for (uint8_t p = 0; p < 8; ++p) {
    const PacketMeta& m = meta(out[TypeParam::Ipv4][p]);
    EXPECT_EQ(m.tc, (p + 1) % 8) << "pcp " << int{p};
    EXPECT_EQ(m.queue, maps.tc_to_queue[m.tc]) << "pcp " << int{p};
  }
  EXPECT_EQ(meta(out[TypeParam::Ipv4][5]).queue, 2);
  EXPECT_EQ(h.counter("by_pcp"), 8u);
  EXPECT_EQ(h.counter("by_dscp"), 0u);
}

TYPED_TEST(L3InputTest, PcpTrustFallsBackToDscpWhenUntagged) {
  QosMaps maps = QosMaps::sonic_default();
  maps.trust = QosTrust::Pcp;
  maps.pcp_to_tc.fill(0);
  StageHarness<TypeParam> h{StageEnv{.qos = &maps}};
  auto out = h.run({v4(46), v6(3), tagged(3, 46)});
  ASSERT_EQ(out[TypeParam::Ipv4].size(), 2u);
  ASSERT_EQ(out[TypeParam::Ipv6].size(), 1u);
  EXPECT_EQ(meta(out[TypeParam::Ipv4][0]).tc, 5) << "untagged: DSCP 46";
  EXPECT_EQ(meta(out[TypeParam::Ipv6][0]).tc, 3) << "untagged: DSCP 3";
  EXPECT_EQ(meta(out[TypeParam::Ipv4][1]).tc, 0) << "tagged: PCP map";
  EXPECT_EQ(h.counter("by_dscp"), 2u);
  EXPECT_EQ(h.counter("by_pcp"), 1u);
}

TYPED_TEST(L3InputTest, DscpTrustIgnoresPcp) {
  // The default trust is DSCP: a priority tag must not override it.
  StageHarness<TypeParam> h;
  auto out = h.run({tagged(7, 3), tagged(0, 48)});
  ASSERT_EQ(out[TypeParam::Ipv4].size(), 2u);
  EXPECT_EQ(meta(out[TypeParam::Ipv4][0]).tc, 3);
  EXPECT_EQ(meta(out[TypeParam::Ipv4][1]).tc, 6);
  EXPECT_EQ(h.counter("by_pcp"), 0u);
}

TYPED_TEST(L3InputTest, WholeBurstOnIpv4IsOneEdge) {
  // The stage tells the pipeline when every packet took ipv4 (the pipeline then moves the
  // burst whole); any other packet makes the burst mixed.
  TypeParam stage{StageEnv{}};
  TestWorld w;
  auto run = [&](const std::vector<PacketSpec>& specs) {
    Burst b;
    for (const auto& s : specs) b.push(s.mbuf(test_pool()));
    uint8_t next[kBurst];
    const uint8_t r = stage.process(b, next, w.ctx);
    for (uint16_t i = 0; i < b.n; ++i) rte_pktmbuf_free(b.pkts[i]);
    return r;
  };
  EXPECT_EQ(run({v4(26), v4(3), tagged(1, 0)}), TypeParam::Ipv4);
  EXPECT_EQ(run({v4(26), v6(3)}), kNextMixed);
  EXPECT_EQ(run({v4(26), Eth{.type = 0x0806} / Payload::of_size(28)}), kNextMixed);
}

}  // namespace
}  // namespace rs::test
