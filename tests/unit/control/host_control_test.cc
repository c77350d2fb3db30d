// The switch as a host on its links, changed at run time through the control protocol: a
// port's addresses (port.set ipv4 / ipv6, with the routes they make), icmp_unreachable and
// lldp, and system.set's copp, neighbours and lldp sections. The LocalAgent rig
// (local_agent_rig.h: three ring ports the test plays the hosts behind) with a ControlApi on
// its running state; each test checks what the wire shows before and after the change, and
// ends with the books balanced and every mbuf back.
#include "tests/unit/control/local_agent_rig.h"

namespace rs::test {
namespace {

TEST(HostControl, AnAddressAddedAtRunTimeAnswersAndRoutesItsSubnetAndGoesAgainWithItsNeighbours) {
  API_RIG(r);
  r.cycle(1);
  const char* const kH5 = "02:aa:00:00:05:07";
  // Before: 10.0.5.1 is nobody's; ARP for it is not answered.
  r.inject(2, arp_request(kH5, "10.0.5.7", "10.0.5.1"));
  r.cycle();
  EXPECT_EQ(count_arp_replies(r.sent(2)), 0u);
  EXPECT_EQ(r.route_group("10.0.5.0", 24), nullptr);

  r.done({{"id", 1}, {"op", "port.set"}, {"port", "p2"}, {"ipv4", {"10.0.3.1/24", "10.0.5.1/24"}}});
  const GroupSpec* host = r.route_group("10.0.5.1", 32);
  ASSERT_NE(host, nullptr);
  EXPECT_EQ(host->name, "local");
  const GroupSpec* subnet = r.route_group("10.0.5.0", 24);
  ASSERT_NE(subnet, nullptr);
  EXPECT_EQ(subnet->name, "connected:p2:10.0.5.0/24");
  EXPECT_EQ(subnet->origin, GroupOrigin::Connected);
  EXPECT_NE(r.route_group("10.0.3.0", 24), nullptr) << "the address kept keeps its routes";

  // After: the new address answers ARP (and learns the asker) and ping.
  r.inject(2, arp_request(kH5, "10.0.5.7", "10.0.5.1"));
  r.cycle();
  auto out = r.sent(2);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(arp_text(out[0]), fmt::format("{} {} op2 {} 10.0.5.1 {} 10.0.5.7", kH5, kPortMac[2], kPortMac[2], kH5));
  ASSERT_NE(r.neighbour(2, "10.0.5.7"), nullptr);
  ASSERT_NE(r.route_group("10.0.5.7", 32), nullptr);
  r.inject(2, ping4("10.0.5.7", "10.0.5.1", kH5, kPortMac[2], 9));
  r.cycle();
  out = r.sent(2);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(ip4_at(out[0], 26), "10.0.5.1");
  EXPECT_EQ(out[0][34], 0) << "echo reply";
  // A host of the new subnet is reachable from another port: routed to it.
  r.inject(0, udp4("10.0.5.7", 64, 1));
  r.cycle();
  out = r.sent(2);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(mac_at(out[0], 0), kH5);
  const std::string dump = r.done({{"id", 2}, {"op", "config.dump"}})["yaml"].get<std::string>();
  EXPECT_NE(dump.find("10.0.5.1/24"), std::string::npos) << dump;

  // The address goes: its routes, and the neighbour its subnet held, with its host route.
  r.done({{"id", 3}, {"op", "port.set"}, {"port", "p2"}, {"ipv4", "10.0.3.1/24"}});
  EXPECT_EQ(r.route_group("10.0.5.1", 32), nullptr);
  EXPECT_EQ(r.route_group("10.0.5.0", 24), nullptr);
  EXPECT_FALSE(r.state->group_id("connected:p2:10.0.5.0/24"));
  r.cycle();
  EXPECT_EQ(r.neighbour(2, "10.0.5.7"), nullptr);
  EXPECT_EQ(r.route_group("10.0.5.7", 32), nullptr);
  r.inject(2, arp_request(kH5, "10.0.5.7", "10.0.5.1"));
  r.inject(0, udp4("10.0.5.7", 64, 2));
  r.cycle();
  EXPECT_EQ(count_arp_replies(r.sent(2)), 0u);
  EXPECT_EQ(r.drops(0, DropReason::NoRoute), 1u);
  r.finish();
}

TEST(HostControl, Ipv6AddressesBringTheNeighbourDiscoveryRouteAndTakeItWhenTheLastGoes) {
  API_RIG(r, Options{.port_keys = {", ipv4: 10.0.1.1/24", ", ipv4: 10.0.2.1/24", ", ipv4: 10.0.3.1/24"}});
  EXPECT_EQ(r.route_group("ff02::", 16), nullptr);
  r.done({{"id", 1}, {"op", "port.set"}, {"port", "p1"}, {"ipv6", "2001:db8:2::1/64"}});
  const GroupSpec* nd = r.route_group("ff02::", 16);
  ASSERT_NE(nd, nullptr);
  EXPECT_EQ(nd->name, "local");
  r.inject(1, ns("2001:db8:2::2", "2001:db8:2::1", kNhMac));
  r.cycle();
  auto out = r.sent(1);
  ASSERT_EQ(out.size(), 1u) << "a neighbour advertisement";
  EXPECT_EQ(ip6_at(out[0], 22), "2001:db8:2::1");
  r.done({{"id", 2}, {"op", "port.set"}, {"port", "p1"}, {"ipv6", nullptr}});
  EXPECT_EQ(r.route_group("ff02::", 16), nullptr);
  EXPECT_EQ(r.route_group("2001:db8:2::", 64), nullptr);
  r.cycle();
  EXPECT_EQ(r.neighbour(1, "2001:db8:2::2"), nullptr);
  r.finish();
}

TEST(HostControl, IcmpUnreachableAndCoppChangeWhatTheWorkersSendUp) {
  API_RIG(r);
  r.cycle(1);
  // p0 answers a miss; turned off, it does not, and the punt stage never sees the packet.
  r.done({{"id", 1}, {"op", "port.set"}, {"port", "p0"}, {"icmp_unreachable", false}});
  const uint64_t punted = r.punt_activity();
  r.inject(0, udp4("10.77.0.1", 64, 1));
  r.cycle();
  EXPECT_TRUE(r.sent(0).empty());
  EXPECT_EQ(r.punt_activity(), punted);
  EXPECT_EQ(r.drops(0, DropReason::NoRoute), 1u);
  // p1 asks for it now.
  r.done({{"id", 2}, {"op", "port.set"}, {"port", "p1"}, {"icmp_unreachable", true}});
  r.inject(1, udp4("10.77.0.1", 64, 2, "10.0.2.2", kNhMac, kPortMac[1]));
  r.cycle();
  auto out = r.sent(1);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0][34], 3) << "destination unreachable";
  EXPECT_EQ(r.agent->counters().unreachable_sent, 1u);

  // CoPP: ip2me at 0 a second lets no ping up; back at 2 a second with a burst of 2, two of five.
  r.done({{"id", 3}, {"op", "system.set"}, {"copp", {{"ip2me", {{"pps", 0}}}}}});
  for (uint16_t i = 0; i < 3; ++i) r.inject(0, ping4("10.0.1.2", "10.0.1.1", kH0Mac, kPortMac[0], i));
  r.cycle();
  EXPECT_TRUE(r.sent(0).empty());
  EXPECT_EQ(r.drops(0, DropReason::PuntPoliced), 3u);
  r.done({{"id", 4}, {"op", "system.set"}, {"copp", {{"ip2me", {{"pps", 2}, {"burst", 2}}}}}});
  for (uint16_t i = 0; i < 5; ++i) r.inject(0, ping4("10.0.1.2", "10.0.1.1", kH0Mac, kPortMac[0], i));
  r.cycle(1);
  EXPECT_EQ(r.sent(0).size(), 2u);
  EXPECT_EQ(r.drops(0, DropReason::PuntPoliced), 6u);
  const std::string dump = r.done({{"id", 5}, {"op", "system.get"}})["yaml"].get<std::string>();
  EXPECT_NE(dump.find("ip2me: {pps: 2, burst: 2}"), std::string::npos) << dump;
  EXPECT_TRUE(dump.ends_with("\n")) << "a YAML document ends its last line";
  r.finish();
}

TEST(HostControl, LldpAndNeighbourSettingsChangeAtRunTime) {
  API_RIG(r);
  r.cycle(1);
  auto lldp_frames = [&](int p) {
    std::vector<Frame> v;
    for (auto& f : r.sent(p))
      if (be16(f, 12) == 0x88cc) v.push_back(f);
    return v;
  };
  EXPECT_TRUE(lldp_frames(1).empty());
  r.done({{"id", 1}, {"op", "system.set"}, {"lldp", {{"system_name", "leaf-7"}}}});
  r.done({{"id", 2}, {"op", "port.set"}, {"port", "p1"}, {"lldp", true}});
  r.cycle(1);
  const auto f = lldp_frames(1);
  ASSERT_EQ(f.size(), 1u) << "the port advertises at once";
  EXPECT_NE(std::search(f[0].begin(), f[0].end(), std::begin("leaf-7"), std::end("leaf-7") - 1), f[0].end());
  r.done({{"id", 3}, {"op", "port.set"}, {"port", "p1"}, {"lldp", false}});
  r.run_to(r.now + 60 * kS, 100 * kMs);
  // Turned off: one shutdown LLDPDU (chassis and port ID, TTL 0, nothing else), then silence.
  const auto off = lldp_frames(1);
  ASSERT_EQ(off.size(), 1u) << "one shutdown LLDPDU, then nothing";
  proto::LldpInfo bye;
  ASSERT_EQ(proto::parse_lldp(off[0].data(), static_cast<uint32_t>(off[0].size()), 14, bye), proto::LldpError::Ok);
  EXPECT_TRUE(bye.shutdown());
  EXPECT_EQ(bye.port_id, "p1");
  EXPECT_TRUE(bye.system_name.empty() && !bye.pfc && bye.app.empty()) << "a bare shutdown LLDPDU";

  r.done({{"id", 4}, {"op", "system.set"}, {"neighbours", {{"ucast_probes", 7}, {"max_entries", 50}}}});
  r.cycle(1);
  EXPECT_EQ(r.agent->neighbours().params().ucast_probes, 7u);
  EXPECT_EQ(r.agent->neighbours().params().max_entries, 50u);
  r.finish();
}

TEST(HostControl, RefusalsNameTheFieldAndChangeNothing) {
  API_RIG(r);
  r.cycle(1);
  const std::string before = r.hash();
  auto refused = [&](const json& req, const std::string& field, const std::string& reason) { r.refused(req, field, reason, before); };
  // An address whose subnet a configured route holds.
  refused({{"id", 1}, {"op", "port.set"}, {"port", "p2"}, {"ipv4", {"10.0.3.1/24", "10.8.0.1/16"}}}, "ipv4", "10.8.0.0/16");
  // Another port's subnet; a subnet's own address; not an address.
  refused({{"id", 2}, {"op", "port.set"}, {"port", "p2"}, {"ipv4", "10.0.1.9/24"}}, "ipv4", "p0");
  refused({{"id", 3}, {"op", "port.set"}, {"port", "p2"}, {"ipv4", "10.0.9.0/24"}}, "ipv4", "subnet's own address");
  refused({{"id", 4}, {"op", "port.set"}, {"port", "p2"}, {"ipv4", "banana"}}, "ipv4", "banana");
  refused({{"id", 5}, {"op", "port.set"}, {"port", "p2"}, {"lldp", "often"}}, "lldp", "");
  refused({{"id", 6}, {"op", "system.set"}, {"bridge", {{"fdb_size", 4096}}}}, "bridge.fdb_size", "start-up");
  refused({{"id", 7}, {"op", "system.set"}, {"copp", {{"ip2me", {{"pps", -1}}}}}}, "copp.ip2me.pps", "");
  refused({{"id", 8}, {"op", "system.set"}, {"dns", 1}}, "dns", "unknown");
  // A transaction whose second operation fails takes the first's address and routes back.
  const json res = r.call({{"id", 9},
                           {"ops", {{{"op", "port.set"}, {"port", "p2"}, {"ipv4", {"10.0.3.1/24", "10.0.6.1/24"}}},
                                    {{"op", "route.add"}, {"prefix", "10.0.6.0/24"}, {"group", "nope"}}}}});
  ASSERT_FALSE(res["ok"].get<bool>());
  EXPECT_EQ(res["error"]["index"], 1);
  EXPECT_EQ(r.route_group("10.0.6.1", 32), nullptr);
  EXPECT_EQ(r.hash(), before);
  r.inject(2, arp_request(kH2Mac, "10.0.6.7", "10.0.6.1"));
  r.cycle();
  EXPECT_EQ(count_arp_replies(r.sent(2)), 0u);
  // Routes the addresses make are the port's to change, not route.del's.
  const json del = r.call({{"id", 10}, {"op", "route.del"}, {"prefix", "10.0.3.0/24"}});
  EXPECT_NE(del["error"]["reason"].get<std::string>().find("port.set"), std::string::npos) << del.dump();
  r.finish();
}

TEST(HostControl, ANeighbourGivesWayToAnAddressAndANamedNextHopHoldsItsSubnet) {
  API_RIG(r, Options{.routes = "  - {prefix: 10.9.0.0/16, via: 10.0.2.2}\n"});
  r.cycle(1);
  // 10.0.3.7 is a neighbour of p2; the port takes that address: the neighbour's route goes.
  r.inject(2, arp_request(kH2Mac, "10.0.3.7", "10.0.3.1"));
  r.cycle();
  ASSERT_NE(r.route_group("10.0.3.7", 32), nullptr);
  EXPECT_EQ(r.route_group("10.0.3.7", 32)->origin, GroupOrigin::Neighbour);
  r.done({{"id", 1}, {"op", "port.set"}, {"port", "p2"}, {"ipv4", "10.0.3.7/24"}});
  ASSERT_NE(r.route_group("10.0.3.7", 32), nullptr);
  EXPECT_EQ(r.route_group("10.0.3.7", 32)->name, "local");
  r.cycle();
  EXPECT_EQ(r.neighbour(2, "10.0.3.7"), nullptr) << "the agent forgets a neighbour at its own address";
  r.sent(2);
  r.inject(2, arp_request("02:aa:00:00:03:08", "10.0.3.8", "10.0.3.7"));
  r.cycle();
  EXPECT_EQ(count_arp_replies(r.sent(2)), 1u);

  // The route's next hop 10.0.2.2 must stay in a subnet of p1, and not become p1's address.
  const std::string before = r.hash();
  r.refused({{"id", 2}, {"op", "port.set"}, {"port", "p1"}, {"ipv4", "10.0.5.1/24"}}, "ipv4", "next hop 10.0.2.2 on p1", before);
  r.refused({{"id", 3}, {"op", "port.set"}, {"port", "p1"}, {"ipv4", "10.0.2.2/24"}}, "ipv4", "own address", before);
  r.done({{"id", 4}, {"op", "port.set"}, {"port", "p1"}, {"ipv4", "10.0.2.1/25"}});
  r.finish();
}

TEST(HostControl, ASwitchWithIcmpUnreachableAloneChangesItsOtherSettings) {
  ApiRig r{Options{.port_keys = {", icmp_unreachable: true", "", ""}}};
  ASSERT_TRUE(r.Rig::ok);
  ASSERT_EQ(r.agent, nullptr) << "no address, no LLDP: no control path";
  r.done({{"id", 1}, {"op", "system.set"}, {"copp", {{"arp", {{"pps", 10}}}}}});
  const json res = r.call({{"id", 2}, {"op", "port.set"}, {"port", "p1"}, {"icmp_unreachable", true}});
  ASSERT_FALSE(res["ok"].get<bool>());
  EXPECT_EQ(res["error"]["field"], "icmp_unreachable");
}

TEST(HostControl, ASwitchStartedWithoutAddressesRefusesThemAndSaysWhy) {
  ApiRig r{Options{.addresses = false}};
  ASSERT_TRUE(r.Rig::ok);
  ASSERT_EQ(r.agent, nullptr);
  const json res = r.call({{"id", 1}, {"op", "port.set"}, {"port", "p0"}, {"ipv4", "10.0.1.1/24"}});
  ASSERT_FALSE(res["ok"].get<bool>());
  EXPECT_EQ(res["error"]["field"], "ipv4");
  EXPECT_NE(res["error"]["reason"].get<std::string>().find("started with no address"), std::string::npos) << res.dump();
  // What needs no control path may change.
  r.done({{"id", 2}, {"op", "system.set"}, {"copp", {{"arp", {{"pps", 10}}}}}});
  EXPECT_EQ(r.state->config().copp.policer[0].pps, 10u);
}

TEST(HostControl, TheDumpOfRunTimeChangesLoadsBackIntoTheSameSettings) {
  API_RIG(r);
  r.done({{"id", 1}, {"op", "port.set"}, {"port", "p2"}, {"ipv4", {"10.0.3.1/24", "10.0.5.1/24"}}, {"ipv6", "2001:db8:5::1/64"},
        {"lldp", true}, {"icmp_unreachable", true}});
  r.done({{"id", 2}, {"op", "system.set"}, {"yaml", "copp: {lldp: {pps: 7}}\nneighbours: {retrans_s: 0.5}\nbridge: {ageing_s: 60}\n"}});
  const std::string dump = r.done({{"id", 3}, {"op", "config.dump"}})["yaml"].get<std::string>();
  const SwitchConfig c = load_config_text(dump, "dump");
  ASSERT_EQ(c.ports[2].addrs.size(), 3u);
  EXPECT_TRUE(c.ports[2].lldp);
  EXPECT_TRUE(c.ports[2].icmp_unreachable);
  EXPECT_EQ(c.copp.policer[static_cast<int>(CoppClass::Lldp)].pps, 7u);
  EXPECT_EQ(c.neighbours.retrans_s, 0.5);
  EXPECT_EQ(c.bridge.ageing_s, 60);
  // The routes the new addresses make come back from the addresses, not from the dump's routes.
  int made = 0;
  for (auto& g : c.groups) made += g.name == "connected:p2:10.0.5.0/24" || g.name == "connected:p2:2001:db8:5::/64";
  EXPECT_EQ(made, 2);
  EXPECT_EQ(dump.find("connected:"), std::string::npos);
  r.finish();
}

}  // namespace
}  // namespace rs::test
