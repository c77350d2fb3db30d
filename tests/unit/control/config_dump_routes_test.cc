// dump_config of routes: a route's own group written in its route, and what the ports' addresses,
// next hops by IP, VLANs, CoPP, neighbours and LLDP settings make of a config (the routes the
// addresses make are not written; the loader makes them again).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "tests/unit/control/config_dump_compare.h"

namespace rs {
namespace {

using namespace rs::test;

// A route's own group (port + mac, nexthops) is written in its route, spelled as the file
// spelled it (its name keeps the text), up to 64 next hops; named groups go to nexthop_groups.
TEST(ConfigDump, RouteGroupsAreWrittenInTheirRoutes) {
  std::string y = R"(
ports:
  - {name: a, host: {ip: 10.0.0.2, mac: "02:00:00:00:00:aa"}}
  - {name: b, devargs: x}
nexthop_groups:
  - {name: "route", members: [{port: b, mac: "02:00:00:00:00:bb"}]}
routes:
  - {prefix: 10.8.0.0/16, group: "route"}
  - {prefix: 10.9.0.0/016, port: a, mac: "02:00:00:00:00:aa"}
  - {prefix: "2001:0DB8::/32", nexthops: [{port: a, mac: "02:00:00:00:00:aa", weight: 2}, {port: b, mac: "02:00:00:00:00:bb"}]}
  - {prefix: 10.10.0.0/16, nexthops: [)";
  for (int i = 0; i < 64; ++i) y += fmt::format("{}{{port: a, mac: \"02:00:00:00:01:{:02x}\"}}", i ? ", " : "", i);
  const SwitchConfig c = load_config_text(y + "]}\n", "own.yaml");
  ASSERT_EQ(c.groups.size(), 4u);
  EXPECT_EQ(c.groups[1].name, "route:10.9.0.0/016");
  const std::string d = round_trip(c, "own groups");
  EXPECT_THAT(d, testing::HasSubstr("{prefix: 10.9.0.0/016, port: a,"));
  EXPECT_THAT(d, testing::HasSubstr("{prefix: \"2001:0DB8::/32\", nexthops:"));
  EXPECT_THAT(d, testing::Not(testing::HasSubstr("name: \"route:")));
}

// Blackholes: a route's own (`drop: true`) and a named drop group come back as written.
TEST(ConfigDump, BlackholesRoundTrip) {
  const std::string y = R"(
ports:
  - {name: a, host: {ip: 10.0.0.2, mac: "02:00:00:00:00:aa"}}
nexthop_groups:
  - {name: hole, drop: true}
routes:
  - {prefix: 10.8.0.0/16, group: hole}
  - {prefix: 10.9.0.0/16, drop: true}
  - {prefix: "2001:db8::/32", drop: true}
)";
  const SwitchConfig c = load_config_text(y, "hole.yaml");
  ASSERT_EQ(c.groups.size(), 3u);
  EXPECT_TRUE(c.groups[0].drop && c.groups[1].drop && c.groups[2].drop);
  EXPECT_TRUE(c.groups[1].members.empty());
  const std::string d = round_trip(c, "blackholes");
  EXPECT_THAT(d, testing::HasSubstr("{name: hole, drop: true}"));
  EXPECT_THAT(d, testing::HasSubstr("{prefix: 10.9.0.0/16, drop: true}"));
  EXPECT_THAT(d, testing::HasSubstr("{prefix: \"2001:db8::/32\", drop: true}"));
}

// Router interfaces: the addresses (one or a list, both families), next hops by IP, CoPP and
// neighbour settings come back; the routes the addresses make are not written (the loader
// makes them again), and neither is a resolved neighbour's host route.
TEST(ConfigDump, InterfacesAndNextHopsByIpRoundTrip) {
  const std::string y = R"(
ports:
  - {name: a, devargs: x, ipv4: 10.0.1.1/24, ipv6: "2001:db8:1::1/64", icmp_unreachable: true}
  - {name: b, devargs: y, ipv4: [10.0.2.1/24, 10.0.3.1/30], ipv6: ["2001:db8:2::1/64"], lldp: true}
  - {name: c, devargs: z, vlan: {access: 10, tagged: [20, 30]}}
  - {name: d, devargs: w, vlan: {tagged: [10]}}
vlans: [10, 20, 30]
bridge: {ageing_s: 60, flood_pps: 5000, flood_burst: 50, fdb_size: 4096}
copp: {arp: 100, ip2me: {pps: 50, burst: 5}}
neighbours: {base_reachable_s: 2, retrans_s: 0.25, hold_packets: 5}
lldp: {interval_s: 5, hold: 3, system_name: "leaf 1: rack A"}
routes:
  - {prefix: 10.9.0.0/16, via: 10.0.2.2}
  - {prefix: "2001:db8:9::/48", nexthops: [{ip: "2001:db8:2::2"}, {ip: "2001:db8:1::7", weight: 2}]}
)";
  SwitchConfig c = load_config_text(y, "if.yaml");
  ASSERT_EQ(c.ports[1].addrs.size(), 3u);
  EXPECT_EQ(c.copp.policer[1].burst, 5u);
  EXPECT_EQ(c.copp.policer[0].burst, 100u);  // SONiC's cbs = cir when only the rate is given
  // local (one), a connected group per address below /32, the routes' own: by origin.
  std::map<GroupOrigin, int> origins;
  for (auto& g : c.groups) ++origins[g.origin];
  EXPECT_EQ(origins[GroupOrigin::Local], 1);
  EXPECT_EQ(origins[GroupOrigin::Connected], 5);
  EXPECT_EQ(origins[GroupOrigin::Config], 2);
  // 5 host routes, 5 subnets, ff02::/16, and the 2 configured.
  EXPECT_EQ(c.routes.size(), 13u);
  const GroupSpec& via = c.groups[c.routes[0].group];
  ASSERT_EQ(via.members.size(), 1u);
  EXPECT_EQ(via.members[0].port, 1);
  EXPECT_FALSE(via.members[0].resolved);
  const std::string d = round_trip(c, "interfaces");
  EXPECT_THAT(d, testing::HasSubstr("via: 10.0.2.2"));
  EXPECT_THAT(d, testing::HasSubstr("ipv4: [10.0.2.1/24, 10.0.3.1/30]"));
  EXPECT_THAT(d, testing::Not(testing::HasSubstr("connected:")));
  EXPECT_THAT(d, testing::Not(testing::HasSubstr("10.0.1.0/24")));
  // A neighbour the switch resolved is the running state's, not the config's.
  GroupSpec n;
  n.name = std::string(kNeighbourGroupPrefix) + "10.0.1.2";
  n.origin = GroupOrigin::Neighbour;
  n.members.push_back(static_member(0, rte_ether_addr{{2, 0, 0, 0, 0, 2}}));
  c.groups.push_back(n);
  RouteSpec r{};
  r.addr[0] = 10, r.addr[2] = 1, r.addr[3] = 2;
  r.depth = 32;
  r.group = static_cast<uint32_t>(c.groups.size() - 1);
  c.routes.push_back(r);
  EXPECT_EQ(dump_config(c), d);
}

// VLAN interfaces (SVIs): a VLAN with addresses (and its MAC, given or the default) comes back
// as a map among the plain ids; its subnets make connected groups named after the VLAN; a next
// hop by IP on its subnet has the VLAN and no port until it is found.
TEST(ConfigDump, VlanInterfacesRoundTrip) {
  const std::string y = R"(
ports:
  - {name: a, devargs: x, ipv4: 10.0.1.1/24}
  - {name: b, devargs: y, vlan: {access: 10}}
  - {name: c, devargs: z, vlan: {tagged: [10, 20, 30]}}
vlans: [{id: 10, ipv4: 10.0.10.1/24, ipv6: "2001:db8:10::1/64"}, 20, {id: 30, ipv4: [10.0.30.1/24], mac: "02:00:00:00:30:01"}]
routes:
  - {prefix: 10.9.0.0/16, via: 10.0.10.7}
)";
  const SwitchConfig c = load_config_text(y, "svi.yaml");
  ASSERT_EQ(c.vlan_interfaces.size(), 2u);
  EXPECT_EQ(mac(c.vlan_interfaces[0].mac), "02:52:53:01:00:0a");
  EXPECT_EQ(mac(c.vlan_interfaces[1].mac), "02:00:00:00:30:01");
  EXPECT_EQ(c.vlans, (std::vector<uint16_t>{10, 20, 30}));
  std::vector<std::string> connected;
  for (auto& g : c.groups)
    if (g.origin == GroupOrigin::Connected) connected.push_back(g.name);
  EXPECT_THAT(connected, testing::ElementsAre("connected:a:10.0.1.0/24", "connected:Vlan10:10.0.10.0/24",
                                              "connected:Vlan10:2001:db8:10::/64", "connected:Vlan30:10.0.30.0/24"));
  const GroupSpec& via = c.groups[c.routes[0].group];
  ASSERT_EQ(via.members.size(), 1u);
  EXPECT_EQ(via.members[0].vlan, 10);
  EXPECT_EQ(via.members[0].port, kInvalidPort);
  EXPECT_FALSE(via.members[0].resolved);
  const std::string d = round_trip(c, "svi");
  EXPECT_THAT(d, testing::HasSubstr("{id: 10, mac: \"02:52:53:01:00:0a\", ipv4: [10.0.10.1/24], ipv6: [2001:db8:10::1/64]}"));
  EXPECT_THAT(d, testing::HasSubstr("via: 10.0.10.7"));
  EXPECT_THAT(d, testing::Not(testing::HasSubstr("connected:")));
}

// Emulated NICs: the settings (NVIDIA's DCQCN names) and the queue pairs come back; a host with
// queue pairs and no `nic` gets the NIC's defaults, written out whole.
TEST(ConfigDump, NicsAndQueuePairsRoundTrip) {
  const std::string y = R"(
ports:
  - {name: a, host: {ip: 10.0.0.2, mac: "02:00:00:00:00:aa", nic: {mtu: 4096, cc: dcqcn, ack_every: 8, retransmit_us: 500,
       dcqcn: {rpg_time_reset: 55, rpg_byte_reset: 10485760, rpg_threshold: 5, rpg_ai_rate: 40, rpg_hai_rate: 200,
               dce_tcp_g: 4, dce_tcp_rtt: 55, min_time_between_cnps: 50, clamp_tgt_rate: true}},
     qps: [{dst: 10.0.0.3, qpn: 0x11, message_bytes: 65536, messages: 100, depth: 8, op: write},
           {dst: 10.0.0.3, qpn: 0x12, message_bytes: 1000, interval_us: 10, op: send, rate_gbps: 5, start_s: 0.01, stop_s: 0.5}]}}
  - {name: b, host: {ip: 10.0.0.3, mac: "02:00:00:00:00:bb", nic: {cc: none, reorder: placement}}}
  - {name: w, kind: nic, devargs: "net_af_packet0,iface=v0", host: {ip: 10.0.5.2, mac: "02:00:00:00:00:dd", gateway: "02:00:00:00:00:01",
     qps: [{dst: 10.0.0.2, qpn: 0x51}]}}
  - {name: c, host: {ip: 10.0.0.4, mac: "02:00:00:00:00:cc", qps: [{dst: 10.0.0.2, priority: 3}]}}
collectives: [{op: allreduce, hosts: [a, c], size_bytes: 1048576, slices: 2, start_s: 0.001}]
traffic: [{pattern: incast, hosts: [a, c], receiver: b, messages: 5, depth: 2, stop_s: 0.2}]
)";
  const SwitchConfig c = load_config_text(y, "nic.yaml");
  ASSERT_EQ(c.collectives.size(), 1u);
  EXPECT_EQ(c.ports[3].host.qps.size(), 3u) << "its own, the collective's and the incast's";
  ASSERT_EQ(c.ports[0].host.qps.size(), 4u) << "two of its own, one of the collective, one of the incast";
  EXPECT_TRUE(c.ports[0].host.nic.enabled);
  EXPECT_EQ(c.ports[0].host.nic.rc.mtu, 4096u);
  EXPECT_EQ(c.ports[0].host.nic.cc.rpg_threshold, 5u);
  EXPECT_EQ(c.ports[0].host.qps[1].interval_ns, 10'000u);
  EXPECT_FALSE(c.ports[0].host.qps[1].write);
  EXPECT_FALSE(c.ports[1].host.nic.dcqcn);
  EXPECT_TRUE(c.ports[1].host.nic.rc.placement);
  EXPECT_TRUE(c.ports[3].host.nic.enabled) << "queue pairs bring the NIC";
  EXPECT_EQ(c.ports[3].host.qps[0].qpn, 0x100u) << "the default QP number by position";
  const std::string d = round_trip(c, "nic");
  EXPECT_THAT(d, testing::HasSubstr("rpg_byte_reset: 10485760"));
  EXPECT_THAT(d, testing::HasSubstr("cc: none"));
  EXPECT_THAT(d, testing::HasSubstr("kind: nic"));
  EXPECT_THAT(d, testing::HasSubstr("gateway: \"02:00:00:00:00:01\""));
  EXPECT_THAT(d, testing::HasSubstr("{op: allreduce, hosts: [a, c], size_bytes: 1048576"));
  EXPECT_THAT(d, testing::HasSubstr("{pattern: incast, hosts: [a, c], receiver: b, message_bytes: 65536, messages: 5"));
  EXPECT_THAT(d, testing::Not(testing::HasSubstr("{dst: 10.0.0.4, qpn: 0x800"))) << "the collective's queue pairs come from it again";
}

// A running switch numbers its groups otherwise: one added after the routes' own groups, routes
// in prefix order. The dump is the loader's order, the same groups and routes renumbered; its
// reload dumps to the same text.

}  // namespace
}  // namespace rs
