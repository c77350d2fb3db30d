// BMv2 simple_switch_CLI commands against a switch with no routes: a command file written for
// BMv2 and p4/roceswitch.p4 programs it, traffic follows, and a bad line changes nothing and
// is named by its number.
#include <gtest/gtest.h>

#include "control/runtime/control_api.h"
#include "dataplane/emu/emulated_host.h"
#include "tests/unit/control/control_rig.h"

namespace rs::test {
namespace {

using nlohmann::json;

constexpr uint32_t kQp = 0x100;

using Rig = ControlRig;

// Four hosts, no group, no route: nothing is forwarded until the CLI programs the tables.
SwitchConfig empty_switch() {
  SwitchConfig cfg;
  for (int h = 0; h < 4; ++h) add_host_port(cfg, 10, QueueLimits{});
  add_host_flow(cfg, 0, 1, 0.5, kQp, 1024);
  cfg.groups.clear();
  cfg.routes.clear();
  return cfg;
}

TEST(Bmv2Cli, CommandFileProgramsAnEmptySwitch) {
  Rig r(empty_switch());
  r.run(kMs);
  EXPECT_GT(r.sw.drops(DropReason::NoRoute), 0u);
  // h0's flow to 10.0.1.2 over a group of h2 and h3, as a BMv2 user writes it.
  const json resp = r.cli(R"(# members: one per next hop
act_prof_create_member nexthop_selector set_nexthop 2 02:00:00:00:aa:02
table_indirect_create_member ipv4_lpm set_nexthop 3 0x02000000aa03
act_prof_create_group nexthop_selector
act_prof_add_member_to_group nexthop_selector 0 0
table_indirect_add_member_to_group ipv4_lpm 1 0

table_indirect_add_with_group ipv4_lpm 10.0.1.0/24 => 0
act_prof_create_member nexthop_selector set_nexthop 1 02:00:00:00:aa:01
table_indirect_add ipv4_lpm 10.0.9.0/24 => 2
table_indirect_add ipv6_lpm 2001:db8::/32 => 2
)");
  ASSERT_TRUE(resp["ok"].get<bool>()) << resp.dump();
  const auto out = resp["result"]["output"];
  EXPECT_EQ(out[0], "Member has been created with handle 0");
  EXPECT_EQ(out[2], "Group has been created with handle 0");
  EXPECT_EQ(out[5], "Entry has been added with handle 0");
  const uint64_t dropped = r.sw.drops(DropReason::NoRoute);
  r.run(2 * kMs);
  EXPECT_EQ(r.sw.drops(DropReason::NoRoute), dropped);
  EXPECT_GT(r.rx(2, 0, kQp) + r.rx(3, 0, kQp), 0u);
  EXPECT_EQ(r.rx(1, 0, kQp), 0u);

  // The group is a group of the running state: its policy can change like any group's.
  json g = r.api.handle({{"op", "group.list"}, {"name", "p4_group_0"}})["result"][0];
  EXPECT_EQ(g["members"].size(), 2u);
  EXPECT_EQ(g["members"][1]["mac"], "02:00:00:00:aa:03");

  // Handles persist across requests: modify the route to the single member 2 (port h1).
  ASSERT_TRUE(r.cli("table_indirect_modify ipv4_lpm 0 2")["ok"].get<bool>());
  r.run(200 * kUs);
  const uint64_t h1 = r.rx(1, 0, kQp);
  r.run(kMs);
  EXPECT_GT(r.rx(1, 0, kQp), h1);

  json dump = r.cli("table_dump ipv4_lpm\ntable_num_entries ipv4_lpm\ntable_num_entries ipv6_lpm");
  ASSERT_TRUE(dump["ok"].get<bool>()) << dump.dump();
  std::string text;
  for (auto& l : dump["result"]["output"]) text += l.get<std::string>() + "\n";
  EXPECT_NE(text.find("10.0.1.0/24"), std::string::npos) << text;
  EXPECT_NE(text.find("Action entry: Member 2"), std::string::npos) << text;
  EXPECT_EQ(dump["result"]["output"][dump["result"]["output"].size() - 2], "2");
  EXPECT_EQ(dump["result"]["output"].back(), "1");

  // Removing a member from a group a route still uses is fine while one remains...
  ASSERT_TRUE(r.cli("table_indirect_modify_with_group ipv4_lpm 0 0\nact_prof_remove_member_from_group nexthop_selector 0 0")["ok"].get<bool>());
  // ...but not the last one (BMv2 would then drop as bad_next_hop).
  const json last = r.cli("act_prof_remove_member_from_group nexthop_selector 1 0");
  ASSERT_FALSE(last["ok"].get<bool>());
  EXPECT_NE(last["error"]["reason"].get<std::string>().find("empty while 1 route"), std::string::npos) << last.dump();
  ASSERT_TRUE(r.cli("table_clear ipv4_lpm\ntable_clear ipv6_lpm\nact_prof_delete_group nexthop_selector 0\nact_prof_delete_member nexthop_selector 2")["ok"].get<bool>());
  EXPECT_EQ(r.api.handle({{"op", "route.list"}})["result"]["total"], 0);
  EXPECT_EQ(r.api.handle({{"op", "group.list"}})["result"].size(), 0u);
}

TEST(Bmv2Cli, BadLineIsNamedAndTheWholeScriptChangesNothing) {
  Rig r(empty_switch());
  const std::string hash = r.api.handle({{"op", "state.hash"}})["result"]["hash"];
  struct Case {
    std::string line;
    const char* reason;
  };
  const std::vector<Case> cases = {
      {"act_prof_create_member nexthop_selector set_nexthop 9 02:00:00:00:aa:02", "the switch has 4 ports"},
      {"act_prof_create_member nexthop_selector set_nexthop 600 02:00:00:00:aa:02", "does not fit in bit<9>"},
      {"act_prof_create_member nexthop_selector set_nexthop 1", "takes 2 parameters"},
      {"act_prof_create_member nexthop_selector teleport 1 2", "no action 'teleport'"},
      {"act_prof_create_member nope set_nexthop 1 02:00:00:00:aa:02", "no action profile 'nope'"},
      {"act_prof_create_member nexthop_selector drop 1", "drop takes no parameters"},
      {"table_indirect_add_with_group ipv4_lpm 10.0.9.0/24 => 7", "no group 7"},
      {"table_indirect_add_with_group ipv6_lpm 10.0.9.0/24 => 0", "not a 128-bit address"},
      {"table_indirect_add ipv4_lpm 10.0.9.0/24 0", "usage"},
      {"table_delete port_mac 1", "a port always has a MAC"},
      {"table_add port_mac rewrite_smac 4 => 02:00:00:00:00:01", "port 4: the switch has 4 ports"},
      {"table_add port_mac set_nexthop 1 => 02:00:00:00:00:01", "usage: table_add port_mac rewrite_smac"},
      {"table_add dscp_to_tc set_tc 64 => 3", "does not fit in bit<6>"},
      {"table_add dscp_to_tc set_queue 26 => 3", "has no action 'set_queue'"},
      {"table_delete tc_to_queue 9", "has no entry 9"},
      {"table_add ipv4_lpm set_nexthop 10.0.0.0/8 => 1 2", "is indirect"},
      {"table_add acl deny 1 =>", "no table 'acl'"},
      {"mirroring_add_mc 5 1", "multicast mirror sessions are not supported"},
      {"mirroring_add 5 9", "egress_port: no port 9"},
      {"table_add mirror_ingress mirror_in 1 => 6", "no mirror session 6: mirroring_add it first"},
      {"set_queue_depth 0", "nb_pkts: must be at least 1"},
      {"set_queue_depth 10 9", "egress_port 9: the switch has 4 ports"},
      {"set_queue_depth 10 1 8", "priority 8: queues are 0 to 7"},
      {"set_queue_rate 1000 1 3", "roceswitch shapes each port as a whole"},
      {"set_queue_rate", "usage: set_queue_rate <rate_pps>"},
      {"counter_read nope 1", "no counter 'nope'"},
      {"counter_read pfc_rx_quanta 1", "no counter 'pfc_rx_quanta'"},
      {"counter_read port_rx_counter 512", "index 512: port_rx_counter has 512 cells"},
      {"counter_reset port_rx_counter", "read-only"},
      {"frobnicate", "unknown command"},
  };
  for (auto& c : cases) {
    SCOPED_TRACE(c.line);
    // Good lines first: they must be undone with the bad one.
    const json resp = r.cli("act_prof_create_member nexthop_selector set_nexthop 2 02:00:00:00:aa:02\nact_prof_create_group "
                            "nexthop_selector\nact_prof_add_member_to_group nexthop_selector 0 0\n"
                            "table_indirect_add_with_group ipv4_lpm 10.0.1.0/24 => 0\n\n" +
                            c.line);
    ASSERT_FALSE(resp["ok"].get<bool>());
    EXPECT_EQ(resp["error"]["field"], "line 6") << resp.dump();
    EXPECT_NE(resp["error"]["reason"].get<std::string>().find(c.reason), std::string::npos) << resp.dump();
    EXPECT_EQ(r.api.handle({{"op", "state.hash"}})["result"]["hash"], hash);
  }
  // The handles were undone too: the next script starts again at member 0 and group 0.
  const json ok = r.cli("act_prof_create_member nexthop_selector set_nexthop 2 02:00:00:00:aa:02\nact_prof_create_group nexthop_selector");
  ASSERT_TRUE(ok["ok"].get<bool>()) << ok.dump();
  EXPECT_EQ(ok["result"]["output"][0], "Member has been created with handle 0");
  EXPECT_EQ(ok["result"]["output"][1], "Group has been created with handle 0");
}

TEST(Bmv2Cli, ClassificationTablesProgramTheQosMaps) {
  Rig r(empty_switch());
  auto qos = [&] { return r.api.handle({{"op", "qos.get"}})["result"]; };
  const json resp = r.cli("table_set_default dscp_to_tc set_tc 0\ntable_add dscp_to_tc set_tc 26 => 3\n"
                          "table_add tc_to_queue set_queue 3 => 4\ntable_add pcp_to_tc set_tc 5 => 2");
  ASSERT_TRUE(resp["ok"].get<bool>()) << resp.dump();
  json q = qos();
  EXPECT_EQ(q["dscp_to_tc"][26], 3);
  EXPECT_EQ(q["dscp_to_tc"][46], 0) << "set_default reaches every key without an entry";
  EXPECT_EQ(q["tc_to_queue"][3], 4);
  EXPECT_EQ(q["pcp_to_tc"][5], 2);
  EXPECT_EQ(q["trust"], "pcp") << "an entry in pcp_to_tc makes tagged frames trust PCP";
  ASSERT_TRUE(r.cli("table_modify dscp_to_tc set_tc 0 4\ntable_delete tc_to_queue 0\ntable_clear pcp_to_tc")["ok"].get<bool>());
  q = qos();
  EXPECT_EQ(q["dscp_to_tc"][26], 4);
  EXPECT_EQ(q["tc_to_queue"][3], 3) << "a deleted entry leaves the program's default (NoAction: queue = class)";
  EXPECT_EQ(q["trust"], "dscp");
  const json dump = r.cli("table_dump dscp_to_tc\ntable_num_entries dscp_to_tc");
  ASSERT_TRUE(dump["ok"].get<bool>());
  EXPECT_EQ(dump["result"]["output"].back(), "1");
  // A duplicate key is refused, as BMv2 does.
  const json dup = r.cli("table_add dscp_to_tc set_tc 26 => 1");
  EXPECT_FALSE(dup["ok"].get<bool>());
  EXPECT_NE(dup["error"]["reason"].get<std::string>().find("already has an entry"), std::string::npos);
}

// set_queue_depth and set_queue_rate: the ports' queue limits and rates, in the config dump.
TEST(Bmv2Cli, QueueDepthAndRateSetThePorts) {
  Rig r(empty_switch());
  const json resp = r.cli("set_queue_depth 16 1 3\nset_queue_depth 32 2\nset_queue_rate 10000 3\n");
  ASSERT_TRUE(resp["ok"].get<bool>()) << resp.dump();
  EXPECT_EQ(r.sw.egress(1).config().limits[3].packets, 16u);
  EXPECT_EQ(r.sw.egress(1).config().limits[2].packets, QueueLimits{}.packets) << "only priority 3 of port 1";
  for (int q = 0; q < 8; ++q) EXPECT_EQ(r.sw.egress(2).config().limits[q].packets, 32u);
  // 10 000 full-size frames a second: buffer.mtu plus Ethernet header, FCS, preamble and gap.
  const double mtu = r.sw.config().mmu.pool.mtu;
  EXPECT_DOUBLE_EQ(r.sw.egress(3).config().speed_gbps, 10000 * (mtu + 14 + 4 + 8 + 12) * 8 / 1e9);
  const std::string dump = r.ok({{"op", "config.dump"}})["yaml"];
  EXPECT_NE(dump.find("limit_packets: [32, 32, 32, 32, 32, 32, 32, 32]"), std::string::npos) << dump;
  // Without a port: every port.
  ASSERT_TRUE(r.cli("set_queue_depth 100")["ok"].get<bool>());
  for (std::size_t p = 0; p < 4; ++p) EXPECT_EQ(r.sw.egress(p).config().limits[0].packets, 100u);
}

// counter_read and register_read: the switch's port counters and the PFC quanta last received.
TEST(Bmv2Cli, CountersAndRegisterReadTheDataPlane) {
  SwitchConfig cfg = empty_switch();
  cfg.ports[2].host.storm = {.priority = 3, .start_ns = 0, .stop_ns = UINT64_MAX, .quanta = 1000};
  Rig r(cfg);
  r.run(kMs);
  const json resp = r.cli("counter_read port_rx_counter 0\ncounter_read port_tx_counter 3\ncounter_read port_rx_counter 400\n"
                          "register_read pfc_rx_quanta 19\nregister_read pfc_rx_quanta 18\n");
  ASSERT_TRUE(resp["ok"].get<bool>()) << resp.dump();
  const json& out = resp["result"]["output"];
  ASSERT_EQ(out.size(), 5u) << resp.dump();
  EXPECT_GT(r.sw.rx_packets(0), 0u);
  // Read after the run: nothing moved since (the rig steps only when asked).
  EXPECT_EQ(out[0], fmt::format("port_rx_counter[0]=  BmCounterData(packets={}, bytes={})", r.sw.rx_packets(0), r.sw.rx_bytes(0)));
  EXPECT_EQ(out[1], "port_tx_counter[3]=  BmCounterData(packets=0, bytes=0)");
  EXPECT_EQ(out[2], "port_rx_counter[400]=  BmCounterData(packets=0, bytes=0)") << "a port the switch does not have";
  EXPECT_EQ(out[3], "pfc_rx_quanta[19]= 1000") << "port 2, priority 3: the storm's pause time";
  EXPECT_EQ(out[4], "pfc_rx_quanta[18]= 0");
}

// A member's own group keeps what group.set gave it when the member's next hop changes, as a
// selector group does when its members change.
TEST(Bmv2Cli, ModifyingAMemberKeepsItsGroupsSettings) {
  Rig r(empty_switch());
  ASSERT_TRUE(r.cli("act_prof_create_member nexthop_selector set_nexthop 1 02:00:00:00:aa:01\n"
                    "table_indirect_add ipv4_lpm 10.0.1.0/24 => 0")["ok"].get<bool>());
  r.ok({{"op", "group.set"}, {"name", "p4_member_0"}, {"policy_by_tc", {{"3", "spray"}}}, {"table_size", 256}});
  ASSERT_TRUE(r.cli("act_prof_modify_member nexthop_selector set_nexthop 0 2 02:00:00:00:aa:02")["ok"].get<bool>());
  const json g = r.ok({{"op", "group.list"}, {"name", "p4_member_0"}})[0];
  EXPECT_EQ(g["members"][0]["port"], "h2");
  EXPECT_EQ(g["table_size"], 256);
  EXPECT_EQ(g["policy_by_tc"]["3"]["name"], "spray") << g.dump();
}

}  // namespace
}  // namespace rs::test
