// A VLAN's router interface (SVI) on a stepped switch (the rig: local_agent_rig.h, its p1 and p2
// bridged into VLAN 10): the switch answers ARP, ND and ping on the VLAN's address out of the
// port the question came from, tagged as that port carries the VLAN; it resolves the VLAN's
// hosts by probes flooded to the VLAN and routes to each out of the port the bridge found it
// on; it routes the VLAN's frames sent to its MAC; and a host that moves takes its next hop
// along. Frames are decoded by scapy where it is installed.
//
//   p0 02:00:00:00:00:10  10.0.1.1/24  2001:db8:1::1/64   host h0 10.0.1.2
//   p1 access VLAN 10                                   host A 10.0.10.2, 2001:db8:10::2
//   p2 tagged VLAN 10                                   host B 10.0.10.3
//   VLAN 10's interface: 02:00:00:00:01:0a  10.0.10.1/24  2001:db8:10::1/64
#include "control/runtime/control_reads.h"
#include "tests/unit/control/local_agent_rig.h"

namespace rs::test {
namespace {

const char* const kSvi = "02:00:00:00:01:0a";
const char* const kA = "02:aa:00:00:0a:02";
const char* const kB = "02:aa:00:00:0a:03";

Options svi_rig() {
  Options o;
  o.port_keys = {nullptr, ", vlan: {access: 10}", ", vlan: {tagged: [10]}"};
  o.sections = fmt::format("vlans: [{{id: 10, ipv4: 10.0.10.1/24, ipv6: \"2001:db8:10::1/64\", mac: \"{}\"}}]\n", kSvi);
  return o;
}

uint16_t svi10() { return svi_iface(10); }

TEST(LocalAgentSvi, ArpForTheVlanAddressIsAnsweredWhereItCameFromAndStillFlooded) {
  RIG(r, svi_rig());
  r.cycle(1);
  // A, untagged on p1: the answer goes back untagged; B's trunk still hears the broadcast.
  const Frame ask = arp_request(kA, "10.0.10.2", "10.0.10.1");
  r.inject(1, ask);
  r.cycle();
  auto p1 = r.sent(1), p2 = r.sent(2);
  ASSERT_EQ(p1.size(), 1u);
  EXPECT_EQ(vid_of(p1[0]), 0);
  EXPECT_EQ(arp_text(p1[0]), fmt::format("{} {} op2 {} 10.0.10.1 {} 10.0.10.2", kA, kSvi, kSvi, kA));
  ASSERT_EQ(p2.size(), 1u) << "the broadcast, flooded to the VLAN";
  EXPECT_EQ(vid_of(p2[0]), 10);
  EXPECT_EQ(untagged(p2[0]), ask);
  EXPECT_TRUE(r.sent(0).empty()) << "p0 is not in the VLAN";
  const Neighbour* a = r.neighbour(svi10(), "10.0.10.2");
  ASSERT_NE(a, nullptr) << "a request for us creates the requester's entry";
  EXPECT_EQ(mac_at(Frame(a->mac.addr_bytes, a->mac.addr_bytes + 6), 0), kA);

  // B, tagged on p2: the answer goes back tagged.
  r.inject(2, tagged(arp_request(kB, "10.0.10.3", "10.0.10.1"), 10));
  r.cycle();
  p2 = r.sent(2);
  ASSERT_EQ(p2.size(), 1u);
  EXPECT_EQ(vid_of(p2[0]), 10);
  EXPECT_EQ(arp_text(untagged(p2[0])), fmt::format("{} {} op2 {} 10.0.10.1 {} 10.0.10.3", kB, kSvi, kSvi, kB));
  p1 = r.sent(1);
  ASSERT_EQ(p1.size(), 1u);
  EXPECT_EQ(vid_of(p1[0]), 0) << "flooded to the access port untagged";
  EXPECT_EQ(r.agent->port_name(svi10()), "Vlan10");
  r.finish();
}

TEST(LocalAgentSvi, PingAndNeighbourSolicitationOnTheVlanAreAnswered) {
  RIG(r, svi_rig());
  r.cycle(1);
  r.inject(2, tagged(ping4("10.0.10.3", "10.0.10.1", kB, kSvi, 7), 10));
  r.cycle();
  auto p2 = r.sent(2);
  ASSERT_EQ(p2.size(), 1u);
  EXPECT_TRUE(r.sent(1).empty()) << "a frame to the interface's MAC is not flooded";
  if (have_scapy()) {
    const auto lines = scapy(p2, "p = pk[0]\n"
                                 "print(p.dst, p.src, p[Dot1Q].vlan, p[IP].src, p[IP].dst, p[ICMP].type, p[ICMP].seq,"
                                 " same_after(p, [(IP, 'chksum'), (ICMP, 'chksum')]))\n");
    ASSERT_EQ(lines.size(), 1u) << (lines.empty() ? "" : lines[0]);
    EXPECT_EQ(lines[0], fmt::format("{} {} 10 10.0.10.1 10.0.10.3 0 7 True", kB, kSvi));
  }
  // A solicits the interface's IPv6 address (multicast): the advert goes to A, untagged; the
  // solicitation is flooded to the trunk too.
  r.inject(1, ns("2001:db8:10::2", "2001:db8:10::1", kA));
  r.cycle();
  auto p1 = r.sent(1);
  ASSERT_EQ(p1.size(), 1u);
  EXPECT_EQ(mac_at(p1[0], 0), kA);
  EXPECT_EQ(mac_at(p1[0], 6), kSvi);
  EXPECT_EQ(p1[0][14 + 40], 136) << "a neighbour advertisement";
  EXPECT_EQ(ip6_at(p1[0], 14 + 40 + 8), "2001:db8:10::1") << "its target";
  p2 = r.sent(2);
  ASSERT_EQ(p2.size(), 1u);
  EXPECT_EQ(vid_of(p2[0]), 10);
  EXPECT_NE(r.neighbour(svi10(), "2001:db8:10::2"), nullptr);
  r.finish();
}

TEST(LocalAgentSvi, RoutingIntoTheVlanFindsTheHostWhereTheBridgeLearnedItAndFollowsItWhenItMoves) {
  RIG(r, svi_rig());
  r.cycle(1);
  r.inject(0, udp4("10.0.10.3", 64, 1));
  r.inject(0, udp4("10.0.10.3", 64, 2));
  r.cycle();
  // One probe, flooded to the VLAN from the interface: untagged on p1, tagged on p2.
  auto p1 = r.sent(1), p2 = r.sent(2);
  ASSERT_EQ(p1.size(), 1u);
  ASSERT_EQ(p2.size(), 1u);
  const std::string probe = fmt::format("{} {} op1 {} 10.0.10.1 00:00:00:00:00:00 10.0.10.3", kBcast, kSvi, kSvi);
  EXPECT_EQ(arp_text(p1[0]), probe);
  EXPECT_EQ(vid_of(p2[0]), 10);
  EXPECT_EQ(arp_text(untagged(p2[0])), probe);
  EXPECT_EQ(r.sw->totals().held, 2u);

  // B answers on the trunk: the held packets go to it there, tagged, routed.
  r.inject(2, tagged(arp(2, kSvi, kB, "10.0.10.3", kSvi, "10.0.10.1"), 10));
  r.cycle();
  p2 = r.sent(2);
  ASSERT_EQ(p2.size(), 2u);
  for (std::size_t i = 0; i < p2.size(); ++i) {
    EXPECT_EQ(vid_of(p2[i]), 10) << i;
    const Frame f = untagged(p2[i]);
    EXPECT_EQ(mac_at(f, 0), kB);
    EXPECT_EQ(mac_at(f, 6), kSvi);
    EXPECT_EQ(f[22], 63) << "TTL";
    EXPECT_TRUE(ipv4_checksum_ok(f));
    EXPECT_EQ(f[42], 1 + i) << "order";
  }
  EXPECT_TRUE(r.sent(1).empty());
  const GroupSpec* g = r.route_group("10.0.10.3", 32);
  ASSERT_NE(g, nullptr);
  ASSERT_EQ(g->members.size(), 1u);
  EXPECT_EQ(g->members[0].port, 2);
  EXPECT_EQ(g->members[0].vlan, 10);

  // Then the data path forwards them itself, tagged as p2 carries VLAN 10.
  const uint64_t punted = r.punt_activity();
  r.inject(0, udp4("10.0.10.3", 64, 3));
  r.cycle();
  p2 = r.sent(2);
  ASSERT_EQ(p2.size(), 1u);
  EXPECT_EQ(r.punt_activity(), punted);
  if (have_scapy()) {
    const auto lines = scapy(p2, "p = pk[0]\n"
                                 "print(p.dst, p.src, p[Dot1Q].vlan, p[IP].ttl, p[IP].dst, same_after(p, [(IP, 'chksum')]))\n");
    ASSERT_EQ(lines.size(), 1u) << (lines.empty() ? "" : lines[0]);
    EXPECT_EQ(lines[0], fmt::format("{} {} 10 63 10.0.10.3 True", kB, kSvi));
  }

  // B moves to the access port (its next frame comes from there): within the agent's next look
  // its next hop follows, and the routed packets leave p1 untagged.
  r.inject(1, (Eth{.dst = kA, .src = kB} / Payload::of_size(60, 1)).bytes());
  r.run_to(r.now + 1200 * kMs, 100 * kMs);
  (void)r.sent(0), (void)r.sent(1), (void)r.sent(2);
  r.inject(0, udp4("10.0.10.3", 64, 4));
  r.cycle();
  p1 = r.sent(1);
  ASSERT_EQ(p1.size(), 1u);
  EXPECT_EQ(vid_of(p1[0]), 0);
  EXPECT_EQ(mac_at(p1[0], 0), kB);
  EXPECT_EQ(p1[0][42], 4);
  EXPECT_TRUE(r.sent(2).empty());
  r.finish();
}

TEST(LocalAgentSvi, FramesToTheInterfaceMacAreRoutedOutOfTheVlanOthersBridged) {
  RIG(r, svi_rig());
  r.cycle(1);
  // h0 on p0 is resolved first (a request from it creates its entry; its route follows).
  r.inject(0, arp_request(kH0Mac, "10.0.1.2", "10.0.1.1"));
  r.cycle();
  (void)r.sent(0);
  ASSERT_NE(r.route_group("10.0.1.2", 32), nullptr);
  // From A (untagged) and B (tagged) to h0 through the interface: out of p0 untagged, one hop.
  r.inject(1, udp4("10.0.1.2", 64, 1, "10.0.10.2", kA, kSvi));
  r.inject(2, tagged(udp4("10.0.1.2", 64, 2, "10.0.10.3", kB, kSvi), 10));
  r.cycle();
  auto p0 = r.sent(0);
  ASSERT_EQ(p0.size(), 2u);
  for (std::size_t i = 0; i < p0.size(); ++i) {
    EXPECT_EQ(vid_of(p0[i]), 0) << "the VLAN's tag stays in the VLAN";
    EXPECT_EQ(mac_at(p0[i], 0), kH0Mac);
    EXPECT_EQ(mac_at(p0[i], 6), kPortMac[0]);
    EXPECT_EQ(p0[i][22], 63);
    EXPECT_TRUE(ipv4_checksum_ok(p0[i]));
  }
  EXPECT_TRUE(r.sent(1).empty());
  EXPECT_TRUE(r.sent(2).empty());
  // A to B by B's MAC (B learned from its frame above): bridged, TTL untouched, tagged for p2.
  r.inject(1, udp4("10.0.10.3", 64, 3, "10.0.10.2", kA, kB));
  r.cycle();
  auto p2 = r.sent(2);
  ASSERT_EQ(p2.size(), 1u);
  EXPECT_EQ(vid_of(p2[0]), 10);
  EXPECT_EQ(untagged(p2[0])[22], 64) << "bridged, not routed";
  EXPECT_TRUE(r.sent(0).empty());
  r.finish();
}

// A unicast IP packet in a link-layer multicast or broadcast frame is not the router's: on the
// VLAN it is only flooded, and nowhere does its expiry earn an ICMP error (RFC 1812 4.3.2.7,
// RFC 4443 2.4 e.3).
TEST(LocalAgentSvi, UnicastPacketsInMulticastFramesGetNoIcmpErrors) {
  RIG(r, svi_rig());
  r.cycle(1);
  r.inject(1, (Eth{.dst = "33:33:00:00:00:01", .src = kA} / Ipv6{.src = "2001:db8:10::2", .dst = "2001:db8:1::2", .hop_limit = 1} /
               Udp{.sport = 40000, .dport = 33434} / Payload::of_size(16))
                  .bytes());
  r.inject(0, udp4("10.0.10.9", 1, 1, "10.0.1.2", kH0Mac, kBcast));
  r.cycle();
  EXPECT_TRUE(r.sent(1).empty()) << "no time exceeded back to A";
  EXPECT_EQ(r.sent(2).size(), 1u) << "flooded in the VLAN";
  EXPECT_TRUE(r.sent(0).empty()) << "no time exceeded back to h0";
  EXPECT_EQ(r.agent->counters().ttl_exceeded_sent, 0u);
  EXPECT_EQ(r.agent->counters().icmp_not_sent, 1u) << "the routed port's expired broadcast frame";
  r.finish();
}

// A route whose next hop is named by IP on the VLAN's subnet: it has the VLAN and no port until
// the host answers, then goes out of the port the host answered on, tagged. The group listing
// shows both states.
TEST(LocalAgentSvi, ANextHopByIpOnTheVlanIsFoundWhereItAnswers) {
  Options o = svi_rig();
  o.routes = "  - {prefix: 10.9.0.0/16, via: 10.0.10.3}\n";
  RIG(r, o);
  auto member = [&] {
    const json groups = read_state(*r.state, "group.list", json::object());
    for (auto& g : groups)
      for (auto& m : g["members"])
        if (m.value("ip", "") == "10.0.10.3") return m;
    return json();
  };
  r.cycle();
  json m = member();
  EXPECT_TRUE(m["port"].is_null()) << m.dump();
  EXPECT_EQ(m["vlan"], 10);
  EXPECT_EQ(m["resolved"], false);
  // The agent resolves it at start: its probe is flooded to the VLAN.
  auto p1 = r.sent(1), p2 = r.sent(2);
  ASSERT_EQ(p1.size(), 1u);
  ASSERT_EQ(p2.size(), 1u);
  EXPECT_EQ(arp_text(p1[0]), fmt::format("{} {} op1 {} 10.0.10.1 00:00:00:00:00:00 10.0.10.3", kBcast, kSvi, kSvi));
  r.inject(2, tagged(arp(2, kSvi, kB, "10.0.10.3", kSvi, "10.0.10.1"), 10));
  r.cycle();
  m = member();
  EXPECT_EQ(m["port"], "p2") << m.dump();
  EXPECT_EQ(m["resolved"], true);
  EXPECT_EQ(m["mac"], kB);
  r.inject(0, udp4("10.9.1.1", 64, 5));
  r.cycle();
  p2 = r.sent(2);
  ASSERT_EQ(p2.size(), 1u);
  EXPECT_EQ(vid_of(p2[0]), 10);
  EXPECT_EQ(mac_at(p2[0], 0), kB);
  EXPECT_EQ(mac_at(p2[0], 6), kSvi);
  EXPECT_TRUE(r.sent(1).empty());
  r.finish();
}

}  // namespace
}  // namespace rs::test
