// LocalAgent on a stepped switch (the rig: local_agent_rig.h): resolving hosts and next hops by
// ARP and neighbour discovery, the packets held meanwhile, failures, the NUD states under traffic,
// the punt policers and rings, two workers.
#include "tests/unit/control/local_agent_rig.h"

namespace rs::test {
namespace {

TEST(LocalAgent, GleanHoldsPacketsUntilTheHostAnswersThenTheDataPathForwards) {
  RIG(r);  // hold_packets 3 (the default)
  r.cycle(1);
  for (uint8_t s = 1; s <= 5; ++s) r.inject(0, udp4("10.0.3.7", 64, s));
  r.cycle();
  // One broadcast ARP request out of p2, from p2's address.
  auto out = r.sent(2);
  ASSERT_EQ(out.size(), 1u) << "one probe, none of the held packets";
  EXPECT_EQ(arp_text(out[0]), fmt::format("{} {} op1 {} 10.0.3.1 00:00:00:00:00:00 10.0.3.7", kBcast, kPortMac[2], kPortMac[2]));
  EXPECT_EQ(r.sw->totals().held, 3u);
  EXPECT_EQ(r.drops(DropReason::NeighborHoldFull), 2u) << "5 packets, 3 held";
  EXPECT_EQ(r.agent->counters().gleaned, 5u);
  r.expect_balanced("holding");
  const Neighbour* n = r.neighbour(2, "10.0.3.7");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->state, NudState::Incomplete);
  EXPECT_EQ(n->held.size(), 3u);

  // The host answers: the held packets go, oldest first (the first two were pushed out).
  r.inject(2, arp(2, kPortMac[2], kH2Mac, "10.0.3.7", kPortMac[2], "10.0.3.1"));
  r.cycle();
  out = r.sent(2);
  ASSERT_EQ(out.size(), 3u);
  for (std::size_t i = 0; i < out.size(); ++i) {
    const Frame& f = out[i];
    ASSERT_GE(f.size(), 14u + 20 + 8 + 1);
    EXPECT_EQ(f[42], 3 + i) << "order";
    EXPECT_EQ(mac_at(f, 0), kH2Mac);
    EXPECT_EQ(mac_at(f, 6), kPortMac[2]);
    EXPECT_EQ(f[22], 63) << "TTL decremented";
    EXPECT_TRUE(ipv4_checksum_ok(f)) << i;
  }
  EXPECT_EQ(r.sw->totals().held, 0u);
  n = r.neighbour(2, "10.0.3.7");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->state, NudState::Reachable);
  ASSERT_NE(r.route_group("10.0.3.7", 32), nullptr);

  // From now on the data path forwards them: nothing more goes through the punt stage.
  const uint64_t punted = r.punt_activity();
  const uint64_t gleaned = r.agent->counters().gleaned;
  for (uint8_t s = 10; s < 13; ++s) r.inject(0, udp4("10.0.3.7", 64, s));
  r.cycle();
  out = r.sent(2);
  ASSERT_EQ(out.size(), 3u);
  for (std::size_t i = 0; i < out.size(); ++i) {
    EXPECT_EQ(out[i][42], 10 + i);
    EXPECT_EQ(mac_at(out[i], 0), kH2Mac);
    EXPECT_EQ(mac_at(out[i], 6), kPortMac[2]);
    EXPECT_EQ(out[i][22], 63);
    EXPECT_TRUE(ipv4_checksum_ok(out[i]));
  }
  EXPECT_EQ(r.punt_activity(), punted);
  EXPECT_EQ(r.agent->counters().gleaned, gleaned);
  r.finish();
}

// --- f. Next hops by IP ------------------------------------------------------------------------

const Options kVia{.routes = "  - {prefix: 10.9.0.0/16, via: 10.0.2.2}\n",
                   .sections = "neighbours: {retrans_s: 0.1, mcast_probes: 3, hold_packets: 4}\n"};

TEST(LocalAgent, ARouteViaANextHopFlowsOnceItResolves) {
  RIG(r, kVia);
  r.cycle(3);  // the agent starts resolving 10.0.2.2 at once
  auto probes = r.sent(1);
  ASSERT_EQ(probes.size(), 1u);
  EXPECT_EQ(arp_text(probes[0]), fmt::format("{} {} op1 {} 10.0.2.1 00:00:00:00:00:00 10.0.2.2", kBcast, kPortMac[1], kPortMac[1]));
  const GroupSpec* g = r.route_group("10.9.0.0", 16);
  ASSERT_NE(g, nullptr);
  ASSERT_EQ(g->members.size(), 1u);
  EXPECT_FALSE(g->members[0].resolved);

  r.inject(0, udp4("10.9.1.1", 64, 1));
  r.inject(0, udp4("10.9.1.1", 64, 2));
  r.cycle();
  EXPECT_TRUE(r.sent(1).empty()) << "nothing to the next hop before it resolves";
  EXPECT_EQ(r.sw->totals().held, 2u);

  r.inject(1, arp(2, kPortMac[1], kNhMac, "10.0.2.2", kPortMac[1], "10.0.2.1"));
  r.cycle();
  auto out = r.sent(1);
  ASSERT_EQ(out.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(out[i][42], 1 + i);
    EXPECT_EQ(mac_at(out[i], 0), kNhMac);
    EXPECT_EQ(mac_at(out[i], 6), kPortMac[1]);
    EXPECT_EQ(out[i][22], 63);
    EXPECT_TRUE(ipv4_checksum_ok(out[i]));
  }
  g = r.route_group("10.9.0.0", 16);
  ASSERT_NE(g, nullptr);
  ASSERT_EQ(g->members.size(), 1u);
  EXPECT_TRUE(g->members[0].resolved);
  EXPECT_EQ(mac_at(Frame(g->members[0].mac.addr_bytes, g->members[0].mac.addr_bytes + 6), 0), kNhMac);

  const uint64_t punted = r.punt_activity();
  for (uint8_t s = 3; s < 8; ++s) r.inject(0, udp4(fmt::format("10.9.{}.1", s), 64, s));
  r.cycle();
  out = r.sent(1);
  ASSERT_EQ(out.size(), 5u);
  for (auto& f : out) EXPECT_EQ(mac_at(f, 0), kNhMac);
  EXPECT_EQ(r.punt_activity(), punted) << "a resolved group is the data path's";
  r.finish();
}

TEST(LocalAgent, ANextHopThatNeverAnswersFailsAndItsPacketsAreDropped) {
  RIG(r, kVia);
  const uint64_t t0 = r.now;
  r.cycle(1);
  r.inject(0, udp4("10.9.1.1", 64, 1));
  r.inject(0, udp4("10.9.1.1", 64, 2));
  r.cycle(1);
  EXPECT_EQ(r.sw->totals().held, 2u);
  // mcast_probes (3) probes retrans (100 ms) apart, then failed at 300 ms.
  r.run_to(t0 + 299 * kMs);
  const Neighbour* n = r.neighbour(1, "10.0.2.2");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->state, NudState::Incomplete);
  EXPECT_EQ(r.drops(DropReason::NeighborFailed), 0u);
  r.run_to(t0 + 302 * kMs);
  n = r.neighbour(1, "10.0.2.2");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->state, NudState::Failed);
  EXPECT_EQ(r.drops(DropReason::NeighborFailed), 2u);
  EXPECT_EQ(r.drops(0, DropReason::NeighborFailed), 2u) << "counted on the ingress port";
  EXPECT_EQ(r.sw->totals().held, 0u);
  const auto probes = r.sent(1);
  ASSERT_EQ(probes.size(), 3u) << "mcast_probes broadcasts, no more";
  for (auto& p : probes) EXPECT_EQ(arp_text(p), fmt::format("{} {} op1 {} 10.0.2.1 00:00:00:00:00:00 10.0.2.2", kBcast, kPortMac[1], kPortMac[1]));
  EXPECT_TRUE(r.sent(0).empty());
  const GroupSpec* g = r.route_group("10.9.0.0", 16);
  ASSERT_NE(g, nullptr);
  EXPECT_FALSE(g->members[0].resolved);
  r.finish();
}

// --- g. CoPP ---------------------------------------------------------------------------------

TEST(LocalAgent, ArpFloodIsPolicedToBurstThenRate) {
  RIG(r, Options{.sections = "copp: {arp: {pps: 100, burst: 10}}\n"});
  r.cycle(1);
  const uint64_t t = r.now + kMs;
  auto flood = [&](uint64_t at, int n) {
    r.now = at;
    for (int i = 0; i < n; ++i) r.inject(0, arp_request(kH0Mac, "10.0.1.2", "10.0.1.1"));
    r.cycle();  // its first poll, at `at`, takes all of them (one burst)
  };
  flood(t, 50);
  EXPECT_EQ(r.agent->counters().arp_requests, 10u) << "the burst";
  EXPECT_EQ(r.drops(0, DropReason::PuntPoliced), 40u);
  EXPECT_EQ(r.sent(0).size(), 10u);
  r.expect_balanced("after the flood");
  // A second later the bucket is full again: another burst.
  flood(t + kS, 50);
  EXPECT_EQ(r.agent->counters().arp_requests, 20u);
  EXPECT_EQ(r.drops(0, DropReason::PuntPoliced), 80u);
  // 50 ms on, 100/s allows 5 more.
  flood(t + kS + 50 * kMs, 50);
  EXPECT_EQ(r.agent->counters().arp_requests, 25u);
  EXPECT_EQ(r.drops(0, DropReason::PuntPoliced), 125u);
  EXPECT_EQ(r.sent(0).size(), 15u);
  // Policed per port: p1 has its own bucket.
  r.now += kMs;
  for (int i = 0; i < 12; ++i) r.inject(1, arp_request(kNhMac, "10.0.2.2", "10.0.2.1"));
  r.cycle();
  EXPECT_EQ(r.sent(1).size(), 10u);
  EXPECT_EQ(r.drops(1, DropReason::PuntPoliced), 2u);
  r.finish();
}

// --- h. Malformed frames -----------------------------------------------------------------------

TEST(LocalAgent, Ipv6GleanResolvesWithANeighbourSolicitation) {
  RIG(r);
  r.cycle(1);
  r.inject(0, udp6("2001:db8:2::7", 64));
  r.cycle();
  auto out = r.sent(1);
  ASSERT_EQ(out.size(), 1u);
  const Frame probe = out[0];
  ASSERT_GE(probe.size(), 86u);
  EXPECT_EQ(mac_at(probe, 0), "33:33:ff:00:00:07");
  EXPECT_EQ(mac_at(probe, 6), kPortMac[1]);
  EXPECT_EQ(ip6_at(probe, 22), "2001:db8:2::1");
  EXPECT_EQ(ip6_at(probe, 38), "ff02::1:ff00:7");
  EXPECT_EQ(probe[21], 255);
  EXPECT_EQ(probe[54], 135);
  EXPECT_EQ(ip6_at(probe, 62), "2001:db8:2::7");
  EXPECT_EQ(probe[78], 1) << "SLLA";
  EXPECT_EQ(mac_at(probe, 80), kPortMac[1]);
  EXPECT_EQ(icmp6_sum(&probe[22], &probe[38], &probe[54], be16(probe, 18)), 0);
  EXPECT_EQ(r.sw->totals().held, 1u);

  // The host's solicited NA (S and O, TLLA) releases the packet.
  std::vector<uint8_t> na(32, 0);
  na[0] = 136;
  na[4] = 0x60;
  const auto tgt = ip6_bytes("2001:db8:2::7");
  std::memcpy(&na[8], tgt.data(), 16);
  na[24] = 2;
  na[25] = 1;
  const auto mac = mac_bytes(kNhMac);
  std::memcpy(&na[26], mac.data(), 6);
  r.inject(1, icmp6("2001:db8:2::7", "2001:db8:2::1", kNhMac, kPortMac[1], na, 255));
  r.cycle();
  out = r.sent(1);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(mac_at(out[0], 0), kNhMac);
  EXPECT_EQ(mac_at(out[0], 6), kPortMac[1]);
  EXPECT_EQ(ip6_at(out[0], 38), "2001:db8:2::7");
  EXPECT_EQ(out[0][21], 63) << "hop limit decremented";
  const Neighbour* n = r.neighbour(1, "2001:db8:2::7");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->state, NudState::Reachable);
  ASSERT_NE(r.route_group("2001:db8:2::7", 128), nullptr);
  const uint64_t punted = r.punt_activity();
  r.inject(0, udp6("2001:db8:2::7", 64));
  r.cycle();
  ASSERT_EQ(r.sent(1).size(), 1u);
  EXPECT_EQ(r.punt_activity(), punted);
  r.finish();
}

TEST(LocalAgent, TrafficToAStaleNeighbourProbesItAndItsFailureRemovesTheRoute) {
  RIG(r, Options{.sections = "neighbours: {delay_first_probe_s: 0.05, retrans_s: 0.1, ucast_probes: 2}\n"});
  const uint64_t t0 = r.now;
  r.inject(0, arp_request(kH0Mac, "10.0.1.2", "10.0.1.1"));
  r.cycle();
  ASSERT_EQ(r.sent(0).size(), 1u);
  ASSERT_NE(r.route_group("10.0.1.2", 32), nullptr);
  // Traffic to the host through its host route, from p2's side.
  r.inject(2, udp4("10.0.1.2", 64, 1, "10.8.0.9", kFarMac, kPortMac[2]));
  r.cycle();
  ASSERT_EQ(r.sent(0).size(), 1u);
  // The agent reads the forwarding counters once a second: STALE -> DELAY, then PROBE with a
  // unicast ARP request to the MAC it knows, ucast_probes of them, then FAILED.
  r.run_to(t0 + kS + 40 * kMs);
  EXPECT_EQ(r.neighbour(0, "10.0.1.2")->state, NudState::Delay);
  EXPECT_TRUE(r.sent(0).empty());
  r.run_to(t0 + kS + 60 * kMs);
  EXPECT_EQ(r.neighbour(0, "10.0.1.2")->state, NudState::Probe);
  auto probes = r.sent(0);
  ASSERT_EQ(probes.size(), 1u);
  EXPECT_EQ(mac_at(probes[0], 0), kH0Mac) << "unicast";
  EXPECT_EQ(be16(probes[0], 20), 1);
  EXPECT_EQ(ip4_at(probes[0], 28), "10.0.1.1");
  EXPECT_EQ(ip4_at(probes[0], 38), "10.0.1.2");
  r.run_to(t0 + kS + 300 * kMs);
  EXPECT_EQ(r.sent(0).size(), 1u) << "the second unicast probe";
  const Neighbour* n = r.neighbour(0, "10.0.1.2");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->state, NudState::Failed);
  EXPECT_EQ(r.route_group("10.0.1.2", 32), nullptr) << "a failed neighbour's host route goes";
  EXPECT_FALSE(r.state->group_id("neighbour:10.0.1.2").has_value());
  // The next packet to it is gleaned again: a broadcast request.
  r.inject(2, udp4("10.0.1.2", 64, 2, "10.8.0.9", kFarMac, kPortMac[2]));
  r.cycle();
  probes = r.sent(0);
  ASSERT_EQ(probes.size(), 1u);
  EXPECT_EQ(mac_at(probes[0], 0), kBcast);
  // It answers at last: the packet goes.
  r.inject(0, arp(2, kPortMac[0], kH0Mac, "10.0.1.2", kPortMac[0], "10.0.1.1"));
  r.cycle();
  const auto out = r.sent(0);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0][42], 2);
  EXPECT_EQ(r.neighbour(0, "10.0.1.2")->state, NudState::Reachable);
  r.finish();
}

TEST(LocalAgent, ExpiredPacketsOverTheirPolicerKeepTheirReason) {
  RIG(r, Options{.sections = "copp: {icmp_error: {pps: 100, burst: 5}}\n"});
  r.cycle(1);
  for (uint8_t s = 0; s < 20; ++s) r.inject(0, udp4("10.8.0.5", 1, s));
  r.cycle();
  EXPECT_EQ(r.sent(0).size(), 5u) << "burst ICMP errors";
  EXPECT_TRUE(r.sent(2).empty());
  EXPECT_EQ(r.drops(0, DropReason::TtlExpired), 20u);
  EXPECT_EQ(r.drops(0, DropReason::PuntPoliced), 0u);
  r.finish();
}

TEST(LocalAgent, TwoWorkersAnswerOnTheirOwnPorts) {
  RIG(r, Options{.workers = 2});  // p0 and p2 on worker 0, p1 on worker 1
  ASSERT_EQ(r.sw->num_workers(), 2);
  r.cycle(1);
  r.inject(1, arp_request(kNhMac, "10.0.2.2", "10.0.2.1"));
  r.inject(0, arp_request(kH0Mac, "10.0.1.2", "10.0.1.1"));
  r.cycle();
  auto out1 = r.sent(1);
  ASSERT_EQ(out1.size(), 1u);
  EXPECT_EQ(arp_text(out1[0]), fmt::format("{} {} op2 {} 10.0.2.1 {} 10.0.2.2", kNhMac, kPortMac[1], kPortMac[1], kNhMac));
  auto out0 = r.sent(0);
  ASSERT_EQ(out0.size(), 1u);
  EXPECT_EQ(arp_text(out0[0]), fmt::format("{} {} op2 {} 10.0.1.1 {} 10.0.1.2", kH0Mac, kPortMac[0], kPortMac[0], kH0Mac));
  // A glean from worker 1's port to worker 0's: held, then released through worker 0.
  r.inject(1, udp4("10.0.3.7", 64, 1, "10.0.2.2", kNhMac, kPortMac[1]));
  r.cycle();
  ASSERT_EQ(r.sent(2).size(), 1u);
  r.inject(2, arp(2, kPortMac[2], kH2Mac, "10.0.3.7", kPortMac[2], "10.0.3.1"));
  r.cycle();
  auto out2 = r.sent(2);
  ASSERT_EQ(out2.size(), 1u);
  EXPECT_EQ(mac_at(out2[0], 0), kH2Mac);
  EXPECT_EQ(out2[0][42], 1);
  // Both workers' FIBs have the host routes.
  r.inject(1, udp4("10.0.1.2", 64, 2, "10.0.2.2", kNhMac, kPortMac[1]));
  r.inject(0, udp4("10.0.2.2", 64, 3));
  r.cycle();
  out0 = r.sent(0);
  out1 = r.sent(1);
  ASSERT_EQ(out0.size(), 1u);
  ASSERT_EQ(out1.size(), 1u);
  EXPECT_EQ(mac_at(out0[0], 0), kH0Mac);
  EXPECT_EQ(mac_at(out1[0], 0), kNhMac);
  r.finish();
}

TEST(LocalAgent, APuntRingOverflowKeepsTheBooks) {
  RIG(r);
  r.cycle(1);
  // More pings than the punt ring holds, received while the control thread does not poll.
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < 550; ++i) r.inject(0, ping4("10.0.1.2", "10.0.1.1", kH0Mac, kPortMac[0], static_cast<uint16_t>(i)));
    for (int k = 0; k < 12; ++k) r.sw->poll_all(r.now);
  }
  // A DPDK ring of kRingSize slots holds kRingSize - 1 packets.
  const unsigned ring = LocalPath::kRingSize - 1;
  EXPECT_EQ(r.drops(0, DropReason::PuntQueueFull), 1100u - ring);
  EXPECT_EQ(r.sw->totals().in_flight, ring);
  r.expect_balanced("punt ring full");
  r.cycle(40);
  const uint64_t answered = r.agent->counters().echo_replies;
  EXPECT_EQ(answered, ring);
  uint64_t out = r.sent(0).size();
  EXPECT_EQ(out + r.drops(DropReason::LocalTxFull) + r.drops(DropReason::TailDropPackets), answered);
  r.finish();
}

// A packet to
// a connected IPv4 subnet's broadcast or network address is gleaned like a host's, so the switch
// broadcasts "who has 10.0.1.255" / "who has 10.0.1.0", creates neighbour entries for them and
// holds the packets until resolution fails (LocalAgent::on_glean refuses only our own
// addresses). A router never resolves these (RFC 1812 5.3.5.2, RFC 2644: directed broadcasts
// are not forwarded by default; the loader itself refuses both as interface addresses).
TEST(LocalAgent, NoArpForTheSubnetsBroadcastOrNetworkAddress) {
  RIG(r);
  r.cycle(1);
  r.inject(1, udp4("10.0.1.255", 64, 1, "10.0.2.2", kNhMac, kPortMac[1]));
  r.inject(1, udp4("10.0.1.0", 64, 2, "10.0.2.2", kNhMac, kPortMac[1]));
  r.cycle();
  for (const Frame& f : r.sent(0)) ADD_FAILURE() << "sent on p0: " << arp_text(f);
  EXPECT_EQ(r.neighbour(0, "10.0.1.255"), nullptr);
  EXPECT_EQ(r.neighbour(0, "10.0.1.0"), nullptr);
  r.finish();
}


}  // namespace
}  // namespace rs::test
