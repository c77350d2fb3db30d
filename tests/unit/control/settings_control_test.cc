// Port and buffer settings through the control plane while traffic flows, on a stepped switch:
// a port's rate changes at once, a queue's packet limit grows past its ring with packets
// queued, WRED/ECN and PG thresholds change (buffer.set, merged into the running sections),
// what is set at start-up is refused with its key path, a failing transaction changes nothing,
// and config dump -> restart reproduces the state.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "control/config/config_loader.h"
#include "control/runtime/control_api.h"
#include "tests/unit/control/control_rig.h"

namespace rs::test {
namespace {

using nlohmann::json;

// h0 (25 Gb/s) sends 5 Gb/s of lossy RoCE (DSCP 0: TC 1, queue 1) to h1 behind a 10 Gb/s
// port with 64-packet queues; priority 3 is lossless.
const char* kConfig = R"(
switch: {seed: 7}
qos: {pfc_enable: "3"}
buffer:
  profiles:
    lossless: {xoff: 40960, xon: 20480, headroom: 200000}
  pg: {3: lossless}
ports:
  - {name: h0, speed_gbps: 25, host: {ip: 10.0.0.2, mac: "02:00:00:00:aa:00", flows: [{dst: 10.0.1.2, rate_gbps: 5, dscp: 0}]}}
  - {name: h1, speed_gbps: 10, queues: {limit_packets: 64}, host: {ip: 10.0.1.2, mac: "02:00:00:00:aa:01"}}
routes:
  - {prefix: 10.0.0.0/24, port: h0, mac: "02:00:00:00:aa:00"}
  - {prefix: 10.0.1.0/24, port: h1, mac: "02:00:00:00:aa:01"}
)";

constexpr int kQ = 1;

std::string error_of(const json& r) {
  EXPECT_FALSE(r["ok"].get<bool>()) << r.dump();
  return r["error"].value("field", "") + ": " + r["error"].value("reason", "");
}

// Packets h1 receives in `ns` from now.
uint64_t received_in(ControlRig& r, uint64_t ns) {
  const uint64_t before = r.host(1).received_packets();
  r.run(ns);
  return r.host(1).received_packets() - before;
}

TEST(SettingsControl, PortRateChangesAtOnce) {
  ControlRig r(load_config_text(kConfig, "t.yaml"));
  r.run(kMs);
  const uint64_t fast = received_in(r, 2 * kMs);
  r.ok({{"op", "port.set"}, {"port", "h1"}, {"speed_gbps", 2}});
  EXPECT_EQ(r.sw.egress(1).config().speed_gbps, 2.0);
  r.run(kMs);
  const uint64_t slow = received_in(r, 2 * kMs);
  // 5 Gb/s of 1106-byte wire frames is ~565 packets/ms; 2 Gb/s ~226.
  EXPECT_NEAR(fast, 2 * 565, 2 * 565 / 20);
  EXPECT_NEAR(slow, 2 * 226, 2 * 226 / 20);
  EXPECT_GT(r.sw.drops(1, DropReason::TailDropPackets), 0u) << "the slower port's queue overflows";
  EXPECT_EQ(r.sw.config().ports[1].egress.speed_gbps, 2.0);
}

TEST(SettingsControl, QueueLimitGrowsPastItsRingWithPacketsQueued) {
  ControlRig r(load_config_text(kConfig, "t.yaml"));
  r.ok({{"op", "port.set"}, {"port", "h1"}, {"speed_gbps", 1}});
  r.run(2 * kMs);
  const EgressPort& e = r.sw.egress(1);
  EXPECT_EQ(e.fifo(kQ).capacity(), 64u);
  EXPECT_EQ(e.queue(kQ).peak_packets.get(), 64u) << "full at its limit";
  const uint64_t drops = r.sw.drops(1, DropReason::TailDropPackets);
  EXPECT_GT(drops, 0u);
  r.ok({{"op", "port.set"}, {"port", "h1"}, {"queues", {{"limit_packets", 4096}, {"limit_bytes", 8 << 20}}}});
  EXPECT_EQ(e.fifo(kQ).capacity(), 4096u) << "a larger ring, the queued packets moved over";
  r.run(kMs);
  EXPECT_GT(e.queue(kQ).depth_packets.get(), 300u);
  EXPECT_EQ(r.sw.drops(1, DropReason::TailDropPackets), drops) << "no tail drop while the queue fills its new limit";
  EXPECT_EQ(r.sw.config().ports[1].egress.limits[kQ].packets, 4096u);
  r.sw.shutdown(r.now);
  EXPECT_TRUE(r.sw.totals().balanced());
}

TEST(SettingsControl, BufferSetTurnsOnEcnMarkingAndMovesPgThresholds) {
  ControlRig r(load_config_text(kConfig, "t.yaml"));
  r.ok({{"op", "port.set"}, {"port", "h1"}, {"speed_gbps", 4}, {"queues", {{"limit_packets", 1024}}}});
  r.run(2 * kMs);
  EXPECT_EQ(r.sw.egress(1).queue(kQ).ecn_marked.get(), 0u);
  // The running sections name their profiles (the dump's names): the PG 3 profile's is read back.
  const std::string pg3 = YAML::Load(r.ok({{"op", "buffer.get"}})["yaml"].get<std::string>())["buffer"]["pg"][3].as<std::string>();
  r.ok({{"op", "buffer.set"},
        {"wred_profiles", {{"ECN", {{"ecn", "ecn_green"}, {"green_min_threshold", 10000}, {"green_max_threshold", 50000},
                                    {"green_drop_probability", 100}}}}},
        {"queue_wred", {{"1", "ECN"}}},
        {"buffer", {{"profiles", {{pg3, {{"xoff", 81920}}}}}}}});
  r.run(2 * kMs);
  EXPECT_GT(r.sw.egress(1).queue(kQ).ecn_marked.get(), 100u);
  EXPECT_GT(r.host(1).ce_marked(), 100u);
  EXPECT_EQ(r.sw.buffer().pg(0, 3).xoff, 81920u) << "merged: only xoff changed";
  EXPECT_EQ(r.sw.buffer().pg(0, 3).xon, 20480u);
  const std::string y = r.ok({{"op", "buffer.get"}})["yaml"];
  EXPECT_NE(y.find("81920"), std::string::npos) << y;
  EXPECT_TRUE(y.ends_with("\n")) << "a YAML document ends its last line";
  EXPECT_NE(y.find("green_min_threshold: 10000"), std::string::npos) << y;
  // null removes: the queue's profile goes, marking stops.
  r.ok({{"op", "buffer.set"}, {"queue_wred", {{"1", nullptr}}}});
  const uint64_t marked = r.sw.egress(1).queue(kQ).ecn_marked.get();
  r.run(kMs);
  EXPECT_EQ(r.sw.egress(1).queue(kQ).ecn_marked.get(), marked);
}

// The load view's thresholds (what adaptive routing reads): h1's port, half loaded, changes
// band when its thresholds do, at the owner's next publication.
TEST(SettingsControl, LoadViewThresholdsChangeTheQualityBand) {
  ControlRig r(load_config_text(kConfig, "t.yaml"));
  r.run(2 * kMs);
  EXPECT_GE(r.sw.load().quality(1), 5) << "5 Gb/s on a 10 Gb/s port, a short queue: a good band";
  r.ok({{"op", "buffer.set"}, {"load_view", {{"queue_thresholds_bytes", {0, 0, 0, 0, 0, 0, 0}}}}});
  r.run(100 * kUs);
  EXPECT_EQ(r.sw.load().quality(1), 0) << "every queue threshold 0: the worst band";
  r.ok({{"op", "buffer.set"}, {"load_view", {{"queue_thresholds_bytes", {1e12, 1e12, 1e12, 1e12, 1e12, 1e12, 1e12}},
                                             {"rate_thresholds_pct", {99, 99, 99, 99, 99, 99, 99}}}}});
  r.run(100 * kUs);
  EXPECT_EQ(r.sw.load().quality(1), 7) << "no threshold reached: the best band";
  EXPECT_EQ(r.sw.config().load_view.rate_thresholds_pct[0], 99.0);
}

TEST(SettingsControl, RefusalsNameTheFieldAndChangeNothing) {
  ControlRig r(load_config_text(kConfig, "t.yaml"));
  const std::string hash = r.ok({{"op", "state.hash"}})["hash"];
  EXPECT_EQ(error_of(r.call({{"op", "buffer.set"}, {"buffer", {{"pool", {{"cell_size", 128}}}}}})),
            "buffer.pool.cell_size: set at start-up (256 bytes): queued packets are counted in cells");
  EXPECT_EQ(error_of(r.call({{"op", "port.set"}, {"port", "h1"}, {"queues", {{"limit_packets", -1}}}})),
            "queues.limit_packets: out of range [1, 1048576], got -1");
  EXPECT_EQ(error_of(r.call({{"op", "port.set"}, {"port", "h1"}, {"speed_gbps", 0}})), "speed_gbps: out of range [0.001, 800], got 0");
  EXPECT_EQ(error_of(r.call({{"op", "buffer.set"}, {"buffer", {{"pg", {{"4", "lossless"}}}}}})).substr(0, 9), "buffer.pg");
  EXPECT_EQ(error_of(r.call({{"op", "buffer.set"}, {"buffer", {{"profiles", {{"x", {{"xoff", 10}}}}}}}})).substr(0, 16),
            "buffer.profiles.");
  EXPECT_EQ(error_of(r.call({{"op", "buffer.set"}})), ": nothing to set (buffer, wred_profiles, queue_wred, pfcwd, pfc_quanta, load_view)");
  // A transaction: a good port change, then a bad one: neither happens.
  const json t = r.call({{"id", 3}, {"ops", {{{"op", "port.set"}, {"port", "h1"}, {"speed_gbps", 1}},
                                             {{"op", "port.set"}, {"port", "h0"}, {"queues", {{"scheduler", "fastest"}}}}}}});
  EXPECT_FALSE(t["ok"].get<bool>());
  EXPECT_EQ(t["error"]["index"], 1) << t.dump();
  EXPECT_EQ(r.ok({{"op", "state.hash"}})["hash"], hash);
  EXPECT_EQ(r.sw.egress(1).config().speed_gbps, 10.0);
}

TEST(SettingsControl, DumpAfterChangesRestartsToTheSameState) {
  ControlRig r(load_config_text(kConfig, "t.yaml"));
  r.ok({{"op", "port.set"}, {"port", "h1"}, {"speed_gbps", 3.5}, {"cable_length_m", 40},
        {"queues", {{"scheduler", {"dwrr", "strict", "dwrr", "dwrr", "dwrr", "dwrr", "dwrr", "strict"}}, {"weights", 7}}}});
  r.ok({{"op", "buffer.set"}, {"pfcwd", {{"detection_time", 300}, {"restoration_time", 300}, {"action", "drop"}}}, {"pfc_quanta", 500}});
  r.run(kMs);
  const std::string dump = r.ok({{"op", "config.dump"}})["yaml"];
  const std::string hash = r.ok({{"op", "state.hash"}})["hash"];
  ControlRig again(load_config_text(dump, "dump.yaml"));
  EXPECT_EQ(again.ok({{"op", "state.hash"}})["hash"], hash);
  EXPECT_TRUE(again.sw.config().mmu.pfcwd.enabled);
  EXPECT_EQ(again.sw.egress(1).config().speed_gbps, 3.5);
  EXPECT_EQ(r.sw.egress(0).lossless().pfc_quanta, 500u);
  EXPECT_EQ(r.sw.egress(0).pfc_gen().refresh_ns(), pause_quanta_to_ns(500, 25) / 2);
  EXPECT_EQ(r.sw.egress(1).pfcwd().detection_ns, 300u * kMs) << "the running watchdog has the new settings";
}

}  // namespace
}  // namespace rs::test
