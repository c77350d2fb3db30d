// Mirror sessions through the control plane, on a stepped switch: mirror.set / mirror.del /
// mirror.list and their errors, a transaction that fails leaves the sessions as they were, the
// BMv2 mirroring_add + mirror_ingress/mirror_egress commands, and config dump -> restart.
#include <gtest/gtest.h>

#include "control/config/config_loader.h"
#include "control/runtime/control_api.h"
#include "tests/unit/control/control_rig.h"

namespace rs::test {
namespace {

using nlohmann::json;

// h0 -> h1 at 1 Gb/s; h2, h3 idle.
SwitchConfig h0_to_h1() {
  SwitchConfig cfg = four_hosts();
  add_host_flow(cfg, 0, 1, 1, 0x100, kPayload);
  return cfg;
}

std::string error_of(const json& r) {
  EXPECT_FALSE(r["ok"].get<bool>()) << r.dump();
  return r["error"].value("field", "") + ": " + r["error"].value("reason", "");
}

TEST(MirrorControl, SetListDeleteAndTrafficFollows) {
  ControlRig r(h0_to_h1());
  r.ok({{"op", "mirror.set"}, {"name", "span"}, {"dst_port", "h3"}, {"rx_ports", {"h0"}}, {"truncate", 100}});
  r.run(kMs);
  const json l = r.ok({{"op", "mirror.list"}});
  ASSERT_EQ(l.size(), 1u);
  EXPECT_EQ(l[0]["dst_port"], "h3");
  EXPECT_EQ(l[0]["rx_ports"], json::array({"h0"}));
  EXPECT_EQ(l[0]["truncate"], 100);
  const uint64_t copies = l[0]["copies"];
  EXPECT_GT(copies, 50u);
  EXPECT_EQ(r.sw.tx_bytes(3), r.sw.tx_packets(3) * 100);
  // Replace it: the tx side of h1 whole, to h2.
  r.ok({{"op", "mirror.set"}, {"name", "span"}, {"dst_port", "h2"}, {"tx_ports", {"h1"}}});
  const uint64_t at3 = r.sw.tx_packets(3);
  r.run(kMs);
  EXPECT_LE(r.sw.tx_packets(3) - at3, 2u) << "h0's rx is no longer watched";
  EXPECT_GT(r.sw.tx_packets(2), 50u);
  r.ok({{"op", "mirror.del"}, {"name", "span"}});
  EXPECT_TRUE(r.ok({{"op", "mirror.list"}}).empty());
  const uint64_t at2 = r.sw.tx_packets(2);
  r.run(kMs);
  EXPECT_LE(r.sw.tx_packets(2) - at2, 2u);
  EXPECT_TRUE(r.sw.totals().balanced());
  EXPECT_EQ(r.ok({{"op", "limits"}})["mirror_sessions"]["used"], 0);
}

TEST(MirrorControl, BadSessionsNameTheFieldAndChangeNothing) {
  ControlRig r(h0_to_h1());
  r.ok({{"op", "mirror.set"}, {"name", "a"}, {"dst_port", "h3"}, {"rx_ports", {"h0"}}});
  const std::string hash = r.ok({{"op", "state.hash"}})["hash"];
  EXPECT_EQ(error_of(r.call({{"op", "mirror.set"}, {"name", "b"}, {"dst_port", "h9"}})), "dst_port: port 'h9' is referenced but not defined in ports");
  EXPECT_EQ(error_of(r.call({{"op", "mirror.set"}, {"name", "b"}, {"dst_port", "h2"}, {"rx_ports", {"h1", "h2"}}})),
            "rx_ports[1]: the destination port cannot be a source of its session");
  EXPECT_EQ(error_of(r.call({{"op", "mirror.set"}, {"name", "b"}, {"dst_port", "h2"}, {"rx_ports", {"h0"}}})),
            "rx_ports[0]: this port's rx is already watched by session 'a'");
  EXPECT_EQ(error_of(r.call({{"op", "mirror.set"}, {"name", "b"}, {"dst_port", "h2"}, {"truncate", 8}})),
            "truncate: 8 bytes; 0 (whole frames) or 14 to 65535");
  EXPECT_EQ(error_of(r.call({{"op", "mirror.del"}, {"name", "zz"}})), "name: no mirror session 'zz'");
  // A transaction whose last operation fails: the first one's new session is not kept.
  const json bad = r.call({{"ops", json::array({{{"op", "mirror.set"}, {"name", "c"}, {"dst_port", "h2"}, {"tx_ports", {"h1"}}},
                                                 {{"op", "mirror.del"}, {"name", "a"}},
                                                 {{"op", "mirror.set"}, {"name", "d"}, {"dst_port", "h1"}, {"tx_ports", {"h1"}}}})}});
  EXPECT_EQ(bad["error"]["index"], 2);
  EXPECT_EQ(bad["error"]["field"], "ops[2].tx_ports[0]");
  EXPECT_EQ(r.ok({{"op", "state.hash"}})["hash"], hash);
  ASSERT_EQ(r.ok({{"op", "mirror.list"}}).size(), 1u);
  r.run(kMs);
  EXPECT_EQ(r.sw.mirror().copies(1, PortMirror::kTx), 0u) << "the failed transaction's session never ran";
}

TEST(MirrorControl, SessionsOverTheLimitAreRefused) {
  ControlRig r(h0_to_h1());
  json ops = json::array();
  for (uint32_t i = 0; i <= ControlLimits{}.mirror_sessions; ++i)
    ops.push_back({{"op", "mirror.set"}, {"name", fmt::format("s{}", i)}, {"dst_port", "h3"}});
  const json resp = r.call({{"ops", ops}});
  EXPECT_EQ(resp["error"]["index"], ControlLimits{}.mirror_sessions);
  EXPECT_NE(error_of(resp).find("the limit"), std::string::npos);
  EXPECT_TRUE(r.ok({{"op", "mirror.list"}}).empty());
}

TEST(MirrorControl, Bmv2MirroringAndMirrorTables) {
  ControlRig r(h0_to_h1());
  // An entry naming a session that does not exist yet is refused, with its line.
  json resp = r.cli("table_add mirror_ingress mirror_in 0 => 5");
  EXPECT_EQ(error_of(resp), "line 1: table_add: no mirror session 5: mirroring_add it first");
  resp = r.cli("mirroring_add 5 3\n"
               "table_add mirror_ingress mirror_in 0 => 5\n"
               "table_add mirror_egress mirror_out 1 => 5\n"
               "mirroring_get 5\n"
               "table_dump mirror_ingress");
  ASSERT_TRUE(resp["ok"].get<bool>()) << resp.dump();
  const json out = resp["result"]["output"];
  EXPECT_EQ(out[0], "Entry has been added with handle 0");
  EXPECT_EQ(out[2], "MirroringSessionConfig(port=3, mgid=None)");
  const json l = r.ok({{"op", "mirror.list"}});
  ASSERT_EQ(l.size(), 1u);
  EXPECT_EQ(l[0]["name"], "p4_session_5");
  EXPECT_EQ(l[0]["rx_ports"], json::array({"h0"}));
  EXPECT_EQ(l[0]["tx_ports"], json::array({"h1"}));
  r.run(kMs);
  const uint64_t rx0 = r.sw.mirror().copies(0, PortMirror::kRx), tx1 = r.sw.mirror().copies(1, PortMirror::kTx);
  EXPECT_GT(rx0, 50u);
  EXPECT_GT(tx1, 50u);
  // The same port twice in one table is a duplicate key.
  EXPECT_EQ(error_of(r.cli("table_add mirror_ingress mirror_in 0 => 5")), "line 1: table_add: mirror_ingress already has an entry for port 0 (handle 0)");
  // Deleting the ingress entry stops those copies; deleting the session ends the rest.
  ASSERT_TRUE(r.cli("table_delete mirror_ingress 0")["ok"].get<bool>());
  EXPECT_EQ(r.ok({{"op", "mirror.list"}})[0]["rx_ports"], json::array());
  ASSERT_TRUE(r.cli("mirroring_delete 5")["ok"].get<bool>());
  EXPECT_TRUE(r.ok({{"op", "mirror.list"}}).empty());
  EXPECT_EQ(r.cli("table_num_entries mirror_egress")["result"]["output"][0], "0") << "the entries went with their session";
}

TEST(MirrorControl, ConfigDumpRestartsWithTheSessions) {
  ControlRig r(h0_to_h1());
  r.ok({{"ops", json::array({{{"op", "mirror.set"}, {"name", "span"}, {"dst_port", "h3"}, {"rx_ports", {"h0"}}, {"tx_ports", {"h1", "h2"}},
                              {"truncate", 64}, {"queue", 2}},
                             {{"op", "mirror.set"}, {"name", "spare"}, {"dst_port", "h2"}}})}});
  const std::string hash = r.ok({{"op", "state.hash"}})["hash"];
  const std::string yaml = r.ok({{"op", "config.dump"}})["yaml"];
  EXPECT_NE(yaml.find("mirror_sessions:"), std::string::npos) << yaml;
  ControlRig again(load_config_text(yaml, "dump.yaml"));
  EXPECT_EQ(again.ok({{"op", "state.hash"}})["hash"], hash) << yaml;
  again.run(kMs);
  EXPECT_GT(again.sw.mirror().copies(0, PortMirror::kRx), 50u) << "the restarted switch mirrors as the dumped one did";
}

}  // namespace
}  // namespace rs::test
