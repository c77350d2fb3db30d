// VLANs changed at run time through the control protocol: VLANs declared and removed
// (system.set vlans), a port's membership (port.set vlan), a VLAN's interface with its routes,
// and the bridge's flood limit. The rig: local_agent_rig.h with p1 (access) and p2 (tagged) in
// VLAN 10, whose interface is 10.0.10.1/24, and a ControlApi on its running state.
//
//   p0 02:00:00:00:00:10  10.0.1.1/24                      routed
//   p1 access VLAN 10                                    host A
//   p2 tagged VLAN 10                                    host B
#include "tests/unit/control/local_agent_rig.h"

namespace rs::test {
namespace {

const char* const kSvi = "02:00:00:00:01:0a";
const char* const kA = "02:aa:00:00:0a:02";
const char* const kB = "02:aa:00:00:0a:03";
const std::string kVlan10 = fmt::format("{{id: 10, ipv4: 10.0.10.1/24, mac: \"{}\"}}", kSvi);

Options vlan_rig() {
  Options o;
  o.port_keys = {", ipv4: 10.0.1.1/24", ", vlan: {access: 10}", ", vlan: {tagged: [10]}"};
  o.sections = "vlans: [" + kVlan10 + "]\n";
  return o;
}

// A broadcast frame from `src` (not IP: only the bridge looks at it).
Frame bcast(const std::string& src, uint8_t seq) {
  return (Eth{.dst = kBcast, .src = src, .type = 0x88b5} / Payload::of_size(46, seq)).bytes();
}

bool fdb_has(const Switch& sw, uint16_t vlan, uint16_t port) {
  for (auto& row : sw.fdb()->rows())
    if (row.vlan == vlan && row.port == port) return true;
  return false;
}

TEST(VlanControl, APortMovesToAnotherVlanAndItsLearnedStationsGo) {
  API_RIG(r, vlan_rig());
  r.cycle(1);
  r.inject(1, bcast(kA, 1));
  r.cycle();
  ASSERT_EQ(r.sent(2).size(), 1u) << "flooded to B's trunk";
  EXPECT_TRUE(fdb_has(*r.sw, 10, 1)) << "A learned in VLAN 10 on p1";

  // VLAN 20 is declared; p1 moves to it, the trunk carries both.
  r.done({{"id", 1},
          {"ops",
           {{{"op", "system.set"}, {"yaml", "vlans: [" + kVlan10 + ", 20]\n"}},
            {{"op", "port.set"}, {"port", "p1"}, {"vlan", {{"access", 20}}}},
            {{"op", "port.set"}, {"port", "p2"}, {"vlan", {{"tagged", {10, 20}}}}}}}});
  EXPECT_FALSE(fdb_has(*r.sw, 10, 1)) << "A is no longer behind p1 in VLAN 10";
  r.inject(1, bcast(kA, 2));
  r.cycle();
  auto out = r.sent(2);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(vid_of(out[0]), 20) << "A's frames are in VLAN 20 now, tagged so on the trunk";
  // B in VLAN 10 no longer reaches p1.
  const uint64_t filtered = r.drops(DropReason::BridgeFiltered);
  r.inject(2, tagged(bcast(kB, 3), 10));
  r.cycle();
  EXPECT_TRUE(r.sent(1).empty());
  EXPECT_EQ(r.drops(DropReason::BridgeFiltered), filtered + 1) << "VLAN 10 has no other member to flood to";
  const std::string dump = r.done({{"id", 2}, {"op", "config.dump"}})["yaml"].get<std::string>();
  const SwitchConfig c = load_config_text(dump, "dump");
  EXPECT_EQ(c.ports[1].access_vlan, 20);
  EXPECT_EQ(c.ports[2].tagged_vlans, (std::vector<uint16_t>{10, 20}));
  r.finish();
}

TEST(VlanControl, AVlanInterfaceComesWithItsRoutesAndGoesWithThem) {
  API_RIG(r, vlan_rig());
  r.cycle(1);
  r.done({{"id", 1},
          {"ops",
           {{{"op", "system.set"}, {"yaml", "vlans: [" + kVlan10 + ", {id: 20, ipv4: 10.0.20.1/24}]\n"}},
            {{"op", "port.set"}, {"port", "p1"}, {"vlan", {{"access", 20}}}}}}});
  const GroupSpec* g = r.route_group("10.0.20.0", 24);
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->name, "connected:Vlan20:10.0.20.0/24");
  r.inject(1, arp_request(kA, "10.0.20.2", "10.0.20.1"));
  r.cycle();
  auto out = r.sent(1);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(arp_text(out[0]), fmt::format("{} 02:52:53:01:00:14 op2 02:52:53:01:00:14 10.0.20.1 {} 10.0.20.2", kA, kA))
      << "VLAN 20's interface answers with its default MAC";
  ASSERT_NE(r.neighbour(svi_iface(20), "10.0.20.2"), nullptr);

  r.done({{"id", 2}, {"op", "system.set"}, {"vlans", json::parse(fmt::format(R"([{{"id": 10, "ipv4": "10.0.10.1/24", "mac": "{}"}}, 20])", kSvi))}});
  EXPECT_EQ(r.route_group("10.0.20.0", 24), nullptr);
  EXPECT_EQ(r.route_group("10.0.20.1", 32), nullptr);
  r.cycle();
  EXPECT_EQ(r.neighbour(svi_iface(20), "10.0.20.2"), nullptr);
  r.inject(1, arp_request(kA, "10.0.20.2", "10.0.20.1"));
  r.cycle();
  EXPECT_EQ(count_arp_replies(r.sent(1)), 0u);
  r.finish();
}

TEST(VlanControl, AHostWhosePortLeftTheVlanIsNoLongerRoutedToThroughIt) {
  API_RIG(r, vlan_rig());
  r.cycle(1);
  r.inject(1, arp_request(kA, "10.0.10.2", "10.0.10.1"));
  r.cycle();
  ASSERT_NE(r.neighbour(svi_iface(10), "10.0.10.2"), nullptr);
  r.inject(0, udp4("10.0.10.2", 64, 1));
  r.cycle();
  ASSERT_EQ(r.sent(1).size(), 2u) << "the ARP reply, then the routed packet, out of p1";
  r.sent(2);

  r.done({{"id", 1},
          {"ops",
           {{{"op", "system.set"}, {"yaml", "vlans: [" + kVlan10 + ", 20]\n"}},
            {{"op", "port.set"}, {"port", "p1"}, {"vlan", {{"access", 20}}}}}}});
  r.cycle();
  EXPECT_EQ(r.neighbour(svi_iface(10), "10.0.10.2"), nullptr) << "resolved again on demand";
  r.inject(0, udp4("10.0.10.2", 64, 2));
  r.cycle();
  EXPECT_TRUE(r.sent(1).empty()) << "nothing routed into VLAN 20 with VLAN 10's MAC";
  auto probes = r.sent(2);
  ASSERT_FALSE(probes.empty()) << "the host is looked for where VLAN 10 still is";
  EXPECT_EQ(vid_of(probes[0]), 10);
  r.finish();
}

TEST(VlanControl, TheFloodLimitChangesAtRunTime) {
  API_RIG(r, vlan_rig());
  r.cycle(1);
  r.done({{"id", 1}, {"op", "system.set"}, {"bridge", {{"flood_pps", 1}, {"flood_burst", 2}}}});
  for (uint8_t i = 0; i < 5; ++i) r.inject(1, bcast(kA, i));
  r.cycle(1);
  EXPECT_EQ(r.sent(2).size(), 2u);
  EXPECT_EQ(r.drops(1, DropReason::BridgeStorm), 3u);
  r.done({{"id", 2}, {"op", "system.set"}, {"bridge", {{"flood_pps", 0}}}});
  for (uint8_t i = 0; i < 5; ++i) r.inject(1, bcast(kA, i));
  r.cycle(1);
  EXPECT_EQ(r.sent(2).size(), 5u) << "0: no limit";
  r.finish();
}

TEST(VlanControl, RefusalsNameTheFieldAndChangeNothing) {
  API_RIG(r, vlan_rig());
  r.cycle(1);
  const std::string before = r.hash();
  auto refused = [&](const json& req, const std::string& field, const std::string& reason) { r.refused(req, field, reason, before); };
  refused({{"id", 1}, {"op", "system.set"}, {"vlans", {20}}}, "ports[1].vlan.access", "not declared");
  refused({{"id", 2}, {"op", "system.set"}, {"bridge", {{"fdb_size", 128}}}}, "bridge.fdb_size", "start-up");
  refused({{"id", 3}, {"op", "port.set"}, {"port", "p0"}, {"vlan", {{"access", 10}}}}, "vlan", "no addresses of its own");
  refused({{"id", 4}, {"op", "port.set"}, {"port", "p1"}, {"vlan", {{"access", 30}}}}, "vlan.access", "not declared");
  r.finish();
}

TEST(VlanControl, ASwitchStartedWithoutVlansRefusesThemAndSaysWhy) {
  API_RIG(r);
  const json res = r.call({{"id", 1}, {"op", "system.set"}, {"vlans", {5}}});
  ASSERT_FALSE(res["ok"].get<bool>());
  EXPECT_EQ(res["error"]["field"], "vlans");
  EXPECT_NE(res["error"]["reason"].get<std::string>().find("started with no VLAN"), std::string::npos) << res.dump();
  r.finish();
}

}  // namespace
}  // namespace rs::test
