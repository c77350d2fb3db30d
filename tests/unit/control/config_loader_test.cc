// The YAML loader: what a good file becomes, and that every kind of mistake is rejected with
// the file, the key path and a reason (and nothing is applied: the loader returns no config).
#include "control/config_loader.h"

#include <gtest/gtest.h>

#include <string>

#include "pipelines_embedded.h"

namespace rs {
namespace {

const char* kGood = R"(
switch: {workers: 2, seed: 3}
qos: {trust: dscp, dscp_to_tc: {26: 3}}
ports:
  - {name: a, kind: emulated_host, mac: "02:00:00:00:00:01", speed_gbps: 25,
     host: {ip: 10.0.1.2, mac: "02:00:00:00:aa:01", flows: [{dst: 10.0.2.2, rate_gbps: 1}]}}
  - {name: b, devargs: "net_null0,no-rx=1", speed_gbps: 100,
     queues: {limit_packets: 64, limit_bytes: [1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000],
              scheduler: [dwrr, dwrr, dwrr, dwrr, dwrr, dwrr, strict, strict], weights: 10}}
nexthop_groups:
  - {name: g, policy: ecmp_hash, table_size: 16, members: [{port: a, mac: "02:00:00:00:aa:01"}, {port: b, mac: "02:00:00:00:bb:01", weight: 3}]}
routes:
  - {prefix: 10.0.1.0/24, group: g}
  - {prefix: 10.0.2.0/24, port: b, mac: "02:00:00:00:bb:01"}
  - {prefix: "2001:db8::/32", nexthops: [{port: a, mac: "02:00:00:00:aa:01"}, {port: b, mac: "02:00:00:00:bb:01"}]}
  - {prefix: 0.0.0.0/0, port: a, mac: "02:00:00:00:aa:01"}
)";

TEST(ConfigLoader, GoodFileBecomesConfig) {
  SwitchConfig c = load_config_text(kGood, "good.yaml");
  EXPECT_EQ(c.workers, 2);
  EXPECT_EQ(c.seed, 3u);
  EXPECT_EQ(c.qos.dscp_to_tc[26], 3);
  EXPECT_EQ(c.qos.dscp_to_tc[46], 5);  // SONiC default kept where not overridden
  ASSERT_EQ(c.ports.size(), 2u);
  EXPECT_EQ(c.ports[0].kind, PortKind::EmulatedHost);
  EXPECT_EQ(c.ports[1].kind, PortKind::Ethdev);
  EXPECT_EQ(c.ports[1].devargs, "net_null0,no-rx=1");
  EXPECT_DOUBLE_EQ(c.ports[0].egress.speed_gbps, 25);
  EXPECT_EQ(c.ports[1].egress.limits[7].bytes, 8000u);
  EXPECT_EQ(c.ports[1].egress.limits[3].packets, 64u);
  EXPECT_EQ(c.ports[1].egress.sched[6], QueueSched::Strict);
  EXPECT_EQ(c.ports[1].egress.weights[0], 10u);
  ASSERT_EQ(c.ports[0].host.flows.size(), 1u);
  // One named group plus one implicit group per route given as port or nexthops.
  ASSERT_EQ(c.groups.size(), 4u);
  EXPECT_EQ(c.groups[0].members[1].weight, 3u);
  ASSERT_EQ(c.routes.size(), 4u);
  EXPECT_TRUE(c.routes[2].ipv6);
  EXPECT_EQ(c.routes[2].depth, 32);
  EXPECT_EQ(c.routes[3].depth, 0);
}


TEST(ConfigLoader, EmbeddedDemoIsValid) {
  SwitchConfig c = load_config_text(kDemoConfig, "<embedded demo>");
  EXPECT_EQ(c.ports.size(), 4u);
  EXPECT_GT(c.duration_s, 0);
  // The demo is an incast: the three senders together offer more than the receiver's link.
  double offered = 0;
  for (std::size_t p = 1; p < c.ports.size(); ++p)
    for (auto& f : c.ports[p].host.flows) offered += f.rate_gbps;
  EXPECT_GT(offered, c.ports[0].egress.speed_gbps);
}

struct Bad {
  const char* name;
  std::string yaml;
  const char* path;    // expected key path in the message
  const char* reason;  // expected words of the reason
};

std::string with_port(const std::string& port_fields, const std::string& rest = "") {
  return "ports:\n  - {name: a, host: {ip: 10.0.0.2, mac: \"02:00:00:00:00:aa\"}}\n  - {" + port_fields + "}\n" + rest;
}

class ConfigLoaderBad : public ::testing::TestWithParam<Bad> {};

TEST_P(ConfigLoaderBad, RejectedWithPathAndReason) {
  const Bad& b = GetParam();
  try {
    load_config_text(b.yaml, "bad.yaml");
    FAIL() << "accepted: " << b.yaml;
  } catch (const ConfigError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("bad.yaml"), std::string::npos) << msg;
    EXPECT_EQ(e.path, b.path) << msg;
    EXPECT_NE(msg.find(b.reason), std::string::npos) << msg;
  }
}

INSTANTIATE_TEST_SUITE_P(
    All, ConfigLoaderBad,
    ::testing::Values(
        Bad{"unknown_top_key", "colour: red\n" + with_port("name: b, devargs: x"), "colour", "unknown key"},
        Bad{"unknown_port_key", with_port("name: b, devargs: x, sped_gbps: 4"), "ports[1].sped_gbps", "unknown key"},
        Bad{"wrong_type", with_port("name: b, devargs: x, speed_gbps: fast"), "ports[1].speed_gbps", "expected a number"},
        Bad{"speed_out_of_range", with_port("name: b, devargs: x, speed_gbps: -1"), "ports[1].speed_gbps", "out of range"},
        Bad{"speed_too_high", with_port("name: b, devargs: x, speed_gbps: 1000"), "ports[1].speed_gbps", "out of range"},
        Bad{"duplicate_port", with_port("name: a, devargs: x"), "ports[1].name", "duplicate"},
        Bad{"bad_mac", with_port("name: b, devargs: x, mac: zz"), "ports[1].mac", "not a MAC"},
        Bad{"ethdev_without_devargs", with_port("name: b, kind: ethdev"), "ports[1].devargs", "missing"},
        Bad{"host_without_ip", with_port("name: b, host: {mac: \"02:00:00:00:00:01\"}"), "ports[1].host.ip", "missing"},
        Bad{"bad_kind", with_port("name: b, kind: tap"), "ports[1].kind", "expected"},
        Bad{"queue_list_wrong_size", with_port("name: b, devargs: x, queues: {weights: [1, 2]}"), "ports[1].queues.weights", "expected 8"},
        Bad{"bad_scheduler", with_port("name: b, devargs: x, queues: {scheduler: fifo}"), "ports[1].queues.scheduler", "strict"},
        Bad{"route_to_undefined_port", with_port("name: b, devargs: x", "routes:\n  - {prefix: 10.0.0.0/8, port: c, mac: \"02:00:00:00:00:01\"}\n"),
            "routes[0].port", "referenced but not defined"},
        Bad{"group_member_undefined_port",
            with_port("name: b, devargs: x", "nexthop_groups:\n  - {name: g, members: [{port: zz, mac: \"02:00:00:00:00:01\"}]}\n"),
            "nexthop_groups[0].members[0].port", "referenced but not defined"},
        Bad{"route_to_undefined_group", with_port("name: b, devargs: x", "routes:\n  - {prefix: 10.0.0.0/8, group: nope}\n"),
            "routes[0].group", "referenced but not defined"},
        Bad{"bad_prefix", with_port("name: b, devargs: x", "routes:\n  - {prefix: 10.0.0.0/33, port: b, mac: \"02:00:00:00:00:01\"}\n"),
            "routes[0].prefix", "out of range"},
        Bad{"not_an_address", with_port("name: b, devargs: x", "routes:\n  - {prefix: 10.0.300.0/24, port: b, mac: \"02:00:00:00:00:01\"}\n"),
            "routes[0].prefix", "not an IPv4 prefix"},
        Bad{"duplicate_route", with_port("name: b, devargs: x", "routes:\n  - {prefix: 10.0.0.0/8, port: b, mac: \"02:00:00:00:00:01\"}\n  - {prefix: 10.0.0.0/8, port: a, mac: \"02:00:00:00:00:01\"}\n"),
            "routes[1].prefix", "duplicate"},
        Bad{"unknown_policy", with_port("name: b, devargs: x", "nexthop_groups:\n  - {name: g, policy: magic, members: [{port: b, mac: \"02:00:00:00:00:01\"}]}\n"),
            "nexthop_groups[0].policy", "unknown routing policy"},
        Bad{"table_not_pow2", with_port("name: b, devargs: x", "nexthop_groups:\n  - {name: g, table_size: 12, members: [{port: b, mac: \"02:00:00:00:00:01\"}]}\n"),
            "nexthop_groups[0].table_size", "power of two"},
        Bad{"workers_out_of_range", "switch: {workers: 0}\n" + with_port("name: b, devargs: x"), "switch.workers", "out of range"},
        Bad{"port_worker_too_high", "switch: {workers: 1}\n" + with_port("name: b, devargs: x, worker: 3"), "ports[1].worker", "worker 3"},
        Bad{"dscp_out_of_range", "qos: {dscp_to_tc: {64: 1}}\n" + with_port("name: b, devargs: x"), "qos.dscp_to_tc", "out of range"},
        Bad{"tc_out_of_range", "qos: {dscp_to_tc: {10: 9}}\n" + with_port("name: b, devargs: x"), "qos.dscp_to_tc.10", "out of range"},
        Bad{"no_ports", "switch: {workers: 1}\n", "ports", "missing"},
        Bad{"syntax", "ports: [\n", "(syntax)", ""}),
    [](const ::testing::TestParamInfo<Bad>& i) { return std::string(i.param.name); });

TEST(ConfigLoader, MissingFileNamesTheFile) {
  try {
    load_config_file("/nonexistent/x.yaml");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/x.yaml"), std::string::npos);
  }
}

TEST(ConfigLoader, ErrorCarriesLineNumber) {
  try {
    load_config_text("ports:\n  - {name: a, host: {ip: 10.0.0.2, mac: \"02:00:00:00:00:aa\"}}\n  - {name: b, devargs: x, speed_gbps: -5}\n", "f.yaml");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.line, 3);
    EXPECT_NE(std::string(e.what()).find("f.yaml:3:"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace rs
