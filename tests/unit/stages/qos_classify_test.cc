// QoS classification (P4 dscp_to_tc / pcp_to_tc / tc_to_queue): SONiC's default map, custom
// maps from the config, PCP trust with DSCP fallback for untagged frames, and the IPv4/IPv6 split.
#include "dataplane/stages/classify/qos_classify.h"

#include <gtest/gtest.h>

#include <vector>

#include "tests/support/stage_harness.h"
#include "tests/unit/stages/stage_test_util.h"

namespace rs::test {
namespace {

PacketSpec v4(uint8_t dscp) { return Eth{} / Ipv4{.dscp = dscp} / Udp{} / Bth{} / Payload::of_size(16); }
PacketSpec v6(uint8_t dscp) { return Eth{} / Ipv6{.dscp = dscp} / Udp{} / Bth{} / Payload::of_size(16); }
PacketSpec tagged(uint8_t pcp, uint8_t dscp) {
  return Eth{} / Vlan{.pcp = pcp, .vid = 10} / Ipv4{.dscp = dscp} / Udp{} / Bth{} / Payload::of_size(16);
}

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

TEST(QosClassify, SonicDefaultDscpMapForEveryDscp) {
  // No maps in the env: the stage falls back to SONiC's default.
  StageHarness<QosClassify> h;
  std::vector<PacketSpec> pkts;
  for (uint8_t d = 0; d < 64; ++d) pkts.push_back(v4(d));
  auto out = h.run_mbufs(parsed(pkts));
  ASSERT_EQ(out[QosClassify::Ipv4].size(), 64u);
  for (uint8_t d = 0; d < 64; ++d) {
    const PacketMeta& m = meta(out[QosClassify::Ipv4][d]);
    EXPECT_EQ(m.tc, sonic_tc(d)) << "dscp " << int{d};
    EXPECT_EQ(m.queue, sonic_tc(d)) << "default tc_to_queue is the identity; dscp " << int{d};
  }
  EXPECT_EQ(h.counter("by_dscp"), 64u);
  EXPECT_EQ(h.counter("by_pcp"), 0u);
}

TEST(QosClassify, ExplicitSonicDefaultEqualsFallback) {
  const QosMaps maps = QosMaps::sonic_default();
  for (uint8_t d = 0; d < 64; ++d) EXPECT_EQ(maps.dscp_to_tc[d], sonic_tc(d)) << "dscp " << int{d};
  EXPECT_EQ(maps.trust, QosTrust::Dscp);
}

TEST(QosClassify, Ipv6ReadsDscpFromTrafficClass) {
  StageHarness<QosClassify> h;
  auto out = h.run_mbufs(parsed({v6(3), v6(46), v6(0)}));
  ASSERT_EQ(out[QosClassify::Ipv6].size(), 3u);
  EXPECT_EQ(out[QosClassify::Ipv4].size(), 0u);
  EXPECT_EQ(meta(out[QosClassify::Ipv6][0]).tc, 3);
  EXPECT_EQ(meta(out[QosClassify::Ipv6][1]).tc, 5);
  EXPECT_EQ(meta(out[QosClassify::Ipv6][2]).tc, 1);
}

TEST(QosClassify, SplitsIpv4FromIpv6InOneBurst) {
  StageHarness<QosClassify> h;
  auto out = h.run_mbufs(parsed({v4(3), v6(3), v4(4), tagged(0, 3), v6(4)}));
  EXPECT_EQ(out[QosClassify::Ipv4].size(), 3u);
  EXPECT_EQ(out[QosClassify::Ipv6].size(), 2u);
  for (auto* m : out[QosClassify::Ipv4]) EXPECT_EQ(meta(m).l3, L3Type::Ipv4);
  for (auto* m : out[QosClassify::Ipv6]) EXPECT_EQ(meta(m).l3, L3Type::Ipv6);
  EXPECT_EQ(out.dropped(), 0u) << "classification never drops";
}

TEST(QosClassify, CustomDscpMapAndTcToQueue) {
  QosMaps maps = QosMaps::sonic_default();
  maps.dscp_to_tc[26] = 3;  // a RoCE NIC configured for DSCP 26
  maps.dscp_to_tc[3] = 1;
  for (uint8_t tc = 0; tc < 8; ++tc) maps.tc_to_queue[tc] = static_cast<uint8_t>(7 - tc);
  StageHarness<QosClassify> h{StageEnv{.qos = &maps}};
  auto out = h.run_mbufs(parsed({v4(26), v4(3), v4(46), v6(26)}));
  ASSERT_EQ(out[QosClassify::Ipv4].size(), 3u);
  ASSERT_EQ(out[QosClassify::Ipv6].size(), 1u);
  EXPECT_EQ(meta(out[QosClassify::Ipv4][0]).tc, 3);
  EXPECT_EQ(meta(out[QosClassify::Ipv4][0]).queue, 4);
  EXPECT_EQ(meta(out[QosClassify::Ipv4][1]).tc, 1);
  EXPECT_EQ(meta(out[QosClassify::Ipv4][1]).queue, 6);
  EXPECT_EQ(meta(out[QosClassify::Ipv4][2]).tc, 5);
  EXPECT_EQ(meta(out[QosClassify::Ipv4][2]).queue, 2);
  EXPECT_EQ(meta(out[QosClassify::Ipv6][0]).tc, 3);
  EXPECT_EQ(meta(out[QosClassify::Ipv6][0]).queue, 4);
}

TEST(QosClassify, QueueByTosByteAgreesWithTheMaps) {
  // TcQueueMap::queue_of_tos (the fast path's table) against the maps themselves, for every
  // TOS byte: ECN bits ignored, DSCP through dscp_to_tc and a tc_to_queue that is not the
  // identity; and the CNP queue as configured.
  QosMaps maps = QosMaps::sonic_default();
  maps.dscp_to_tc[26] = 3;
  for (uint8_t tc = 0; tc < 8; ++tc) maps.tc_to_queue[tc] = static_cast<uint8_t>(7 - tc);
  maps.cnp_queue = 6;
  const TcQueueMap m{maps};
  for (unsigned tos = 0; tos < 256; ++tos)
    EXPECT_EQ(m.queue_of_tos(static_cast<uint8_t>(tos)), maps.tc_to_queue[maps.dscp_to_tc[tos >> 2]]) << "tos " << tos;
  EXPECT_EQ(m.queue_of_tos(26 << 2 | 2), 4);
  EXPECT_EQ(m.cnp_queue(), 6);
  maps.cnp_queue = -1;
  EXPECT_EQ(TcQueueMap{maps}.cnp_queue(), -1);
}

TEST(QosClassify, MapsAreCopiedAtConstruction) {
  // The stage keeps its own copy: the control plane must build a new pipeline (or snapshot)
  // to change maps, never poke the one a worker reads.
  QosMaps maps = QosMaps::sonic_default();
  StageHarness<QosClassify> h{StageEnv{.qos = &maps}};
  maps.dscp_to_tc[3] = 7;
  auto out = h.run_mbufs(parsed({v4(3)}));
  ASSERT_EQ(out[QosClassify::Ipv4].size(), 1u);
  EXPECT_EQ(meta(out[QosClassify::Ipv4][0]).tc, 3);
}

TEST(QosClassify, PcpTrustOnTaggedFrames) {
  QosMaps maps = QosMaps::sonic_default();
  maps.trust = QosTrust::Pcp;
  for (uint8_t p = 0; p < 8; ++p) maps.pcp_to_tc[p] = static_cast<uint8_t>((p + 1) % 8);
  maps.tc_to_queue[6] = 2;
  StageHarness<QosClassify> h{StageEnv{.qos = &maps}};
  std::vector<PacketSpec> pkts;
  // DSCP 46 would say TC5: with PCP trust the tag wins.
  for (uint8_t p = 0; p < 8; ++p) pkts.push_back(tagged(p, 46));
  auto out = h.run_mbufs(parsed(pkts));
  ASSERT_EQ(out[QosClassify::Ipv4].size(), 8u);
  for (uint8_t p = 0; p < 8; ++p) {
    const PacketMeta& m = meta(out[QosClassify::Ipv4][p]);
    EXPECT_EQ(m.tc, (p + 1) % 8) << "pcp " << int{p};
    EXPECT_EQ(m.queue, maps.tc_to_queue[m.tc]) << "pcp " << int{p};
  }
  EXPECT_EQ(meta(out[QosClassify::Ipv4][5]).queue, 2);
  EXPECT_EQ(h.counter("by_pcp"), 8u);
  EXPECT_EQ(h.counter("by_dscp"), 0u);
}

TEST(QosClassify, PcpTrustFallsBackToDscpWhenUntagged) {
  QosMaps maps = QosMaps::sonic_default();
  maps.trust = QosTrust::Pcp;
  maps.pcp_to_tc.fill(0);
  StageHarness<QosClassify> h{StageEnv{.qos = &maps}};
  auto out = h.run_mbufs(parsed({v4(46), v6(3), tagged(3, 46)}));
  ASSERT_EQ(out[QosClassify::Ipv4].size(), 2u);
  ASSERT_EQ(out[QosClassify::Ipv6].size(), 1u);
  EXPECT_EQ(meta(out[QosClassify::Ipv4][0]).tc, 5) << "untagged: DSCP 46";
  EXPECT_EQ(meta(out[QosClassify::Ipv6][0]).tc, 3) << "untagged: DSCP 3";
  EXPECT_EQ(meta(out[QosClassify::Ipv4][1]).tc, 0) << "tagged: PCP map";
  EXPECT_EQ(h.counter("by_dscp"), 2u);
  EXPECT_EQ(h.counter("by_pcp"), 1u);
}

TEST(QosClassify, DscpTrustIgnoresPcp) {
  // The default trust is DSCP: a priority tag must not override it.
  StageHarness<QosClassify> h;
  auto out = h.run_mbufs(parsed({tagged(7, 3), tagged(0, 48)}));
  ASSERT_EQ(out[QosClassify::Ipv4].size(), 2u);
  EXPECT_EQ(meta(out[QosClassify::Ipv4][0]).tc, 3);
  EXPECT_EQ(meta(out[QosClassify::Ipv4][1]).tc, 6);
  EXPECT_EQ(h.counter("by_pcp"), 0u);
}

}  // namespace
}  // namespace rs::test
