// Blackhole routes, the P4 program's drop() action as a route's entry: through the JSON
// protocol (route.add drop, a drop group and group.set), through BMv2's CLI (a drop() member),
// in the config dump and back. What a blackhole covers is dropped as no_route, and nothing of
// it reaches a host; taking the blackhole away lets the traffic through again.
#include <gtest/gtest.h>

#include "control/config/config_loader.h"
#include "tests/unit/control/control_rig.h"

namespace rs::test {
namespace {

using nlohmann::json;

constexpr uint32_t kQp = 0x100;

// h0 sends to h1 (10.0.1.2) at half rate.
SwitchConfig h0_to_h1() {
  SwitchConfig cfg = four_hosts();
  add_host_flow(cfg, 0, 1, 0.5, kQp, 1024);
  return cfg;
}

// Whether h1 receives h0's flow over the next millisecond, and whether it is dropped as no_route.
struct Window {
  bool delivered, dropped;
};
Window watch(ControlRig& r) {
  r.run(100 * kUs);  // what was queued before the change leaves
  const uint64_t rx = r.rx(1, 0, kQp), nr = r.sw.drops(DropReason::NoRoute);
  r.run(kMs);
  return {r.rx(1, 0, kQp) > rx, r.sw.drops(DropReason::NoRoute) > nr};
}

TEST(Blackhole, RouteAddDropThenBackToItsGroup) {
  ControlRig r(h0_to_h1());
  ASSERT_TRUE(watch(r).delivered);
  r.ok({{"op", "route.add"}, {"prefix", "10.0.1.0/24"}, {"drop", true}, {"replace", true}});
  Window w = watch(r);
  EXPECT_FALSE(w.delivered);
  EXPECT_TRUE(w.dropped);

  json l = r.ok({{"op", "route.list"}, {"prefix", "10.0.1.0/24"}});
  ASSERT_EQ(l["routes"].size(), 1u);
  EXPECT_EQ(l["routes"][0]["drop"], true) << l.dump();
  // The dump writes it as the config does, and a switch started from the dump is the same.
  const std::string yaml = r.ok({{"op", "config.dump"}})["yaml"];
  EXPECT_NE(yaml.find("{prefix: 10.0.1.0/24, drop: true}"), std::string::npos) << yaml;
  ControlRig again(load_config_text(yaml, "dump.yaml"));
  EXPECT_EQ(again.ok({{"op", "state.hash"}})["hash"], r.ok({{"op", "state.hash"}})["hash"]) << yaml;

  // A MAC is a next hop's: refused beside drop, as the config refuses it.
  const json bad = r.call({{"op", "route.add"}, {"prefix", "10.0.5.0/24"}, {"drop", true}, {"mac", "02:00:00:00:aa:01"}});
  ASSERT_FALSE(bad["ok"].get<bool>());
  EXPECT_EQ(bad["error"]["field"], "mac") << bad.dump();

  r.ok({{"op", "route.add"}, {"prefix", "10.0.1.0/24"}, {"group", "to_h1"}, {"replace", true}});
  w = watch(r);
  EXPECT_TRUE(w.delivered);
  EXPECT_FALSE(w.dropped);
}

TEST(Blackhole, DropGroupTurnsIntoAForwardingGroupAndBack) {
  ControlRig r(h0_to_h1());
  r.ok({{"ops", json::array({{{"op", "group.add"}, {"name", "hole"}, {"drop", true}},
                             {{"op", "route.add"}, {"prefix", "10.0.1.0/24"}, {"group", "hole"}, {"replace", true}}})}});
  EXPECT_FALSE(watch(r).delivered);
  json g = r.ok({{"op", "group.list"}, {"name", "hole"}})[0];
  EXPECT_EQ(g["drop"], true);
  EXPECT_TRUE(g["members"].empty());

  // Members (or a policy) alone do not turn a blackhole into a group that forwards.
  json bad = r.call({{"op", "group.set"}, {"name", "hole"}, {"members", json::array({{{"port", "h1"}, {"mac", "02:00:00:00:aa:01"}}})}});
  ASSERT_FALSE(bad["ok"].get<bool>());
  EXPECT_EQ(bad["error"]["field"], "drop") << bad.dump();
  bad = r.call({{"op", "group.set"}, {"name", "hole"}, {"drop", false}});
  ASSERT_FALSE(bad["ok"].get<bool>());
  EXPECT_EQ(bad["error"]["field"], "members") << bad.dump();
  bad = r.call({{"op", "group.add"}, {"name", "h2"}, {"drop", true}, {"members", json::array({{{"port", "h1"}, {"mac", "02:00:00:00:aa:01"}}})}});
  EXPECT_FALSE(bad["ok"].get<bool>()) << bad.dump();

  r.ok({{"op", "group.set"}, {"name", "hole"}, {"drop", false}, {"members", json::array({{{"port", "h1"}, {"mac", "02:00:00:00:aa:01"}}})}});
  EXPECT_TRUE(watch(r).delivered);
  r.ok({{"op", "group.set"}, {"name", "hole"}, {"drop", true}});
  const Window w = watch(r);
  EXPECT_FALSE(w.delivered);
  EXPECT_TRUE(w.dropped);
  const std::string yaml = r.ok({{"op", "config.dump"}})["yaml"];
  EXPECT_NE(yaml.find("{name: hole, drop: true}"), std::string::npos) << yaml;
  ControlRig again(load_config_text(yaml, "dump.yaml"));
  EXPECT_EQ(again.ok({{"op", "state.hash"}})["hash"], r.ok({{"op", "state.hash"}})["hash"]) << yaml;
}

TEST(Blackhole, Bmv2DropMemberIsABlackholeRoute) {
  SwitchConfig cfg = h0_to_h1();
  cfg.groups.clear();
  cfg.routes.clear();
  ControlRig r(cfg);
  json resp = r.cli(R"(act_prof_create_member nexthop_selector drop
act_prof_create_member nexthop_selector set_nexthop 1 02:00:00:00:aa:01
table_indirect_add ipv4_lpm 10.0.0.0/16 => 1
table_indirect_add ipv4_lpm 10.0.1.0/24 => 0
act_prof_dump nexthop_selector
)");
  ASSERT_TRUE(resp["ok"].get<bool>()) << resp.dump();
  std::string text;
  for (auto& l : resp["result"]["output"]) text += l.get<std::string>() + "\n";
  EXPECT_NE(text.find("Dumping member 0: drop"), std::string::npos) << text;
  Window w = watch(r);
  EXPECT_FALSE(w.delivered);
  EXPECT_TRUE(w.dropped);

  // A drop() member joins no selector group, and takes parameters of none.
  resp = r.cli("act_prof_create_group nexthop_selector\nact_prof_add_member_to_group nexthop_selector 0 0");
  ASSERT_FALSE(resp["ok"].get<bool>());
  EXPECT_NE(resp["error"]["reason"].get<std::string>().find("drop()"), std::string::npos) << resp.dump();
  EXPECT_FALSE(r.cli("act_prof_create_member nexthop_selector drop 1")["ok"].get<bool>());

  // The member made a next hop again: the same route forwards.
  ASSERT_TRUE(r.cli("act_prof_modify_member nexthop_selector set_nexthop 0 1 02:00:00:00:aa:01")["ok"].get<bool>());
  w = watch(r);
  EXPECT_TRUE(w.delivered);
  EXPECT_FALSE(w.dropped);
}

}  // namespace
}  // namespace rs::test
