// The control protocol against a running (stepped) switch: every operation valid and invalid,
// transactions that apply entirely or not at all, and route churn under traffic that never
// disturbs the prefixes it does not touch.
#include "control/runtime/control_api.h"

#include <gtest/gtest.h>

#include <random>

#include "control/config/config_dump.h"
#include "control/config/config_loader.h"
#include "dataplane/emu/emulated_host.h"
#include "tests/unit/control/control_rig.h"

namespace rs::test {
namespace {

using nlohmann::json;

constexpr uint32_t kQpA = 0x100;

using Rig = ControlRig;

TEST(ControlApi, RouteAddListDeleteAndTrafficFollows) {
  SwitchConfig cfg = four_hosts();
  add_host_flow(cfg, 0, 1, 0.5, kQpA, 1024);
  Rig r(cfg);
  r.run(kMs);
  ASSERT_GT(r.rx(1, 0, kQpA), 0u);

  // 10.0.1.0/24 moves to h2's group in one request; traffic follows once h1's queue drained.
  r.ok({{"id", 1}, {"op", "route.add"}, {"prefix", "10.0.1.0/24"}, {"group", "to_h2"}, {"replace", true}});
  r.run(100 * kUs);
  const uint64_t h1 = r.rx(1, 0, kQpA), h2 = r.rx(2, 0, kQpA);
  r.run(kMs);
  EXPECT_EQ(r.rx(1, 0, kQpA), h1);
  EXPECT_GT(r.rx(2, 0, kQpA), h2);

  r.ok({{"id", 2}, {"op", "route.add"}, {"prefix", "10.9.0.0/16"}, {"group", "to_h3"}});
  r.ok({{"id", 3}, {"op", "route.add"}, {"prefix", "2001:db8::/32"}, {"group", "to_h3"}});
  json all = r.ok({{"id", 4}, {"op", "route.list"}});
  EXPECT_EQ(all["total"], 6);
  json v = r.ok({{"id", 5}, {"op", "route.list"}, {"prefix", "10.9.0.0/16"}});
  ASSERT_EQ(v["routes"].size(), 1u);
  EXPECT_EQ(v["routes"][0]["prefix"], "10.9.0.0/16");
  EXPECT_EQ(v["routes"][0]["group"], "to_h3");
  EXPECT_EQ(r.ok({{"op", "route.list"}, {"prefix", "10.0.0.0/16"}})["total"], 4);
  EXPECT_EQ(r.ok({{"op", "route.list"}, {"prefix", "2001:db8::/16"}})["total"], 1);
  EXPECT_EQ(r.ok({{"op", "route.list"}, {"limit", 2}})["routes"].size(), 2u);

  // A prefix with host bits set is refused, as in the config (Linux's ip route does the same).
  EXPECT_FALSE(r.call({{"id", 6}, {"op", "route.del"}, {"prefix", "10.9.1.0/16"}})["ok"].get<bool>());
  r.ok({{"id", 7}, {"op", "route.del"}, {"prefix", "10.9.0.0/16"}});
  EXPECT_EQ(r.ok({{"op", "route.list"}})["total"], 5);
  // Without a route the flow is dropped as no_route.
  r.ok({{"op", "route.del"}, {"prefix", "10.0.1.0/24"}});
  r.run(100 * kUs);
  const uint64_t before = r.sw.drops(DropReason::NoRoute);
  r.run(kMs);
  EXPECT_GT(r.sw.drops(DropReason::NoRoute), before);
}

TEST(ControlApi, GroupsAddSetDeleteKeepMemberNexthops) {
  SwitchConfig cfg = four_hosts();
  add_host_flow(cfg, 0, 1, 0.5, kQpA, 1024);
  Rig r(cfg);
  r.ok({{"op", "group.add"},
        {"name", "spine"},
        {"policy", {{"name", "flowlet_quality"}, {"idle_time_us", 128}}},
        {"members", json::array({{{"port", "h2"}, {"mac", "02:00:00:00:aa:02"}}, {{"port", "h3"}, {"mac", "02:00:00:00:aa:03"}, {"weight", 2}}})}});
  json g = r.ok({{"op", "group.list"}, {"name", "spine"}})[0];
  EXPECT_EQ(g["policy"]["name"], "flowlet_quality");
  EXPECT_EQ(g["policy"]["params"]["idle_time_us"], 128);
  EXPECT_TRUE(g["policy"]["params"].contains("flow_table_size")) << "every parameter, defaults too";
  // Parameters alone change the current policy's, and leave the others.
  r.ok({{"op", "group.set"}, {"name", "spine"}, {"policy", {{"idle_time_us", 64}}}});
  json g2 = r.ok({{"op", "group.list"}, {"name", "spine"}})[0];
  EXPECT_EQ(g2["policy"]["name"], "flowlet_quality");
  EXPECT_EQ(g2["policy"]["params"]["idle_time_us"], 64);
  EXPECT_EQ(g2["members"], g["members"]);
  ASSERT_EQ(g["members"].size(), 2u);
  EXPECT_EQ(g["members"][1]["weight"], 2);
  const uint32_t h3_nexthop = g["members"][1]["nexthop"];

  r.ok({{"op", "route.add"}, {"prefix", "10.0.1.0/24"}, {"group", "spine"}, {"replace", true}});
  r.run(kMs);
  EXPECT_GT(r.rx(2, 0, kQpA) + r.rx(3, 0, kQpA), 0u);

  // h2 leaves, h1 joins, the policy becomes spray: h3 keeps its next hop (and its counters).
  r.ok({{"op", "group.set"},
        {"name", "spine"},
        {"policy", "spray"},
        {"members", json::array({{{"port", "h3"}, {"mac", "02:00:00:00:aa:03"}}, {{"port", "h1"}, {"mac", "02:00:00:00:aa:01"}}})}});
  g = r.ok({{"op", "group.list"}, {"name", "spine"}})[0];
  EXPECT_EQ(g["policy"]["name"], "spray");
  EXPECT_EQ(g["members"][0]["nexthop"], h3_nexthop);
  EXPECT_EQ(g["routes"], 1);
  r.run(100 * kUs);
  const uint64_t h2 = r.rx(2, 0, kQpA), h1 = r.rx(1, 0, kQpA);
  r.run(kMs);
  EXPECT_EQ(r.rx(2, 0, kQpA), h2) << "a member that left still receives";
  EXPECT_GT(r.rx(1, 0, kQpA), h1) << "spray never chose the new member";

  EXPECT_FALSE(r.call({{"op", "group.del"}, {"name", "spine"}})["ok"]) << "deleted while a route uses it";
  r.ok({{"ops", json::array({{{"op", "route.add"}, {"prefix", "10.0.1.0/24"}, {"group", "to_h1"}, {"replace", true}},
                             {{"op", "group.del"}, {"name", "spine"}}})}});
  EXPECT_EQ(r.ok({{"op", "group.list"}}).size(), 4u);
  // The freed slot is reused: the group table does not grow with churn.
  const std::size_t slots = r.state.group_slots();
  r.ok({{"op", "group.add"}, {"name", "again"}, {"members", json::array({{{"port", "h2"}, {"mac", "02:00:00:00:aa:02"}}})}});
  EXPECT_EQ(r.state.group_slots(), slots);
}

// A member leaving an ECMP group moves only its own flows: the group's new redirection table
// starts from the old one (Fib::rebalance_table), as a resilient next-hop group does.
TEST(ControlApi, AGroupThatLosesAMemberMovesOnlyThatMembersBuckets) {
  Rig r(four_hosts());
  auto member = [](int h) { return json{{"port", fmt::format("h{}", h)}, {"mac", fmt::format("02:00:00:00:aa:{:02x}", h)}}; };
  r.ok({{"op", "group.add"}, {"name", "spine"}, {"members", json::array({member(1), member(2), member(3)})}});
  r.ok({{"op", "route.add"}, {"prefix", "10.0.9.0/24"}, {"group", "spine"}});
  auto ports = [&r] {
    const Fib& f = r.sw.fib();
    for (std::size_t g = 0; g < f.num_groups(); ++g)
      if (f.group(static_cast<uint32_t>(g)).name == "spine") {
        std::vector<uint16_t> p;
        for (uint32_t nh : f.group(static_cast<uint32_t>(g)).table) p.push_back(f.nexthop(nh).port);
        return p;
      }
    return std::vector<uint16_t>{};
  };
  const std::vector<uint16_t> before = ports();
  ASSERT_EQ(before.size(), 64u);
  r.ok({{"op", "group.set"}, {"name", "spine"}, {"members", json::array({member(1), member(3)})}});
  const std::vector<uint16_t> after = ports();
  ASSERT_EQ(after.size(), 64u);
  int moved = 0;
  for (std::size_t b = 0; b < 64; ++b) {
    if (before[b] != 2) {
      EXPECT_EQ(after[b], before[b]) << "bucket " << b;
    }
    EXPECT_NE(after[b], 2) << "bucket " << b;
    moved += after[b] != before[b];
  }
  EXPECT_EQ(moved, 21) << "h2's share";
}

TEST(ControlApi, RoutesWithNextHopsOfTheirOwn) {
  // The config's three route forms at run time: a group's name, port + mac, nexthops. A route's
  // own group (route:PREFIX) is made, changed and removed with its route, and only with it.
  SwitchConfig cfg = four_hosts();
  add_host_flow(cfg, 0, 1, 0.5, kQpA, 1024);
  Rig r(cfg);
  const std::string hash0 = r.ok({{"op", "state.hash"}})["hash"];
  r.ok({{"op", "route.add"}, {"prefix", "10.0.1.0/24"}, {"replace", true},
        {"nexthops", json::array({{{"port", "h2"}, {"mac", "02:00:00:00:aa:02"}}, {{"port", "h3"}, {"mac", "02:00:00:00:aa:03"}, {"weight", 3}}})}});
  json g = r.ok({{"op", "group.list"}, {"name", "route:10.0.1.0/24"}})[0];
  ASSERT_EQ(g["members"].size(), 2u);
  EXPECT_EQ(g["members"][1]["weight"], 3);
  r.run(2 * kMs);
  EXPECT_GT(r.rx(2, 0, kQpA) + r.rx(3, 0, kQpA), 0u) << "the flow takes one of the route's own next hops (its hash says which)";
  r.ok({{"op", "route.add"}, {"prefix", "10.5.0.0/16"}, {"port", "h2"}, {"mac", "02:00:00:00:aa:02"}});
  EXPECT_EQ(r.ok({{"op", "group.list"}, {"name", "route:10.5.0.0/16"}})[0]["members"].size(), 1u);

  // Only its route uses a route's own group.
  json bad = r.call({{"op", "route.add"}, {"prefix", "10.6.0.0/16"}, {"group", "route:10.5.0.0/16"}});
  EXPECT_EQ(bad["error"]["field"], "group") << bad.dump();
  bad = r.call({{"op", "group.set"}, {"name", "route:10.5.0.0/16"}, {"policy", "spray"}});
  EXPECT_EQ(bad["error"]["field"], "name") << bad.dump();
  bad = r.call({{"op", "group.del"}, {"name", "route:10.5.0.0/16"}});
  EXPECT_EQ(bad["error"]["field"], "name") << bad.dump();
  bad = r.call({{"op", "route.add"}, {"prefix", "10.7.0.0/16"}, {"port", "h2"}, {"group", "to_h1"}});
  EXPECT_NE(bad["error"]["reason"].get<std::string>().find("exactly one of"), std::string::npos) << bad.dump();
  bad = r.call({{"op", "route.add"}, {"prefix", "10.7.1.0/16"}, {"group", "to_h1"}});
  EXPECT_NE(bad["error"]["reason"].get<std::string>().find("host bits"), std::string::npos) << bad.dump();

  // A dump restarts into the same state, route groups and all.
  const std::string hash = r.ok({{"op", "state.hash"}})["hash"];
  Rig r2(load_config_text(r.ok({{"op", "config.dump"}})["yaml"], "dump.yaml"));
  EXPECT_EQ(r2.ok({{"op", "state.hash"}})["hash"], hash);

  // Back to the start: the own groups go with their routes (named elsewhere or deleted).
  r.ok({{"op", "route.add"}, {"prefix", "10.0.1.0/24"}, {"port", "h1"}, {"mac", "02:00:00:00:aa:01"}, {"replace", true}});
  r.ok({{"op", "route.del"}, {"prefix", "10.5.0.0/16"}});
  EXPECT_FALSE(r.call({{"op", "group.list"}, {"name", "route:10.5.0.0/16"}})["ok"].get<bool>());
  json back = r.ok({{"op", "group.list"}});
  std::vector<std::string> names;
  for (auto& x : back) names.push_back(x["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"to_h0", "to_h1", "to_h2", "to_h3", "route:10.0.1.0/24"}));
  r.ok({{"op", "route.add"}, {"prefix", "10.0.1.0/24"}, {"group", "to_h1"}, {"replace", true}});
  EXPECT_EQ(r.ok({{"op", "state.hash"}})["hash"], hash0) << "the route's own group went when the route named a group";
}

TEST(ControlApi, PortAdminDownAndUp) {
  Rig r(four_hosts());
  r.ok({{"op", "port.set"}, {"port", "h2"}, {"admin", "down"}});
  r.step();
  json ports = r.ok({{"op", "port.list"}});
  EXPECT_EQ(ports[2]["admin"], "down");
  EXPECT_EQ(ports[2]["link"], "down");
  EXPECT_EQ(ports[1]["link"], "up");
  r.ok({{"op", "port.set"}, {"port", "h2"}, {"admin", "up"}});
  r.step();
  EXPECT_EQ(r.ok({{"op", "port.list"}})[2]["link"], "up");
}

TEST(ControlApi, QosMapsChangeOnTheRunningSwitch) {
  // h0's RoCE flow (DSCP 26) goes to h1; SONiC's map puts DSCP 26 in class 1, queue 1.
  SwitchConfig cfg = four_hosts();
  add_host_flow(cfg, 0, 1, 0.5, kQpA, 1024);
  Rig r(cfg);
  r.run(kMs);
  const auto q = [&](int queue) { return r.sw.egress(1).queue(queue).enq_packets.get(); };
  ASSERT_GT(q(1), 0u);
  ASSERT_EQ(q(5), 0u);
  r.ok({{"op", "qos.set"}, {"dscp_to_tc", {{"26", 5}}}, {"cnp_queue", 6}});
  json got = r.ok({{"op", "qos.get"}});
  EXPECT_EQ(got["dscp_to_tc"][26], 5);
  EXPECT_EQ(got["dscp_to_tc"][3], 3) << "a key not given keeps its value";
  EXPECT_EQ(got["cnp_queue"], 6);
  r.run(10 * kUs);
  const uint64_t q1 = q(1);
  r.run(kMs);
  EXPECT_EQ(q(1), q1) << "still classified by the old map";
  EXPECT_GT(q(5), 0u);
  // tc_to_queue then moves class 5 to queue 2.
  r.ok({{"op", "qos.set"}, {"tc_to_queue", {{"5", 2}}}});
  r.run(10 * kUs);
  const uint64_t q2 = q(2);
  r.run(kMs);
  EXPECT_GT(q(2), q2);
  // The maps are part of the state: config dump carries them to a restart.
  SwitchConfig again = load_config_text(r.ok({{"op", "config.dump"}})["yaml"], "dump.yaml");
  EXPECT_EQ(again.qos.dscp_to_tc[26], 5);
  EXPECT_EQ(again.qos.tc_to_queue[5], 2);
  EXPECT_EQ(again.qos.cnp_queue, 6);
  // Refused: out of range, unknown keys; nothing changes.
  const json maps = r.ok({{"op", "qos.get"}});
  for (json bad : {json{{"op", "qos.set"}, {"dscp_to_tc", {{"64", 1}}}}, json{{"op", "qos.set"}, {"tc_to_queue", {{"1", 8}}}},
                   json{{"op", "qos.set"}, {"trust", "vibes"}}, json{{"op", "qos.set"}, {"pfc_enable", "3,4"}}}) {
    const json resp = r.call(bad);
    EXPECT_FALSE(resp["ok"].get<bool>()) << bad.dump();
  }
  EXPECT_EQ(r.ok({{"op", "qos.get"}}), maps) << "a refused qos.set changed the maps";
  EXPECT_EQ(r.ok({{"op", "qos.get"}})["tc_to_queue"][1], 1);
}

TEST(ControlApi, TraceWhileTheSwitchRuns) {
  SwitchConfig cfg = four_hosts();
  add_host_flow(cfg, 0, 1, 0.5, kQpA, 1024);
  Rig r(cfg);
  r.run(100 * kUs);
  r.ok({{"op", "trace.start"}, {"count", 2}});
  EXPECT_FALSE(r.ok({{"op", "trace.get"}})["ready"].get<bool>()) << "ready before any worker restarted its trace";
  r.run(200 * kUs);
  json t = r.ok({{"op", "trace.get"}});
  ASSERT_TRUE(t["ready"].get<bool>());
  const std::string text = t["text"];
  EXPECT_NE(text.find("packet 1 (worker 0): received on port 0 (h0)"), std::string::npos) << text;
  EXPECT_NE(text.find("packet 2 (worker 0)"), std::string::npos) << text;
  EXPECT_EQ(text.find("packet 3 "), std::string::npos) << text;
  EXPECT_NE(text.find("-> enqueue queue"), std::string::npos) << text;
  // 1 in K never ends by itself: stop returns what was traced so far.
  r.ok({{"op", "trace.start"}, {"count", 0}, {"every", 10}});
  r.run(500 * kUs);
  EXPECT_FALSE(r.ok({{"op", "trace.get"}})["ready"].get<bool>());
  t = r.ok({{"op", "trace.stop"}});
  ASSERT_TRUE(t["ready"].get<bool>());
  EXPECT_NE(t["text"].get<std::string>().find("packet 1 "), std::string::npos);
  EXPECT_FALSE(r.call({{"op", "trace.start"}})["ok"].get<bool>()) << "count is required";
}

struct Bad {
  json op;
  const char* field;
  const char* reason;  // a substring of the reason
};

TEST(ControlApi, InvalidOperationsNameFieldAndReasonAndChangeNothing) {
  Rig r(four_hosts());
  const std::string hash = r.ok({{"op", "state.hash"}})["hash"];
  const Fib* fib = &r.sw.fib();
  const std::vector<Bad> bad = {
      {{{"op", "route.add"}, {"prefix", "10.0.300.0/24"}, {"group", "to_h1"}}, "prefix", "not an IPv4 prefix"},
      {{{"op", "route.add"}, {"prefix", "10.0.0.0/33"}, {"group", "to_h1"}}, "prefix", "out of range"},
      {{{"op", "route.add"}, {"prefix", "10.5.0.0/16"}, {"group", "nope"}}, "group", "no group 'nope'"},
      {{{"op", "route.add"}, {"prefix", "10.0.1.0/24"}, {"group", "to_h2"}}, "prefix", "exists"},
      {{{"op", "route.add"}, {"group", "to_h2"}}, "prefix", "missing"},
      {{{"op", "route.add"}, {"prefix", "10.5.0.0/16"}, {"group", "to_h2"}, {"colour", 1}}, "colour", "unknown key"},
      {{{"op", "route.del"}, {"prefix", "10.77.0.0/16"}}, "prefix", "no route"},
      {{{"op", "group.add"}, {"name", "to_h1"}, {"members", json::array({{{"port", "h1"}, {"mac", "02:00:00:00:aa:01"}}})}}, "name", "exists"},
      {{{"op", "group.add"}, {"name", "g"}, {"members", json::array({{{"port", "h9"}, {"mac", "02:00:00:00:aa:01"}}})}}, "members[0].port", "port 'h9'"},
      {{{"op", "group.add"}, {"name", "g"}, {"members", json::array({{{"port", "h1"}, {"mac", "02:00"}}})}}, "members[0].mac", "not a MAC"},
      {{{"op", "group.add"}, {"name", "g"}, {"members", json::array()}}, "members", "at least one member"},
      {{{"op", "group.add"}, {"name", "g"}, {"policy", "teleport"}, {"members", json::array({{{"port", "h1"}, {"mac", "02:00:00:00:aa:01"}}})}}, "policy", "teleport"},
      {{{"op", "group.add"}, {"name", "g"}, {"policy", {{"name", "drill"}, {"d", 1000}}}, {"members", json::array({{{"port", "h1"}, {"mac", "02:00:00:00:aa:01"}}})}}, "policy.d", "out of range"},
      {{{"op", "group.set"}, {"name", "nope"}, {"policy", "spray"}}, "name", "no group"},
      {{{"op", "group.set"}, {"name", "to_h1"}, {"table_size", 48}}, "table_size", "power of two"},
      {{{"op", "group.del"}, {"name", "to_h1"}}, "name", "used by 1 route"},
      {{{"op", "port.set"}, {"port", "h1"}, {"admin", "sideways"}}, "admin", "'up' or 'down'"},
      {{{"op", "port.set"}, {"port", "eth9"}, {"admin", "down"}}, "port", "no port"},
      {{{"op", "teleport"}}, "op", "unknown operation"},
  };
  for (std::size_t i = 0; i < bad.size(); ++i) {
    SCOPED_TRACE(bad[i].op.dump());
    json req = bad[i].op;
    req["id"] = i;
    const json resp = r.call(req);
    ASSERT_FALSE(resp["ok"].get<bool>());
    EXPECT_EQ(resp["id"], i);
    EXPECT_EQ(resp["error"]["field"], bad[i].field) << resp.dump();
    EXPECT_NE(resp["error"]["reason"].get<std::string>().find(bad[i].reason), std::string::npos) << resp.dump();
  }
  EXPECT_EQ(r.ok({{"op", "state.hash"}})["hash"], hash);
  EXPECT_EQ(&r.sw.fib(), fib) << "a refused operation published a snapshot";

  // Malformed requests.
  EXPECT_NE(r.api.handle_line("{\"id\": 1, \"op\": ").find("invalid JSON"), std::string::npos);
  EXPECT_NE(r.api.handle_line("[1,2]").find("a request is a JSON object"), std::string::npos);
  EXPECT_NE(r.api.handle_line(R"({"id":1,"op":"route.list","ops":[]})").find("exactly one of"), std::string::npos);
  EXPECT_NE(r.api.handle_line(R"({"id":1,"ops":[{"op":"route.list"}]})").find("send it as a request of its own"), std::string::npos);
  EXPECT_NE(r.api.handle_line(R"({"id":1,"ops":[7]})").find("ops[0].op"), std::string::npos);
}

// Found by fuzz_control: a parse error quotes the bytes it read, and bytes that are not UTF-8
// made the response's dump() throw out of handle_line.
TEST(ControlApi, BytesThatAreNotUtf8GetAJsonError) {
  Rig r(four_hosts());
  for (const std::string& line : {std::string("{\"i\x9f\": 1}"), std::string("{\"op\": \"ro\xff\"}"), std::string("\xc3")}) {
    const std::string out = r.api.handle_line(line);
    json resp;
    ASSERT_NO_THROW(resp = json::parse(out)) << out;
    EXPECT_FALSE(resp["ok"].get<bool>()) << out;
  }
}

TEST(ControlApi, TransactionWithOneBadOperationChangesNothing) {
  // A batch of valid operations of every kind with one bad one at a random index: the error
  // names that index, and the state (hash of the whole running config) and the published
  // snapshot are as before. Then the same batch without the bad one applies whole.
  std::mt19937 rng(7);
  for (int round = 0; round < 20; ++round) {
    Rig r(four_hosts());
    const std::string hash = r.ok({{"op", "state.hash"}})["hash"];
    const Fib* fib = &r.sw.fib();
    json ops = json::array();
    ops.push_back({{"op", "group.add"}, {"name", "spine"}, {"policy", "drill"},
                   {"members", json::array({{{"port", "h2"}, {"mac", "02:00:00:00:aa:02"}}, {{"port", "h3"}, {"mac", "02:00:00:00:aa:03"}}})}});
    for (int i = 0; i < 30; ++i)
      ops.push_back({{"op", "route.add"}, {"prefix", fmt::format("10.{}.{}.0/24", 100 + i % 7, i)}, {"group", i % 2 ? "spine" : "to_h1"}});
    ops.push_back({{"op", "route.add"}, {"prefix", "2001:db8:1::/48"}, {"group", "spine"}});
    ops.push_back({{"op", "route.del"}, {"prefix", "10.0.3.0/24"}});
    ops.push_back({{"op", "group.set"}, {"name", "to_h3"}, {"policy", "spray"}});
    ops.push_back({{"op", "port.set"}, {"port", "h3"}, {"admin", "down"}});
    const std::size_t at = std::uniform_int_distribution<std::size_t>(0, ops.size())(rng);
    json with_bad = ops;
    with_bad.insert(with_bad.begin() + static_cast<std::ptrdiff_t>(at), json{{"op", "route.add"}, {"prefix", "10.250.0.0/16"}, {"group", "nowhere"}});
    const json resp = r.call({{"id", round}, {"ops", with_bad}});
    ASSERT_FALSE(resp["ok"].get<bool>());
    EXPECT_EQ(resp["error"]["index"], at);
    EXPECT_EQ(resp["error"]["field"], fmt::format("ops[{}].group", at));
    EXPECT_EQ(r.ok({{"op", "state.hash"}})["hash"], hash) << "round " << round << ", bad op at " << at;
    EXPECT_EQ(&r.sw.fib(), fib);
    r.step();
    EXPECT_TRUE(r.sw.load().link_up(3));

    r.ok({{"id", round}, {"ops", ops}});
    EXPECT_NE(r.ok({{"op", "state.hash"}})["hash"], hash);
    EXPECT_EQ(r.ok({{"op", "route.list"}})["total"], 4 - 1 + 30 + 1);
  }
}

TEST(ControlApi, ConfigDumpRestartsIntoTheSameState) {
  Rig r(four_hosts());
  r.ok({{"ops", json::array({{{"op", "group.add"}, {"name", "spine"}, {"policy", {{"name", "flowlet_random"}, {"idle_time_us", 64}}},
                              {"policy_by_tc", {{"3", "spray"}}},
                              {"members", json::array({{{"port", "h2"}, {"mac", "02:00:00:00:aa:02"}}, {{"port", "h3"}, {"mac", "02:00:00:00:aa:03"}}})}},
                             {{"op", "route.add"}, {"prefix", "10.8.0.0/16"}, {"group", "spine"}},
                             {{"op", "route.add"}, {"prefix", "0.0.0.0/0"}, {"group", "to_h0"}},
                             {{"op", "route.add"}, {"prefix", "2001:db8::/32"}, {"group", "spine"}},
                             {{"op", "route.del"}, {"prefix", "10.0.2.0/24"}},
                             {{"op", "group.del"}, {"name", "to_h2"}},
                             {{"op", "port.set"}, {"port", "h1"}, {"admin", "down"}}})}});
  const std::string hash = r.ok({{"op", "state.hash"}})["hash"];
  const std::string yaml = r.ok({{"op", "config.dump"}})["yaml"];
  SwitchConfig again = load_config_text(yaml, "dump.yaml");
  Rig r2(again);
  EXPECT_EQ(r2.ok({{"op", "state.hash"}})["hash"], hash) << yaml;
  EXPECT_EQ(r2.ok({{"op", "route.list"}})["total"], r.ok({{"op", "route.list"}})["total"]);
  EXPECT_FALSE(r2.sw.admin_up(1));
}

}  // namespace
}  // namespace rs::test
