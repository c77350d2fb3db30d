// The YAML loader: what a good file becomes (the embedded demo, the lossless sections, the
// defaults left where a file says nothing).
#include "control/config/config_loader.h"
#include "control/config/lossless_config.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdio>
#include <string>
#include <utility>

#include "config_loader_helpers.h"
#include "configs_embedded.h"
#include "dataplane/routing/routing_policy.h"
#include "dataplane/tables/route_bank.h"

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
  - {name: g, policy: ecmp, table_size: 16, members: [{port: a, mac: "02:00:00:00:aa:01"}, {port: b, mac: "02:00:00:00:bb:01", weight: 3}]}
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

TEST(ConfigLoader, EmbeddedDemoLosslessSettingsAreConsistent) {
  // Whatever lossless settings the demo carries, they resolve to a usable plan.
  SwitchConfig c = load_config_text(kDemoConfig, "<embedded demo>");
  for (auto& p : c.ports)
    for (int pg = 0; pg < 8; ++pg) {
      const PgSettings& s = p.lossless.pg[pg];
      EXPECT_EQ(s.lossless, ((c.mmu.pfc_enable >> pg) & 1) != 0) << p.name << " PG " << pg;
      if (!s.lossless) continue;
      EXPECT_LT(s.xon, s.xoff);
      EXPECT_GE(s.headroom, s.headroom_min);
      EXPECT_EQ(s.headroom_min, headroom_min_bytes(p.egress.speed_gbps, p.lossless.cable_length_m, c.mmu.pool.mtu));
    }
}

const char* kLossless = R"(
buffer:
  pool: {size: 16777216, cell_size: 128}
  mtu: 9100
  cable_length_m: 5
  profiles:
    lossless_pg: {xoff: 65536, xon: 32768, headroom: 90000}
    lossless_auto: {xoff: 50000, xon: 20000, dynamic_th: 0}
    lossy_queue: {dynamic_th: 1}
    tight_queue: {dynamic_th: -7}
  pg: {3: lossless_pg, 4: lossless_auto}
  queue: {0: lossy_queue, 1: tight_queue, 4: lossless_auto}
wred_profiles:
  AZURE_LOSSLESS: {wred_green_enable: true, ecn: ecn_all, green_min_threshold: 1048576,
                   green_max_threshold: 2097152, green_drop_probability: 5}
  LOSSY: {wred_green_enable: false, ecn: ecn_none, green_min_threshold: 100, green_max_threshold: 400,
          green_drop_probability: 100}
queue_wred: {3: AZURE_LOSSLESS, 4: AZURE_LOSSLESS, 1: LOSSY}
pfcwd: {detection_time: 400, restoration_time: 300, poll_interval: 100, action: forward}
qos:
  pfc_enable: [3, 4]
  tc_to_pg: {5: 3}
  pfc_to_queue: {3: 6}
  cnp_queue: 7
  pfc_quanta: 1000
ports:
  - {name: a, speed_gbps: 100, host: {ip: 10.0.0.2, mac: "02:00:00:00:00:aa",
     flows: [{dst: 10.0.0.3, priority: 3}, {dst: 10.0.0.3}]}}
  - {name: b, devargs: x, speed_gbps: 400, cable_length_m: "40m"}
  - {name: c, devargs: y, speed_gbps: 25, cable_length_m: 300}
)";

TEST(ConfigLoader, HeadroomMinimumFollowsTheFormula) {
  // mtu + 2 x length x 5 ns/m x rate/8 + response quanta x 64 (headroom.cc).
  EXPECT_EQ(headroom_min_bytes(100, 5, 9100), 9100u + 625u + 394u * 64u);   // 34941
  EXPECT_EQ(headroom_min_bytes(400, 40, 9100), 9100u + 20000u + 905u * 64u);  // 87020
  EXPECT_EQ(headroom_min_bytes(25, 300, 9100), 9100u + 9375u + 80u * 64u);    // 23595
  EXPECT_EQ(headroom_min_bytes(1, 5, 1500), 1500u + 7u + 67u * 64u);          // 6.25 rounds up
}

TEST(ConfigLoader, LosslessSectionsResolvePerPort) {
  SwitchConfig c = load_config_text(kLossless, "lossless.yaml");
  const MmuConfig& m = c.mmu;
  EXPECT_EQ(m.pool.size, 16777216u);
  EXPECT_EQ(m.pool.cell_size, 128u);
  EXPECT_EQ(m.pool.mtu, 9100u);
  EXPECT_EQ(m.pfc_enable, (1 << 3) | (1 << 4));
  EXPECT_EQ(m.tc_to_pg[5], 3);
  EXPECT_EQ(m.tc_to_pg[4], 4);  // identity kept where not overridden
  EXPECT_EQ(m.pfc_to_queue[3], 6);
  EXPECT_EQ(m.pfc_to_queue[4], 4);
  EXPECT_TRUE(m.pfcwd.enabled);
  EXPECT_EQ(m.pfcwd.action, PfcwdAction::Forward);
  EXPECT_EQ(m.pfcwd.detection_ns, 400'000'000u);
  EXPECT_EQ(m.pfcwd.restoration_ns, 300'000'000u);
  EXPECT_EQ(m.pfcwd.poll_ns, 100'000'000u);
  EXPECT_EQ(c.qos.cnp_queue, 7);
  ASSERT_EQ(c.ports.size(), 3u);

  EXPECT_DOUBLE_EQ(c.ports[0].lossless.cable_length_m, 5);    // buffer.cable_length_m
  EXPECT_DOUBLE_EQ(c.ports[1].lossless.cable_length_m, 40);   // SONiC's "40m"
  EXPECT_DOUBLE_EQ(c.ports[2].lossless.cable_length_m, 300);
  const uint64_t mins[3] = {34941, 87020, 23595};
  for (std::size_t i = 0; i < 3; ++i) {
    const PortLosslessConfig& l = c.ports[i].lossless;
    SCOPED_TRACE(c.ports[i].name);
    EXPECT_EQ(l.pfc_quanta, 1000);
    const PgSettings& pg3 = l.pg[3];
    EXPECT_TRUE(pg3.lossless);
    EXPECT_EQ(pg3.xoff, 65536u);
    EXPECT_EQ(pg3.xon, 32768u);
    EXPECT_EQ(pg3.headroom, 90000u);  // as configured, above each port's minimum
    EXPECT_EQ(pg3.headroom_min, mins[i]);
    const PgSettings& pg4 = l.pg[4];
    EXPECT_TRUE(pg4.lossless);
    EXPECT_EQ(pg4.xoff, 50000u);
    EXPECT_EQ(pg4.xon, 20000u);
    EXPECT_EQ(pg4.headroom, mins[i]);  // not given: the computed minimum
    for (int pg : {0, 1, 2, 5, 6, 7}) EXPECT_FALSE(l.pg[pg].lossless) << pg;
    EXPECT_EQ(l.dynamic_th[0], 1);
    EXPECT_EQ(l.dynamic_th[1], -7);
    EXPECT_EQ(l.dynamic_th[4], 0);
    EXPECT_EQ(l.dynamic_th[2], kNoDynamicTh);
    const WredProfile& w = l.wred[3];
    EXPECT_TRUE(w.enabled);
    EXPECT_TRUE(w.wred_drop);
    EXPECT_TRUE(w.ecn_mark);
    EXPECT_EQ(w.kmin, 1048576u);
    EXPECT_EQ(w.kmax, 2097152u);
    EXPECT_EQ(w.pmax_percent, 5u);
    EXPECT_TRUE(l.wred[4].enabled);
    EXPECT_TRUE(l.wred[1].enabled);
    EXPECT_FALSE(l.wred[1].wred_drop);
    EXPECT_FALSE(l.wred[1].ecn_mark);
    EXPECT_EQ(l.wred[1].pmax_percent, 100u);
    EXPECT_FALSE(l.wred[0].enabled);
  }
  ASSERT_EQ(c.ports[0].host.flows.size(), 2u);
  EXPECT_EQ(c.ports[0].host.flows[0].priority, 3);
  EXPECT_EQ(c.ports[0].host.flows[1].priority, -1);  // resolved later from the maps
}

TEST(ConfigLoader, LosslessDefaults) {
  SwitchConfig c = load_config_text(kGood, "good.yaml");
  const MmuConfig d;
  EXPECT_EQ(c.mmu.pool.size, d.pool.size);
  EXPECT_EQ(c.mmu.pool.cell_size, 256u);
  EXPECT_EQ(c.mmu.pool.mtu, 9100u);
  EXPECT_EQ(c.mmu.pfc_enable, 0);
  EXPECT_EQ(c.mmu.tc_to_pg, d.tc_to_pg);
  EXPECT_EQ(c.mmu.pfc_to_queue, d.pfc_to_queue);
  EXPECT_FALSE(c.mmu.pfcwd.enabled);
  EXPECT_EQ(c.mmu.pfcwd.detection_ns, 200'000'000u);
  EXPECT_EQ(c.qos.cnp_queue, -1);
  for (auto& p : c.ports) {
    EXPECT_DOUBLE_EQ(p.lossless.cable_length_m, 5);
    EXPECT_EQ(p.lossless.pfc_quanta, 0xffff);
    for (int i = 0; i < 8; ++i) {
      EXPECT_FALSE(p.lossless.pg[i].lossless);
      EXPECT_EQ(p.lossless.dynamic_th[i], kNoDynamicTh);
      EXPECT_FALSE(p.lossless.wred[i].enabled);
    }
  }
  EXPECT_EQ(c.ports[0].host.flows[0].priority, -1);
}

TEST(ConfigLoader, PfcWithoutBufferUsesTheBuiltInProfile) {
  // SONiC's string form of pfc_enable; no buffer section at all.
  SwitchConfig c = load_config_text(
      "qos: {pfc_enable: \"3, 4\"}\n"
      "pfcwd: {}\n"
      "ports:\n  - {name: a, host: {ip: 10.0.0.2, mac: \"02:00:00:00:00:aa\"}}\n"
      "  - {name: b, devargs: x, speed_gbps: 400, cable_length_m: 100}\n",
      "builtin.yaml");
  EXPECT_EQ(c.mmu.pfc_enable, (1 << 3) | (1 << 4));
  EXPECT_TRUE(c.mmu.pfcwd.enabled);  // present, even empty: on with SONiC's defaults
  EXPECT_EQ(c.mmu.pfcwd.poll_ns, 200'000'000u);
  for (auto& p : c.ports)
    for (int pg : {3, 4}) {
      const PgSettings& s = p.lossless.pg[pg];
      EXPECT_TRUE(s.lossless);
      EXPECT_EQ(s.xoff, kBuiltinXoffMtus * 9100u);
      EXPECT_EQ(s.xon, s.xoff / 2);
      EXPECT_EQ(s.headroom, s.headroom_min);
    }
  EXPECT_EQ(c.ports[0].lossless.pg[3].headroom_min, 34941u);
  EXPECT_EQ(c.ports[1].lossless.pg[3].headroom_min, 9100u + 50000u + 905u * 64u);
  EXPECT_FALSE(c.ports[0].lossless.pg[0].lossless);
}

TEST(ConfigLoader, PfcEnableForms) {
  auto mask = [](const std::string& v) {
    return load_config_text("qos: {pfc_enable: " + v + "}\nports:\n  - {name: a, host: {ip: 10.0.0.2, mac: \"02:00:00:00:00:aa\"}}\n", "f.yaml")
        .mmu.pfc_enable;
  };
  EXPECT_EQ(mask("[3, 4]"), 0x18);
  EXPECT_EQ(mask("\"3,4\""), 0x18);
  EXPECT_EQ(mask("3"), 0x08);
  EXPECT_EQ(mask("[]"), 0);
  EXPECT_EQ(mask("\"\""), 0);
  EXPECT_EQ(mask("[0, 7, 7]"), 0x81);
}

TEST(ConfigLoader, EcnModesMarkWhenTheyCoverGreen) {
  const std::pair<const char*, bool> modes[] = {
      {"ecn_none", false},         {"ecn_green", true},     {"ecn_yellow", false},     {"ecn_red", false},
      {"ecn_green_yellow", true}, {"ecn_green_red", true}, {"ecn_yellow_red", false}, {"ecn_all", true}};
  for (auto [mode, mark] : modes) {
    SwitchConfig c = load_config_text(
        std::string("wred_profiles: {W: {ecn: ") + mode +
            ", green_min_threshold: 1, green_max_threshold: 2, green_drop_probability: 0}}\nqueue_wred: {2: W}\n"
            "ports:\n  - {name: a, host: {ip: 10.0.0.2, mac: \"02:00:00:00:00:aa\"}}\n",
        "f.yaml");
    EXPECT_EQ(c.ports[0].lossless.wred[2].ecn_mark, mark) << mode;
    EXPECT_FALSE(c.ports[0].lossless.wred[2].wred_drop) << mode;  // wred_green_enable defaults to false
  }
}

TEST(ConfigLoader, HeadroomFitsA32MiBPoolAtShortCables) {
  // 32 ports at 400 Gb/s with 300 m: (36400 + 217020) x 2 PGs x 32 = 16.2 MB of 32 MiB.
  SwitchConfig c = load_config_text(many_ports(32, 400, 300, ", pool: {size: 33554432}"), "f.yaml");
  EXPECT_EQ(c.ports[31].lossless.pg[4].headroom, 9100u + 150000u + 905u * 64u);
}

TEST(ConfigLoader, UnconfiguredPoolIsLeftToBeSizedByTheSwitch) {
  // No buffer.pool.size: the Switch sizes the pool to fit, so even 2 km cables pass here.
  SwitchConfig c = load_config_text(many_ports(16, 400, 2000), "f.yaml");
  EXPECT_EQ(c.mmu.pool.size, 0u);
  EXPECT_EQ(c.ports[0].lossless.pg[3].headroom, 9100u + 1000000u + 905u * 64u);
  // Only cell_size given: still unconfigured, not "smaller than a cell".
  EXPECT_EQ(load_config_text("buffer: {pool: {cell_size: 512}}\nports:\n  - {name: a, host: {ip: 10.0.0.2, mac: \"02:00:00:00:00:aa\"}}\n",
                             "f.yaml").mmu.pool.size, 0u);
}

TEST(ConfigLoader, QueueProfileSizeIsReserved) {
  SwitchConfig c = load_config_text("buffer: {profiles: {lossy: {dynamic_th: 3, size: 1518}}, queue: {0: lossy, 1: lossy}}\n" + kTwoPorts,
                                    "size.yaml");
  for (auto& p : c.ports) {
    EXPECT_EQ(p.lossless.reserved[0], 1518u);
    EXPECT_EQ(p.lossless.reserved[1], 1518u);
    EXPECT_EQ(p.lossless.reserved[2], 0u);
    EXPECT_EQ(p.lossless.dynamic_th[1], 3);
  }
}

TEST(ConfigLoader, HostPfcStorm) {
  SwitchConfig c = load_config_text(
      "ports:\n  - {name: a, host: {ip: 10.0.0.2, mac: \"02:00:00:00:00:aa\",\n"
      "      pfc_storm: {priority: 4, start_s: 1.5, stop_s: 2, quanta: 100}}}\n",
      "storm.yaml");
  const HostPfcStorm& st = c.ports[0].host.storm;
  EXPECT_EQ(st.priority, 4);
  EXPECT_EQ(st.start_ns, 1'500'000'000u);
  EXPECT_EQ(st.stop_ns, 2'000'000'000u);
  EXPECT_EQ(st.quanta, 100);
}

// Seconds, milliseconds and microseconds become the nearest nanosecond: 1.001 s is
// 1001000000 ns (x * 1e9 is 1000999999.9999999, which a truncation would keep).
TEST(ConfigLoader, TimesRoundToTheNearestNanosecond) {
  SwitchConfig c = load_config_text(
      "ports:\n  - {name: a, host: {ip: 10.0.0.2, mac: \"02:00:00:00:00:aa\",\n"
      "      flows: [{dst: 10.0.0.3, start_s: 1.001, stop_s: 4.35}],\n"
      "      pfc_storm: {priority: 3, start_s: 0.009, stop_s: 2.3}}}\n"
      "load_view: {rate_interval_us: 4.35}\n"
      "link_events: [{port: a, at_s: 1.001, state: down}, {port: a, at_s: 0.000000001, state: up}]\n",
      "t.yaml");
  const HostSpec& h = c.ports[0].host;
  EXPECT_EQ(h.flows[0].start_ns, 1'001'000'000u);
  EXPECT_EQ(h.flows[0].stop_ns, 4'350'000'000u);
  EXPECT_EQ(h.storm.start_ns, 9'000'000u);
  EXPECT_EQ(h.storm.stop_ns, 2'300'000'000u);
  EXPECT_EQ(c.load_view.rate_interval_ns, 4'350u);
  ASSERT_EQ(c.link_events.size(), 2u);
  EXPECT_EQ(c.link_events[0].at_ns, 1u);
  EXPECT_EQ(c.link_events[1].at_ns, 1'001'000'000u);
}

TEST(ConfigLoader, QueueThresholdsAreWholeBytes) {
  SwitchConfig c = load_config_text("load_view: {queue_thresholds_bytes: [0, 1, 2, 3, 4, 5, 1000000000000]}\n" + kTwoPorts, "q.yaml");
  EXPECT_EQ(c.load_view.queue_thresholds_bytes[6], 1'000'000'000'000u);
}

// Distinct prefixes in any spelling, names that only look like the reserved one, and a
// route with as many next hops as a group may have.
TEST(ConfigLoader, DistinctPrefixesAndTheLargestRouteGroup) {
  std::string y = with_port("name: b, devargs: x",
                            "nexthop_groups:\n  - {name: routes, members: [{port: b, mac: \"02:00:00:00:00:01\"}]}\n"
                            "  - {name: \"Route:x\", members: [{port: b, mac: \"02:00:00:00:00:01\"}]}\n"
                            "routes:\n  - {prefix: 10.0.0.0/24, group: routes}\n  - {prefix: 10.0.0.0/025, group: \"Route:x\"}\n"
                            "  - {prefix: 10.0.0.128/25, group: routes}\n  - {prefix: \"2001:0DB8::/32\", group: routes}\n"
                            "  - {prefix: \"2001:db8::/33\", group: routes}\n  - {prefix: \"::ffff:10.0.0.0/120\", group: routes}\n"
                            "  - {prefix: 10.0.0.0, group: routes}\n  - {prefix: 0.0.0.0/0, group: routes}\n  - {prefix: \"::/0\", group: routes}\n"
                            "  - {prefix: 10.9.0.0/16, nexthops: [");
  for (std::size_t i = 0; i < kMaxGroupMembers; ++i) {
    char m[64];
    std::snprintf(m, sizeof m, "%s{port: a, mac: \"02:00:00:00:01:%02zx\"}", i ? ", " : "", i);
    y += m;
  }
  SwitchConfig c = load_config_text(y + "]}\n", "distinct.yaml");
  ASSERT_EQ(c.routes.size(), 10u);
  EXPECT_EQ(c.routes[1].depth, 25);
  EXPECT_EQ(c.routes[6].depth, 32);
  ASSERT_EQ(c.groups.size(), 3u);
  EXPECT_EQ(c.groups[2].name, "route:10.9.0.0/16");
  EXPECT_EQ(c.groups[2].members.size(), kMaxGroupMembers);
}

TEST(ConfigLoader, LimitsSizeTheRouteTables) {
  const RouteLimits d;
  SwitchConfig c = load_config_text(kTwoPorts, "none.yaml");
  EXPECT_EQ(c.route_limits.v4, 65536u);
  EXPECT_EQ(c.route_limits.v6, 16384u);
  EXPECT_EQ(c.route_limits.v4_tbl8, 4096u);
  EXPECT_EQ(c.route_limits.v6_tbl8, 4096u);
  EXPECT_EQ(c.route_limits.v4, d.v4);
  EXPECT_EQ(c.route_limits.v6_tbl8, d.v6_tbl8);
  c = load_config_text("limits: {routes_v4: 16777216, routes_v6: 4194304, tbl8_v4: 16777216, tbl8_v6: 2097152}\n" + kTwoPorts, "max.yaml");
  EXPECT_EQ(c.route_limits.v4, 1u << 24);
  EXPECT_EQ(c.route_limits.v6, 1u << 22);
  EXPECT_EQ(c.route_limits.v4_tbl8, 1u << 24);
  EXPECT_EQ(c.route_limits.v6_tbl8, 1u << 21);
  // Exactly full: 2 IPv4 routes (the default one counts), 1 IPv6 route.
  c = load_config_text("limits: {routes_v4: 2, routes_v6: 1}\n" +
                           with_port("name: b, devargs: x", "routes:\n  - {prefix: 0.0.0.0/0, port: b, mac: \"02:00:00:00:00:01\"}\n"
                                                            "  - {prefix: 10.0.0.0/8, port: b, mac: \"02:00:00:00:00:01\"}\n"
                                                            "  - {prefix: \"2001:db8::/32\", port: b, mac: \"02:00:00:00:00:01\"}\n"),
                       "full.yaml");
  EXPECT_EQ(c.route_limits.v4, 2u);
  EXPECT_EQ(c.route_limits.v6, 1u);
  EXPECT_EQ(c.route_limits.v4_tbl8, 4096u);  // a key not given keeps its default
  EXPECT_TRUE(c.route_limits.prefault);
  c = load_config_text("limits: {prefault: false}\n" + kTwoPorts, "lazy.yaml");
  EXPECT_FALSE(c.route_limits.prefault);
}

// The loader's tbl8 count is what rte_lpm and rte_lpm6 need: with the smallest tbl8 limits the
// loader accepts, a route bank built with them takes every route; with one group less, the
// loader refuses and so does DPDK.
TEST(ConfigLoader, Tbl8CountIsWhatDpdkNeeds) {
  std::string routes = "routes:\n";
  for (const char* p : {"10.0.0.1/32", "10.0.0.128/25", "10.0.0.0/24", "10.0.1.0/24", "10.0.1.2/31", "10.0.2.4/30", "10.1.0.0/16",
                        "10.1.0.0/28", "192.168.7.0/26", "2001:db8::/48", "2001:db8:0:1::/64", "2001:db8:100::/48", "2001:db8::/32",
                        "2001:db8::1/128", "2001:db8:0:1::8/125", "fd00::/8", "fd00:1::/40", "fd00:1:0:ff00::/56", "::/0", "0.0.0.0/0"})
    routes += std::string("  - {prefix: \"") + p + "\", port: b, mac: \"02:00:00:00:00:01\"}\n";
  auto load = [&](uint32_t v4, uint32_t v6) {
    return load_config_text("limits: {tbl8_v4: " + std::to_string(v4) + ", tbl8_v6: " + std::to_string(v6) + "}\n" +
                                with_port("name: b, devargs: x", routes),
                            "tbl8.yaml");
  };
  auto smallest = [&](bool v6) {
    uint32_t n = 1;
    for (;; ++n) {
      try {
        v6 ? load(4096, n) : load(n, 4096);
        return n;
      } catch (const ConfigError& e) {
        EXPECT_EQ(e.path, v6 ? "limits.tbl8_v6" : "limits.tbl8_v4") << e.what();
        if (n > 64) return 0u;
      }
    }
  };
  const uint32_t v4 = smallest(false), v6 = smallest(true);
  EXPECT_EQ(v4, 5u);   // 10.0.0, 10.0.1, 10.0.2, 10.1.0, 192.168.7
  // IPv6, a node per prefix of the first 3, 4, ... bytes down to the one holding the prefix's
  // last bits: 2001:db8::/48 3 (bytes 3, 4, 5), 2001:db8:0:1::/64 2 more (6, 7), 2001:db8:100::/48
  // 1 (5), 2001:db8::/32 none new, 2001:db8::1/128 8 (8..15), 2001:db8:0:1::8/125 8 (8..15),
  // fd00:1::/40 2 (3, 4), fd00:1:0:ff00::/56 2 (5, 6).
  EXPECT_EQ(v6, 26u);
  auto fits = [&](uint32_t t4, uint32_t t6) {
    SwitchConfig c = load(4096, 4096);
    c.route_limits.v4_tbl8 = t4;
    c.route_limits.v6_tbl8 = t6;
    RouteBank bank(c.route_limits);
    for (const RouteSpec& r : c.routes) {
      const int rc = bank.add(r);
      if (rc == -ENOSPC) return false;
      EXPECT_EQ(rc, 0);
    }
    return true;
  };
  EXPECT_TRUE(fits(v4, v6));
  EXPECT_FALSE(fits(v4 - 1, v6));
  EXPECT_FALSE(fits(v4, v6 - 1));
}

}  // namespace
}  // namespace rs

namespace rs {
namespace {

TEST(ConfigLoader, PortFaults) {
  const SwitchConfig c = load_config_text(with_port("name: b, devargs: x, faults: {direction: tx, drop: 0.5, corrupt_offset: 22, "
                                                    "delay_us: 2.5, stuck: {start_s: 0.25, pfc: [4, 3]}}"),
                                          "t.yaml");
  const FaultSpec& f = c.ports[1].faults;
  EXPECT_EQ(f.direction, FaultSpec::kTx);
  EXPECT_EQ(f.drop, 0.5);
  EXPECT_EQ(f.corrupt, 0.0);
  EXPECT_EQ(f.corrupt_offset, 22);
  EXPECT_EQ(f.delay_ns, 2500u);
  EXPECT_EQ(f.stuck_start_ns, 250'000'000u);
  EXPECT_EQ(f.stuck_stop_ns, UINT64_MAX) << "stuck for ever";
  EXPECT_EQ(f.stuck_pfc, 0x18);
  EXPECT_TRUE(f.any());
  EXPECT_FALSE(c.ports[0].faults.any()) << "no faults unless given";
}

}  // namespace
}  // namespace rs
