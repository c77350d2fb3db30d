// The switch as a host on its links, end to end in one thread: a switch whose three ports are
// ring ethdevs (the test plays the hosts behind them), its running state and its LocalAgent,
// stepped by hand: frames in, the workers' poll, the agent's poll, the workers' poll again (the
// agent's frames leave through the inject rings), and what left each port read back, by hand
// and by scapy (an independent decoder). Every test ends with the books balanced and every mbuf
// of both pools (the peers' and the switch's) back.
//
// Here: ARP, neighbour discovery, echo, ICMP errors, malformed frames, a switch without addresses;
// local_agent_glean_test.cc: resolving neighbours, holding packets, policing.
#include "tests/unit/control/local_agent_rig.h"

namespace rs::test {
namespace {

TEST(LocalAgent, ArpRequestForOurAddressIsAnsweredAndTheRequesterLearned) {
  RIG(r);
  r.cycle(1);  // the agent's first poll
  const uint64_t originated = r.sw->totals().originated;
  r.inject(0, arp_request(kH0Mac, "10.0.1.2", "10.0.1.1"));
  r.cycle();
  const auto out = r.sent(0);
  ASSERT_EQ(out.size(), 1u) << "one ARP reply out of p0";
  EXPECT_EQ(out[0].size(), 60u);
  EXPECT_EQ(arp_text(out[0]), fmt::format("{} {} op2 {} 10.0.1.1 {} 10.0.1.2", kH0Mac, kPortMac[0], kPortMac[0], kH0Mac));
  EXPECT_TRUE(r.sent(1).empty());
  EXPECT_TRUE(r.sent(2).empty());
  EXPECT_EQ(r.drops(0, DropReason::LocalDelivered), 1u);
  EXPECT_EQ(r.drops(DropReason::NonIp), 0u);
  EXPECT_EQ(r.sw->totals().originated, originated + 1);
  EXPECT_EQ(r.agent->counters().arp_requests, 1u);
  EXPECT_EQ(r.agent->counters().arp_replies_sent, 1u);

  // The requester is a neighbour now (STALE: we have heard from it, never confirmed), and its
  // host route is in the running state, to a group of its own with its MAC.
  const Neighbour* n = r.neighbour(0, "10.0.1.2");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->state, NudState::Stale);
  EXPECT_EQ(mac_at(Frame(n->mac.addr_bytes, n->mac.addr_bytes + 6), 0), kH0Mac);
  const GroupSpec* g = r.route_group("10.0.1.2", 32);
  ASSERT_NE(g, nullptr) << "no /32 host route for the requester";
  EXPECT_EQ(g->name, "neighbour:10.0.1.2");
  EXPECT_EQ(g->origin, GroupOrigin::Neighbour);
  ASSERT_EQ(g->members.size(), 1u);
  EXPECT_EQ(g->members[0].port, 0);
  EXPECT_EQ(mac_at(Frame(g->members[0].mac.addr_bytes, g->members[0].mac.addr_bytes + 6), 0), kH0Mac);
  EXPECT_EQ(r.agent->counters().fib_commits, 1u);
  EXPECT_EQ(r.agent->counters().fib_errors, 0u);

  if (have_scapy()) {
    const auto lines = scapy(out, "for p in pk:\n"
                                  "  a = p[ARP]\n"
                                  "  print(len(p), p.dst, p.src, hex(p.type), a.hwtype, hex(a.ptype), a.hwlen, a.plen, a.op,"
                                  " a.hwsrc, a.psrc, a.hwdst, a.pdst)\n");
    ASSERT_EQ(lines.size(), 1u) << (lines.empty() ? "" : lines[0]);
    EXPECT_EQ(lines[0], fmt::format("60 {} {} 0x806 1 0x800 6 4 2 {} 10.0.1.1 {} 10.0.1.2", kH0Mac, kPortMac[0], kPortMac[0], kH0Mac));
  }
  r.finish();
}

// --- b. ARP not for us; a gratuitous ARP moves a known neighbour -------------------------------

TEST(LocalAgent, ArpForAnotherAddressIsIgnoredAndGratuitousArpUpdatesTheNeighbour) {
  RIG(r);
  r.inject(0, arp_request(kH0Mac, "10.0.1.2", "10.0.1.99"));  // a host of the subnet, not us
  r.inject(0, arp_request(kH0Mac, "10.0.1.2", "10.0.2.1"));   // p1's address, asked on p0
  r.cycle();
  EXPECT_TRUE(r.sent(0).empty());
  EXPECT_EQ(r.agent->counters().arp_ignored, 2u);
  EXPECT_EQ(r.drops(0, DropReason::LocalDelivered), 2u);
  EXPECT_EQ(r.neighbour(0, "10.0.1.2"), nullptr) << "a request for someone else creates no entry";

  r.inject(0, arp_request(kH0Mac, "10.0.1.2", "10.0.1.1"));
  r.cycle();
  ASSERT_EQ(r.sent(0).size(), 1u);
  ASSERT_NE(r.neighbour(0, "10.0.1.2"), nullptr);

  // The host announces a new MAC: no answer, the entry and the host route take it.
  r.inject(0, arp(1, kBcast, kH0New, "10.0.1.2", "00:00:00:00:00:00", "10.0.1.2"));
  r.cycle();
  EXPECT_TRUE(r.sent(0).empty()) << "a gratuitous ARP is not answered";
  EXPECT_EQ(r.agent->counters().arp_gratuitous, 1u);
  const Neighbour* n = r.neighbour(0, "10.0.1.2");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->state, NudState::Stale);
  EXPECT_EQ(mac_at(Frame(n->mac.addr_bytes, n->mac.addr_bytes + 6), 0), kH0New);
  const json j = r.agent->neighbours_json();
  ASSERT_EQ(j.size(), 1u) << j.dump();
  EXPECT_EQ(j[0]["ip"], "10.0.1.2");
  EXPECT_EQ(j[0]["port"], "p0");
  EXPECT_EQ(j[0]["mac"], kH0New);
  EXPECT_EQ(j[0]["state"], "stale");
  const GroupSpec* g = r.route_group("10.0.1.2", 32);
  ASSERT_NE(g, nullptr);
  ASSERT_EQ(g->members.size(), 1u);
  EXPECT_EQ(mac_at(Frame(g->members[0].mac.addr_bytes, g->members[0].mac.addr_bytes + 6), 0), kH0New);
  // And the data path uses it: a packet from p2's side to the host goes to the new MAC.
  r.inject(2, udp4("10.0.1.2", 64, 1, "10.0.3.9", kFarMac, kPortMac[2]));
  r.cycle();
  const auto out = r.sent(0);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(mac_at(out[0], 0), kH0New);
  EXPECT_EQ(mac_at(out[0], 6), kPortMac[0]);

  // A gratuitous ARP from a host we do not know creates nothing.
  r.inject(0, arp(1, kBcast, "02:aa:00:00:01:33", "10.0.1.33", "00:00:00:00:00:00", "10.0.1.33"));
  r.cycle();
  EXPECT_EQ(r.neighbour(0, "10.0.1.33"), nullptr);
  EXPECT_TRUE(r.sent(0).empty());
  r.finish();
}

// --- c. Echo, IPv6 neighbour solicitation ------------------------------------------------------

TEST(LocalAgent, PingsAndNeighbourSolicitationsAreAnswered) {
  RIG(r);
  r.inject(0, ping4("10.0.1.2", "10.0.1.1", kH0Mac, kPortMac[0], 7));
  r.cycle();
  auto out = r.sent(0);
  ASSERT_EQ(out.size(), 1u);
  const Frame e = out[0];
  ASSERT_GE(e.size(), 14u + 20 + 32);
  EXPECT_EQ(mac_at(e, 0), kH0Mac);
  EXPECT_EQ(mac_at(e, 6), kPortMac[0]);
  EXPECT_EQ(be16(e, 12), 0x0800);
  EXPECT_EQ(ip4_at(e, 26), "10.0.1.1");
  EXPECT_EQ(ip4_at(e, 30), "10.0.1.2");
  EXPECT_EQ(e[23], 1);  // ICMP
  EXPECT_TRUE(ipv4_checksum_ok(e));
  EXPECT_EQ(e[34], 0);  // echo reply
  EXPECT_EQ(be16(e, 38), 0x1234);
  EXPECT_EQ(be16(e, 40), 7);
  EXPECT_EQ(fold(sum16(e.data() + 34, be16(e, 16) - 20u)), 0) << "ICMP checksum";
  EXPECT_EQ(r.agent->counters().echo_replies, 1u);
  EXPECT_EQ(r.drops(0, DropReason::LocalDelivered), 1u);

  // NS for 2001:db8:1::1 from h0: a solicited NA with R, S and O and our MAC as TLLA.
  r.inject(0, ns("2001:db8:1::2", "2001:db8:1::1", kH0Mac));
  r.cycle();
  out = r.sent(0);
  ASSERT_EQ(out.size(), 1u);
  const Frame na = out[0];
  ASSERT_GE(na.size(), 14u + 40 + 32);
  EXPECT_EQ(mac_at(na, 0), kH0Mac);
  EXPECT_EQ(mac_at(na, 6), kPortMac[0]);
  EXPECT_EQ(be16(na, 12), 0x86DD);
  EXPECT_EQ(na[20], 58);
  EXPECT_EQ(na[21], 255);
  EXPECT_EQ(ip6_at(na, 22), "2001:db8:1::1");
  EXPECT_EQ(ip6_at(na, 38), "2001:db8:1::2");
  EXPECT_EQ(na[54], 136);
  EXPECT_EQ(na[58], 0xE0) << "R, S and O";
  EXPECT_EQ(ip6_at(na, 62), "2001:db8:1::1");
  EXPECT_EQ(na[78], 2) << "TLLA option";
  EXPECT_EQ(na[79], 1);
  EXPECT_EQ(mac_at(na, 80), kPortMac[0]);
  EXPECT_EQ(icmp6_sum(&na[22], &na[38], &na[54], be16(na, 18)), 0) << "ICMPv6 checksum";
  EXPECT_EQ(r.agent->counters().nd_solicitations, 1u);
  EXPECT_EQ(r.agent->counters().nd_adverts_sent, 1u);
  const Neighbour* n = r.neighbour(0, "2001:db8:1::2");
  ASSERT_NE(n, nullptr) << "the soliciting host is learned from its SLLA";
  EXPECT_EQ(n->state, NudState::Stale);
  ASSERT_NE(r.route_group("2001:db8:1::2", 128), nullptr) << "no /128 host route";

  // ICMPv6 echo.
  r.inject(0, ping6("2001:db8:1::2", "2001:db8:1::1", kH0Mac, kPortMac[0], 9));
  r.cycle();
  out = r.sent(0);
  ASSERT_EQ(out.size(), 1u);
  const Frame e6 = out[0];
  ASSERT_GE(e6.size(), 14u + 40 + 32);
  EXPECT_EQ(mac_at(e6, 0), kH0Mac);
  EXPECT_EQ(mac_at(e6, 6), kPortMac[0]);
  EXPECT_EQ(ip6_at(e6, 22), "2001:db8:1::1");
  EXPECT_EQ(ip6_at(e6, 38), "2001:db8:1::2");
  EXPECT_EQ(e6[54], 129);
  EXPECT_EQ(be16(e6, 58), 0x4321);
  EXPECT_EQ(be16(e6, 60), 9);
  EXPECT_EQ(icmp6_sum(&e6[22], &e6[38], &e6[54], be16(e6, 18)), 0);
  EXPECT_EQ(r.agent->counters().echo_replies, 2u);
  EXPECT_EQ(r.drops(0, DropReason::LocalDelivered), 3u);

  if (have_scapy()) {
    const auto lines = scapy({e, na, e6},
                             "p = pk[0]\n"
                             "print(p[IP].src, p[IP].dst, p[ICMP].type, p[ICMP].id, p[ICMP].seq,"
                             " same_after(p, [(IP, 'chksum'), (ICMP, 'chksum')]))\n"
                             "p = pk[1]; n = p[ICMPv6ND_NA]\n"
                             "print(p[IPv6].src, p[IPv6].dst, p[IPv6].hlim, n.R, n.S, n.O, n.tgt, p[ICMPv6NDOptDstLLAddr].lladdr,"
                             " same_after(p, [(ICMPv6ND_NA, 'cksum')]))\n"
                             "p = pk[2]; x = p[ICMPv6EchoReply]\n"
                             "print(p[IPv6].src, p[IPv6].dst, x.id, x.seq, same_after(p, [(ICMPv6EchoReply, 'cksum')]))\n");
    ASSERT_EQ(lines.size(), 3u) << (lines.empty() ? "" : lines[0]);
    EXPECT_EQ(lines[0], "10.0.1.1 10.0.1.2 0 4660 7 True");
    EXPECT_EQ(lines[1], fmt::format("2001:db8:1::1 2001:db8:1::2 255 1 1 1 2001:db8:1::1 {} True", kPortMac[0]));
    EXPECT_EQ(lines[2], "2001:db8:1::1 2001:db8:1::2 17185 9 True");
  }
  r.finish();
}

// --- d. ICMP errors --------------------------------------------------------------------------

TEST(LocalAgent, ExpiringTransitPacketsGetTimeExceeded) {
  RIG(r);
  const Frame orig = udp4("10.8.0.5", 1, 0x42);
  r.inject(0, orig);
  r.cycle();
  auto out = r.sent(0);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(r.sent(2).empty()) << "the expired packet itself goes nowhere";
  const Frame te = out[0];
  ASSERT_GE(te.size(), 14u + 20 + 8 + 20 + 8);
  EXPECT_EQ(mac_at(te, 0), kH0Mac);
  EXPECT_EQ(mac_at(te, 6), kPortMac[0]);
  EXPECT_EQ(ip4_at(te, 26), "10.0.1.1") << "from the ingress port's address";
  EXPECT_EQ(ip4_at(te, 30), "10.0.1.2");
  EXPECT_TRUE(ipv4_checksum_ok(te));
  EXPECT_EQ(te[34], 11);
  EXPECT_EQ(te[35], 0);
  EXPECT_EQ(fold(sum16(te.data() + 34, be16(te, 16) - 20u)), 0) << "ICMP checksum";
  // The quote: the original datagram from its IP header (all of it: it is short).
  const std::size_t dgram = be16(orig, 16);
  ASSERT_EQ(te.size(), 14u + 20 + 8 + dgram);
  EXPECT_TRUE(std::equal(orig.begin() + 14, orig.begin() + 14 + static_cast<long>(dgram), te.begin() + 42));
  EXPECT_EQ(r.drops(0, DropReason::TtlExpired), 1u);
  EXPECT_EQ(r.agent->counters().ttl_exceeded_sent, 1u);

  // IPv6, hop limit 1: ICMPv6 type 3.
  const Frame orig6 = udp6("2001:db8:8::5", 1);
  r.inject(0, orig6);
  r.cycle();
  out = r.sent(0);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(r.sent(2).empty());
  const Frame te6 = out[0];
  ASSERT_GE(te6.size(), 14u + 40 + 8 + 40 + 8);
  EXPECT_EQ(mac_at(te6, 0), kH0Mac);
  EXPECT_EQ(ip6_at(te6, 22), "2001:db8:1::1");
  EXPECT_EQ(ip6_at(te6, 38), "2001:db8:1::2");
  EXPECT_EQ(te6[54], 3);
  EXPECT_EQ(te6[55], 0);
  EXPECT_EQ(icmp6_sum(&te6[22], &te6[38], &te6[54], be16(te6, 18)), 0);
  EXPECT_TRUE(std::equal(orig6.begin() + 14, orig6.begin() + 14 + 40 + 24, te6.begin() + 62));
  EXPECT_EQ(r.drops(0, DropReason::TtlExpired), 2u);
  EXPECT_EQ(r.agent->counters().ttl_exceeded_sent, 2u);

  if (have_scapy()) {
    const auto lines = scapy({te, te6},
                             "p = pk[0]; i = p[IP]; c = p[ICMP]; q = p[IPerror]\n"
                             "print(p.dst, p.src, i.src, i.dst, i.ttl, hex(i.tos), i.proto, c.type, c.code, q.src, q.dst, q.ttl,"
                             " p[UDPerror].dport, same_after(p, [(IP, 'chksum'), (ICMP, 'chksum')]))\n"
                             "p = pk[1]; c = p[ICMPv6TimeExceeded]; q = p[IPerror6]\n"
                             "print(p[IPv6].src, p[IPv6].dst, p[IPv6].hlim, c.type, c.code, q.src, q.dst, q.hlim, p[UDPerror].dport,"
                             " same_after(p, [(ICMPv6TimeExceeded, 'cksum')]))\n");
    ASSERT_EQ(lines.size(), 2u) << (lines.empty() ? "" : lines[0]);
    EXPECT_EQ(lines[0], fmt::format("{} {} 10.0.1.1 10.0.1.2 64 0xc0 1 11 0 10.0.1.2 10.8.0.5 1 33434 True", kH0Mac, kPortMac[0]));
    EXPECT_EQ(lines[1], "2001:db8:1::1 2001:db8:1::2 64 3 0 2001:db8:1::2 2001:db8:8::5 1 33434 True");
  }
  r.finish();
}

TEST(LocalAgent, NoRouteIsAnsweredOnlyWherePortsAskForIt) {
  RIG(r);
  // p0 has icmp_unreachable: destination unreachable from 10.0.1.1.
  const Frame orig = udp4("10.77.0.1", 64, 1);
  r.inject(0, orig);
  r.cycle();
  auto out = r.sent(0);
  ASSERT_EQ(out.size(), 1u);
  const Frame u = out[0];
  EXPECT_EQ(mac_at(u, 0), kH0Mac);
  EXPECT_EQ(ip4_at(u, 26), "10.0.1.1");
  EXPECT_EQ(ip4_at(u, 30), "10.0.1.2");
  EXPECT_EQ(u[34], 3);
  EXPECT_EQ(u[35], 0);
  EXPECT_TRUE(ipv4_checksum_ok(u));
  EXPECT_EQ(fold(sum16(u.data() + 34, be16(u, 16) - 20u)), 0);
  EXPECT_EQ(ip4_at(u, 42 + 16), "10.77.0.1") << "the quote's destination";
  EXPECT_EQ(r.drops(0, DropReason::NoRoute), 1u);
  EXPECT_EQ(r.agent->counters().unreachable_sent, 1u);

  // p1 has not: no ICMP, the packet dropped as no_route, and the punt stage never sees it.
  const uint64_t punted = r.punt_activity();
  r.inject(1, udp4("10.77.0.1", 64, 2, "10.0.2.2", kNhMac, kPortMac[1]));
  r.cycle();
  for (int p = 0; p < kPorts; ++p) EXPECT_TRUE(r.sent(p).empty()) << p;
  EXPECT_EQ(r.drops(1, DropReason::NoRoute), 1u);
  EXPECT_EQ(r.agent->counters().unreachable_sent, 1u);
  EXPECT_EQ(r.punt_activity(), punted);
  r.finish();
}

// --- e. Glean: a connected host resolved on demand ---------------------------------------------

TEST(LocalAgent, MalformedArpAndNdAreCountedNotAnswered) {
  RIG(r);
  r.inject(0, arp(1, kBcast, kH0Mac, "10.0.1.2", "00:00:00:00:00:00", "10.0.1.1", /*hlen=*/5));
  r.inject(0, arp(7, kBcast, kH0Mac, "10.0.1.2", "00:00:00:00:00:00", "10.0.1.1"));  // no such op
  r.cycle();
  EXPECT_EQ(r.drops(0, DropReason::MalformedArp), 2u);
  EXPECT_EQ(r.neighbour(0, "10.0.1.2"), nullptr);
  r.inject(0, ns("2001:db8:1::2", "2001:db8:1::1", kH0Mac, /*good_sum=*/false));
  r.inject(0, ns("2001:db8:1::2", "2001:db8:1::1", kH0Mac, true, /*hop_limit=*/64));  // not from on-link
  r.cycle();
  EXPECT_EQ(r.drops(0, DropReason::MalformedNd), 2u);
  EXPECT_EQ(r.neighbour(0, "2001:db8:1::2"), nullptr);
  for (int p = 0; p < kPorts; ++p) EXPECT_TRUE(r.sent(p).empty()) << p;
  EXPECT_EQ(r.agent->counters().arp_replies_sent + r.agent->counters().nd_adverts_sent, 0u);
  // And the agent still answers what is well formed.
  r.inject(0, arp_request(kH0Mac, "10.0.1.2", "10.0.1.1"));
  r.inject(0, ns("2001:db8:1::2", "2001:db8:1::1", kH0Mac));
  r.cycle();
  EXPECT_EQ(r.sent(0).size(), 2u);
  r.finish();
}

// --- i. Packets held when the agent goes -------------------------------------------------------

TEST(LocalAgent, DestroyedWithPacketsHeldLeaksNothing) {
  RIG(r);
  for (uint8_t s = 1; s <= 3; ++s) r.inject(0, udp4("10.0.3.7", 64, s));
  r.inject(0, udp4("10.0.3.8", 64, 4));
  r.cycle();
  EXPECT_EQ(r.sw->totals().held, 4u);
  EXPECT_EQ(r.sent(2).size(), 2u) << "one probe for each host";
  const uint64_t shutdown = r.drops(DropReason::Shutdown);
  r.finish();  // the agent goes with the four packets held
  EXPECT_EQ(r.drops(DropReason::Shutdown), shutdown + 4);
  EXPECT_EQ(r.drops(0, DropReason::Shutdown), 4u);
}

// --- j. A switch with no addresses -----------------------------------------------------------

TEST(LocalAgent, WithoutAddressesTheSwitchIsAsBefore) {
  Rig r(Options{.addresses = false});
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.sw->local(), nullptr);
  EXPECT_EQ(r.agent, nullptr);
  EXPECT_EQ(r.cfg.groups.size(), 2u) << "no local or connected groups";
  r.inject(0, arp_request(kH0Mac, "10.0.1.2", "10.0.1.1"));
  r.inject(0, udp4("10.8.0.5", 1, 1));
  r.inject(0, udp4("10.77.0.1", 64, 2));
  r.cycle();
  for (int p = 0; p < kPorts; ++p) EXPECT_TRUE(r.sent(p).empty()) << p;
  EXPECT_EQ(r.drops(0, DropReason::NonIp), 1u);
  EXPECT_EQ(r.drops(0, DropReason::TtlExpired), 1u);
  EXPECT_EQ(r.drops(0, DropReason::NoRoute), 1u);
  EXPECT_EQ(r.drops(DropReason::LocalDelivered), 0u);
  EXPECT_EQ(r.punt_activity(), 0u);
  const SwitchTotals t = r.sw->totals();
  EXPECT_EQ(t.originated, 0u);
  EXPECT_EQ(t.held, 0u);
  // Forwarding is untouched.
  r.inject(0, udp4("10.8.0.5", 64, 3));
  r.cycle();
  const auto out = r.sent(2);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(mac_at(out[0], 0), kFarMac);
  r.finish();
}


// --- TTL 1 to us, DAD, IPv6 glean, NUD driven by traffic, ICMP-error policing, two workers, a
// full punt ring ------------------------------------------------------------------------------

TEST(LocalAgent, PingWithTtlOneToOurAddressIsAnsweredNotExpired) {
  RIG(r);
  Frame f = ping4("10.0.1.2", "10.0.1.1", kH0Mac, kPortMac[0], 3);
  f[22] = 1;  // TTL 1: the header checksum changes by 63 << 8
  f[24] = 0;
  f[25] = 0;
  const uint16_t ck = fold(sum16(f.data() + 14, 20));
  f[24] = static_cast<uint8_t>(ck >> 8);
  f[25] = static_cast<uint8_t>(ck);
  r.inject(0, f);
  r.cycle();
  const auto out = r.sent(0);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0][34], 0) << "an echo reply, not a time exceeded";
  EXPECT_EQ(r.drops(DropReason::TtlExpired), 0u);
  EXPECT_EQ(r.agent->counters().echo_replies, 1u);
  r.finish();
}

TEST(LocalAgent, DuplicateAddressDetectionForOurAddressIsDefended) {
  RIG(r);
  // A DAD probe: from ::, no SLLA option, for our address.
  std::vector<uint8_t> m(24, 0);
  m[0] = 135;
  const auto t = ip6_bytes("2001:db8:1::1");
  std::memcpy(&m[8], t.data(), 16);
  r.inject(0, icmp6("::", "ff02::1:ff00:1", kH0Mac, "33:33:ff:00:00:01", m, 255));
  r.cycle();
  const auto out = r.sent(0);
  ASSERT_EQ(out.size(), 1u);
  const Frame& na = out[0];
  ASSERT_GE(na.size(), 86u);
  EXPECT_EQ(mac_at(na, 0), "33:33:00:00:00:01");
  EXPECT_EQ(ip6_at(na, 38), "ff02::1");
  EXPECT_EQ(na[54], 136);
  EXPECT_EQ(na[58], 0xA0) << "R and O, not S";
  EXPECT_EQ(icmp6_sum(&na[22], &na[38], &na[54], be16(na, 18)), 0);
  EXPECT_EQ(r.neighbour(0, "::"), nullptr);
  r.finish();
}


}  // namespace
}  // namespace rs::test
