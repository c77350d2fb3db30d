// The DPDK telemetry commands: their answers, equal to the switch's own counters and fitting
// DPDK's data, and the commands through DPDK's own telemetry socket (as dpdk-telemetry.py asks),
// answered by this (main) thread, bounded when nobody serves, and after the Observability is
// gone. On a stepped switch of four emulated hosts (observability_rig.h).
#include <gtest/gtest.h>
#include <rte_eal.h>
#include <rte_telemetry.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "app/observability.h"
#include "tests/unit/app/observability_rig.h"

namespace rs::test {
namespace {

using namespace std::chrono_literals;

TEST(Telemetry, AnswersFromTheSwitchCounters) {
  Rig r;
  r.run(2 * kMs);
  const auto ports = telemetry_answer(r.sw, "/roceswitch/ports", "");
  ASSERT_FALSE(ports.contains("error")) << ports.dump();
  ASSERT_EQ(ports["name"].size(), 4u);
  EXPECT_EQ(ports["name"][0], "h0");
  EXPECT_EQ(ports["name"][3], kWeird);
  EXPECT_EQ(ports["rx_packets"][1], r.sw.rx_packets(1));
  const auto h1 = telemetry_answer(r.sw, "/roceswitch/ports", " h1 ");
  EXPECT_EQ(h1["name"], "h1");
  EXPECT_EQ(h1["rx_packets"], r.sw.rx_packets(1));
  EXPECT_EQ(h1["speed_mbps"], 10000u);
  EXPECT_NE(telemetry_answer(r.sw, "/roceswitch/ports", "nope")["error"].get<std::string>().find("no port 'nope'"), std::string::npos);

  const auto q = telemetry_answer(r.sw, "/roceswitch/queues", "h0");
  ASSERT_EQ(q["queue"].size(), 8u);
  EXPECT_EQ(q["depth_bytes"][3], r.sw.egress(0).queue(3).depth_bytes.get());
  EXPECT_EQ(q["enqueued_packets"][3], r.sw.egress(0).queue(3).enq_packets.get());
  EXPECT_EQ(telemetry_answer(r.sw, "/roceswitch/queues", "")["queue"].size(), 32u);

  const auto pfc = telemetry_answer(r.sw, "/roceswitch/pfc", "h1");
  ASSERT_EQ(pfc["priority"].size(), 8u);
  EXPECT_EQ(pfc["port_name"][0], "h1");

  const auto g = telemetry_answer(r.sw, "/roceswitch/groups", "spine");
  ASSERT_EQ(g["port"].size(), 2u);
  EXPECT_EQ(g["port"][0], "h2");
  EXPECT_EQ(g["port"][1], kWeird);
  const auto by_port = telemetry_answer(r.sw, "/roceswitch/groups", "h2");
  for (const auto& p : by_port["port"]) EXPECT_EQ(p, "h2");

  const auto drops = telemetry_answer(r.sw, "/roceswitch/drops", "");
  EXPECT_TRUE(drops.contains("tail_drop_bytes"));
  EXPECT_EQ(drops["no_route"], r.sw.drops(DropReason::NoRoute));
  EXPECT_EQ(telemetry_answer(r.sw, "/roceswitch/drops", "h0")["port"], "h0");

  const auto t = telemetry_answer(r.sw, "/roceswitch/totals", "");
  EXPECT_EQ(t["received"], r.sw.totals().received);
  EXPECT_TRUE(telemetry_answer(r.sw, "/roceswitch/totals", "x").contains("error"));
  EXPECT_TRUE(telemetry_answer(r.sw, "/roceswitch/nope", "").contains("error"));

  // Every answer fits DPDK's data (valid dict keys, array types, sizes).
  for (const TelemetryCommand& c : kTelemetryCommands) {
    EXPECT_LT(std::strlen(c.help), 64u) << c.name;  // DPDK refuses longer help
    rte_tel_data* d = rte_tel_data_alloc();
    EXPECT_EQ(telemetry_fill(telemetry_answer(r.sw, c.name, ""), d), 0) << c.name;
    rte_tel_data_free(d);
  }
}

// One request over DPDK's telemetry socket (what dpdk-telemetry.py does): the JSON reply.
std::string telemetry_request(const std::string& path, const std::string& request) {
  const int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
  sockaddr_un sun{};
  sun.sun_family = AF_UNIX;
  std::snprintf(sun.sun_path, sizeof sun.sun_path, "%s", path.c_str());
  timeval tv{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  std::string out;
  if (connect(fd, reinterpret_cast<sockaddr*>(&sun), sizeof sun) == 0) {
    std::vector<char> buf(64 * 1024);
    if (read(fd, buf.data(), buf.size()) > 0 && write(fd, request.data(), request.size()) > 0) {
      const ssize_t n = read(fd, buf.data(), buf.size());
      if (n > 0) out.assign(buf.data(), static_cast<std::size_t>(n));
    }
  }
  close(fd);
  return out;
}

TEST(Telemetry, DpdkTelemetrySocketReachesTheMainThread) {
  const std::string path = std::string(rte_eal_get_runtime_dir()) + "/dpdk_telemetry.v2";
  if (access(path.c_str(), F_OK) != 0) GTEST_SKIP() << "no DPDK telemetry socket at " << path;
  Rig r;
  r.run(kMs);
  {
    Observability obs(r.sw, {.metrics_listen = "", .telemetry = true});
    // A second one in the process cannot hold the commands too.
    EXPECT_THROW(Observability(r.sw, {.metrics_listen = "", .telemetry = true}), std::runtime_error);
    const std::string list = serving(obs, &r, [&] { return telemetry_request(path, "/"); });
    for (const TelemetryCommand& c : kTelemetryCommands) EXPECT_NE(list.find(std::string("\"") + c.name + "\""), std::string::npos) << list;
    const std::string help = serving(obs, &r, [&] { return telemetry_request(path, "/help,/roceswitch/ports"); });
    EXPECT_NE(help.find("Per-port counters"), std::string::npos) << help;

    const nlohmann::json ports = nlohmann::json::parse(serving(obs, nullptr, [&] { return telemetry_request(path, "/roceswitch/ports"); }));
    const auto& p = ports["/roceswitch/ports"];
    ASSERT_EQ(p["name"].size(), 4u) << ports.dump();
    EXPECT_EQ(p["name"][3], kWeird);  // DPDK escaped it into valid JSON
    EXPECT_EQ(p["rx_packets"][1], r.sw.rx_packets(1));

    const nlohmann::json q =
        nlohmann::json::parse(serving(obs, nullptr, [&] { return telemetry_request(path, "/roceswitch/queues,h0"); }));
    EXPECT_EQ(q["/roceswitch/queues"]["depth_bytes"][3], r.sw.egress(0).queue(3).depth_bytes.get()) << q.dump();
    const nlohmann::json bad = nlohmann::json::parse(serving(obs, &r, [&] { return telemetry_request(path, "/roceswitch/ports,zz"); }));
    EXPECT_NE(bad["/roceswitch/ports"]["error"].get<std::string>().find("no port"), std::string::npos);
  }
  {
    // Nobody serving: a bounded wait, then an error, not a hang.
    Observability slow(r.sw, {.metrics_listen = "", .telemetry = true, .answer_timeout = 100ms});
    const nlohmann::json late = nlohmann::json::parse(telemetry_request(path, "/roceswitch/totals"));
    EXPECT_NE(late["/roceswitch/totals"]["error"].get<std::string>().find("did not answer"), std::string::npos) << late.dump();
  }
  // After the Observability: the commands stay (DPDK cannot remove them) and say so.
  const nlohmann::json stopped = nlohmann::json::parse(telemetry_request(path, "/roceswitch/totals"));
  EXPECT_EQ(stopped["/roceswitch/totals"]["error"], "switch stopped");
}

}  // namespace
}  // namespace rs::test
