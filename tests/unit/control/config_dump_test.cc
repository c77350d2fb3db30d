// dump_config: every config the loader accepts dumps to YAML that reloads to the same
// SwitchConfig (compared field by field, so a key the dump leaves out is caught even when it
// is left out the same way twice), and the dump of the reload is the same text (canonical).
#include "control/config/config_dump.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "configs_embedded.h"
#include "control/config/config_loader.h"
#include "tests/unit/control/config_dump_compare.h"

namespace rs {
namespace {

namespace fs = std::filesystem;

using namespace rs::test;

// The source tree: RS_SOURCE_ROOT (meson sets it for tests), else the first parent of this
// binary or of the working directory that holds configs/demo_incast.yaml.
fs::path source_root() {
  if (const char* env = std::getenv("RS_SOURCE_ROOT")) return env;
  for (fs::path p : {fs::read_symlink("/proc/self/exe").parent_path(), fs::current_path()})
    for (; !p.empty() && p != p.root_path(); p = p.parent_path())
      if (fs::exists(p / "configs/demo_incast.yaml")) return p;
  return {};
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// As tools/roceswitch-lab does before handing an experiment file to roceswitch: drop the
// top-level `experiment:` section, keep the rest.
std::string strip_experiment(const std::string& text) {
  YAML::Node root = YAML::Load(text);
  if (!root.IsMap() || !root.remove("experiment")) return text;
  YAML::Emitter e;
  e << root;
  return e.c_str();
}

TEST(ConfigDump, RepoConfigsRoundTrip) {
  const fs::path root = source_root();
  ASSERT_FALSE(root.empty()) << "set RS_SOURCE_ROOT";
  int n = 0;
  for (const char* dir : {"configs", "experiments"}) {
    int here = 0;
    for (auto& f : fs::directory_iterator(root / dir)) {
      if (f.path().extension() != ".yaml") continue;
      SwitchConfig c;
      try {
        c = load_config_text(strip_experiment(read_file(f.path())), f.path().string());
      } catch (const ConfigError& e) {
        std::cout << "not a config the loader accepts, skipped: " << e.what() << "\n";
        continue;
      }
      round_trip(c, f.path().string());
      ++here, ++n;
    }
    EXPECT_GT(here, 0) << "no config the loader accepts in " << dir;
  }
  std::cout << n << " repository configs round-trip\n";
}

TEST(ConfigDump, EmbeddedDefaultRoundTripsAndIsShown) {
  const SwitchConfig c = load_config_text(kDemoConfig, "<embedded demo>");
  const std::string d = round_trip(c, "embedded demo");
  std::cout << "---- dump_config(embedded demo) ----\n" << d << "----\n";
  // The same file read from disk dumps to the same text: the dump does not depend on the source.
  const fs::path root = source_root();
  if (!root.empty()) {
    EXPECT_EQ(dump_config(load_config_file((root / "configs/demo_incast.yaml").string())), d);
  }
}

// Every key family at once, in non-default values and in the loader's alternative spellings.
const char* kRich = R"(
switch: {workers: 2, seed: 42, mbufs: 32768, duration_s: 2.5, pipeline: PIPELINE}
qos:
  trust: pcp
  dscp_to_tc: {26: 3, 46: 6, 0: 2}
  pcp_to_tc: {1: 0, 3: 3}
  tc_to_queue: {6: 7, 7: 6}
  cnp_queue: 6
  pfc_enable: "3,4"
  tc_to_pg: {5: 3}
  pfc_to_queue: {3: 6}
  pfc_quanta: 1000
buffer:
  pool: {size: 67108864, cell_size: 128}
  mtu: 4096
  cable_length_m: "40m"
  profiles:
    pg_fixed: {xoff: 65536, xon: 32768, headroom: 300000}
    pg_auto: {xoff: 50000, xon: 20000, dynamic_th: 0}
    lossy: {dynamic_th: 1, size: 4096}
    tight: {dynamic_th: -7}
  pg: {3: pg_fixed, 4: pg_auto}
  queue: {0: lossy, 1: tight, 4: pg_auto, 5: lossy}
wred_profiles:
  ROCE: {wred_green_enable: true, ecn: ecn_green, green_min_threshold: 40960, green_max_threshold: 327680,
         green_drop_probability: 20}
  LOSSY: {ecn: ecn_none, green_min_threshold: 100, green_max_threshold: 400, green_drop_probability: 100}
queue_wred: {3: ROCE, 4: ROCE, 1: LOSSY}
pfcwd: {detection_time: 400, restoration_time: 300, poll_interval: 100, action: forward}
load_view: {queue_thresholds_bytes: [1, 2, 4, 8, 16, 32, 64], rate_thresholds_pct: [10, 20.5, 30, 40, 50, 60, 99.9],
            rate_interval_us: 12.5, rate_weight: 0.1}
limits: {routes_v4: 1000, routes_v6: 3, tbl8_v6: 13}  # exactly full: 3 IPv6 routes; 2001:db8:1::5/128 needs 13 tbl8s
ports:
  - name: h0
    mac: "02:00:00:00:00:10"
    speed_gbps: 0.25
    worker: 1
    admin: down
    cable_length_m: 3.7
    queues: {limit_packets: [1, 2, 3, 4, 5, 6, 7, 8], limit_bytes: 65536, scheduler: [dwrr, dwrr, dwrr, dwrr, dwrr, dwrr, strict, strict],
             weights: [1, 2, 3, 4, 5, 6, 7, 100]}
    host:
      ip: 10.0.0.2
      mac: "02:00:00:00:aa:00"
      flows:
        - {dst: 10.1.0.2, rate_gbps: 0.2375, dscp: 26, ecn: 0, payload: 1400, qp: 0xb6e, opcode: 0x0a, priority: 3,
           start_s: 0.1, stop_s: 1.7}
        - {dst: 10.1.0.2}
      pfc_storm: {priority: 3, start_s: 0.5, stop_s: 0.75, quanta: 100}
    faults: {direction: rx, drop: 0.001, corrupt: 0.25, corrupt_offset: 22, duplicate: 1e-5, delay_us: 2.5, jitter_us: 0.001,
             stuck: {start_s: 0.3, stop_s: 0.4, pfc: [4, 3], quanta: 1000}}
  - {name: u0, kind: emulated_host, speed_gbps: 25, host: {ip: 10.1.0.2, mac: "02:00:00:00:bb:00", receiver: remote}}
  - {name: u1, speed_gbps: 25, worker: 0, admin: up,
     host: {ip: 10.1.0.2, mac: "02:00:00:00:bb:01", receiver: remote, pfc_storm: {priority: 4, start_s: 1}}}
  - {name: e0, kind: ethdev, devargs: "net_null0,no-rx=1", speed_gbps: 400, cable_length_m: 300, faults: {stuck: {}}}
  - {name: "yes", devargs: net_null1, speed_gbps: 100, queues: {scheduler: strict, weights: 50, limit_bytes: 17179869184}}
nexthop_groups:
  - {name: spine, policy: {name: flowlet_quality, idle_time_us: 128, flow_table_size: 1024},
     policy_by_tc: {3: spray, 5: {name: drill, d: 3}}, table_size: 256,
     members: [{port: u0, mac: "02:00:00:00:bb:00", weight: 3}, {port: u1, mac: "02:00:00:00:bb:01"}]}
  - {name: hashed, policy: {name: ecmp, fields: ip_pair, dest_qp: true}, members: [{port: e0, mac: "02:00:00:00:cc:00"}]}
  - {name: spare, policy: {name: spray, mode: random}, table_size: 64, members: [{port: "yes", mac: "02:00:00:00:dd:00", weight: 64}]}
mirror_sessions:
  - {name: span, dst_port: "yes", rx_ports: [h0, u0], tx_ports: [u1], truncate: 128, queue: 1}
  - {name: idle, dst_port: e0}
link_events:
  - {port: u1, at_s: 1.5, state: down}
  - {port: u0, at_s: 0.25, state: down}
  - {port: u1, at_s: 2.0000001, state: up}
routes:
  - {prefix: 10.1.0.0/16, group: spine}
  - {prefix: 10.0.0.0/24, port: h0, mac: "02:00:00:00:aa:00"}
  - {prefix: "2001:db8::/32", nexthops: [{port: u0, mac: "02:00:00:00:bb:00", weight: 2}, {port: e0, mac: "02:00:00:00:cc:00"}]}
  - {prefix: "::/0", group: hashed}
  - {prefix: 0.0.0.0/0, port: e0, mac: "02:00:00:00:cc:00"}
  - {prefix: "2001:db8:1::5/128", nexthops: [{port: h0, mac: "02:00:00:00:aa:00"}]}
)";

// kRich with its pipeline at an absolute path (a relative one is joined to the file's directory).
SwitchConfig load_rich() {
  std::string y = kRich;
  const fs::path root = source_root();
  y.replace(y.find("PIPELINE"), 8, (root / "pipelines/l3_roce_general.yaml").string());
  return load_config_text(y, "rich.yaml");
}

TEST(ConfigDump, RichConfigRoundTrips) {
  const SwitchConfig c = load_rich();
  ASSERT_FALSE(c.pipeline_text.empty());
  ASSERT_EQ(c.groups.size(), 7u);  // three named, four the routes' own
  round_trip(c, "kRich");
}

TEST(ConfigDump, RunningStateIsRenumberedToTheLoadersOrder) {
  SwitchConfig c = load_config_text(kDemoConfig, "<embedded demo>");
  ASSERT_EQ(c.groups.size(), 4u);  // route:10.0.0.0/24 ... route:10.0.3.0/24
  GroupSpec late;
  late.name = "spine";
  late.policy.name = "spray";
  late.members = {c.groups[2].members[0], c.groups[3].members[0]};
  c.groups.push_back(late);
  RouteSpec r{};
  r.addr[0] = 10, r.addr[1] = 9, r.depth = 16, r.group = 4;
  c.routes.insert(c.routes.begin(), r);          // routes in prefix order, as RunningState::config() gives them
  std::swap(c.routes[1], c.routes[4]);           // and the own groups no longer in route order
  std::string d;
  ASSERT_NO_THROW(d = dump_config(c));
  const SwitchConfig again = load_config_text(d, "dump.yaml");
  EXPECT_EQ(dump_config(again), d);
  ASSERT_EQ(again.groups.size(), c.groups.size());
  EXPECT_EQ(again.groups[0].name, "spine");
  each(c.routes, again.routes, "routes", [&](const RouteSpec& a, const RouteSpec& b, const std::string& at) {
    RS_FIELD(ipv6); RS_FIELD(depth);
    EXPECT_EQ(std::string(a.addr, a.addr + 16), std::string(b.addr, b.addr + 16)) << at << ".addr";
    equal_group(c.groups[a.group], again.groups[b.group], at + ".group");
  });
}

// Different spellings of one state dump to one text.
TEST(ConfigDump, EqualStatesGiveIdenticalText) {
  const char* a = R"(
qos: {pfc_enable: "3,4"}
buffer: {cable_length_m: "40m"}
wred_profiles: {W: {ecn: ecn_green, green_min_threshold: 1, green_max_threshold: 2, green_drop_probability: 3}}
queue_wred: {3: W}
ports: [{name: p, devargs: x, queues: {limit_packets: 100}}]
nexthop_groups: [{name: g, policy: ecmp, members: [{port: p, mac: "02:00:00:00:00:01"}]}]
routes: [{prefix: 10.0.0.0/8, group: g}, {prefix: 10.1.0.0/16, port: p, mac: "02:00:00:00:00:01"}]
)";
  const char* b = R"(
switch: {workers: 1, seed: 1}
qos: {trust: dscp, pfc_enable: [4, 3], dscp_to_tc: {3: 3, 46: 5}}
buffer: {cable_length_m: 40, mtu: 9100, pg: {3: auto, 4: auto}, profiles: {auto: {xoff: 36400, xon: 18200}}}
wred_profiles: {X: {wred_green_enable: false, ecn: ecn_all, green_min_threshold: 1, green_max_threshold: 2, green_drop_probability: 3}}
queue_wred: {3: X}
ports: [{name: p, kind: ethdev, devargs: x, admin: up, queues: {limit_packets: [100, 100, 100, 100, 100, 100, 100, 100]}}]
nexthop_groups: [{name: g, policy: {name: ecmp}, table_size: 64, members: [{port: p, mac: "02:00:00:00:00:01", weight: 1}]}]
routes: [{prefix: 10.0.0.0/8, group: g}, {prefix: 10.1.0.0/16, nexthops: [{port: p, mac: "02:00:00:00:00:01"}]}]
)";
  EXPECT_EQ(dump_config(load_config_text(a, "a.yaml")), dump_config(load_config_text(b, "b.yaml")));
}

// One field changed, one text changed; the reload carries the change.
TEST(ConfigDump, OneChangedFieldChangesTheText) {
  const SwitchConfig base = load_rich();
  const std::string d0 = dump_config(base);
  auto differs = [&](const char* what, auto change, auto check) {
    SCOPED_TRACE(what);
    SwitchConfig c = base;
    change(c);
    const std::string d = round_trip(c, what);
    EXPECT_NE(d, d0);
    EXPECT_TRUE(check(load_config_text(d, "changed.yaml")));
  };
  differs("route depth", [](SwitchConfig& c) { c.routes[0].depth = 17; }, [](const SwitchConfig& c) { return c.routes[0].depth == 17; });
  differs("dscp map entry", [](SwitchConfig& c) { c.qos.dscp_to_tc[10] = 5; }, [](const SwitchConfig& c) { return c.qos.dscp_to_tc[10] == 5; });
  differs("policy parameter", [](SwitchConfig& c) { c.groups[0].policy.params[0].second = 129; },
          [](const SwitchConfig& c) { return c.groups[0].policy.params[0].second == 129; });
  differs("flow start", [](SwitchConfig& c) { c.ports[0].host.flows[0].start_ns += 1; },
          [](const SwitchConfig& c) { return c.ports[0].host.flows[0].start_ns == 100'000'001; });
  differs("route limit", [](SwitchConfig& c) { c.route_limits.v4_tbl8 = 17; }, [](const SwitchConfig& c) { return c.route_limits.v4_tbl8 == 17; });
  differs("route table prefault", [](SwitchConfig& c) { c.route_limits.prefault = false; }, [](const SwitchConfig& c) { return !c.route_limits.prefault; });
  // The pipeline is named by path; its content still shows, through the digest comment.
  SwitchConfig p = base;
  p.pipeline_text += "\n";
  EXPECT_NE(dump_config(p), d0);
}

// A dump that dropped a key would reload to a different field: equal_configs says which.
TEST(ConfigDump, EqualConfigsNamesTheField) {
  const SwitchConfig a = load_rich();
  SwitchConfig b = a;
  b.ports[1].lossless.wred[3].kmin += 1;
  testing::TestPartResultArray failures;
  {
    testing::ScopedFakeTestPartResultReporter catcher(testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &failures);
    equal_configs(a, b);
  }
  ASSERT_EQ(failures.size(), 1);
  std::cout << "equal_configs reports: " << failures.GetTestPartResult(0).message() << "\n";
  EXPECT_THAT(failures.GetTestPartResult(0).message(), testing::HasSubstr("cfg.ports[1].lossless.wred[3].kmin"));
}

// What no file can say is refused with the field's name instead of being dumped wrong.
TEST(ConfigDump, InexpressibleStateIsRefused) {
  const SwitchConfig base = load_rich();
  auto refused = [&](const char* field, auto change) {
    SwitchConfig c = base;
    change(c);
    try {
      dump_config(c);
      ADD_FAILURE() << field << ": dumped";
    } catch (const std::invalid_argument& e) {
      std::cout << "refused: " << e.what() << "\n";
      EXPECT_THAT(e.what(), testing::HasSubstr(field));
    }
  };
  refused("ports[2].lossless.wred[3]", [](SwitchConfig& c) { c.ports[2].lossless.wred[3].kmax += 1; });
  refused("ports[0].host.rx_flow_capacity", [](SwitchConfig& c) { c.ports[0].host.rx_flow_capacity = 7; });
  refused("ports[3].lossless.pg[4]", [](SwitchConfig& c) { c.ports[3].lossless.pg[4].xoff += 1; });
  refused("ports[*].lossless.pg[3].headroom", [](SwitchConfig& c) { c.ports[1].lossless.pg[3].headroom += 1; });
  refused("ports[4].lossless.pfc_quanta", [](SwitchConfig& c) { c.ports[4].lossless.pfc_quanta = 1; });
  refused("nexthop_groups[0] 'route:10.1.0.0/16'", [](SwitchConfig& c) { c.groups[0].name = "route:10.1.0.0/16"; });  // reserved, and not a plain route's own
  refused("nexthop_groups[4] 'spine'", [](SwitchConfig& c) { c.groups[4].name = "spine"; c.groups[4].table_size = 128; });  // a repeated name
  // Group 3 is route 10.0.0.0/24's own (kRich's routes[1]): written in that route, or not at all.
  refused("nexthop_groups[3] 'route:10.0.0.0/24'", [](SwitchConfig& c) { c.routes[0].group = 3; });  // shared with another route
  refused("nexthop_groups[3] 'route:10.0.0.0/24'", [](SwitchConfig& c) { c.routes[1].group = 0; });  // left without its route
  refused("nexthop_groups[3] 'route:10.0.0.0/24'", [](SwitchConfig& c) { c.groups[3].policy.name = "spray"; });
  refused("nexthop_groups[3] 'route:10.0.0.0/23'", [](SwitchConfig& c) { c.groups[3].name = "route:10.0.0.0/23"; });  // not its prefix
  refused("nexthop_groups[6] 'route:2001:db8:1::5/128'", [](SwitchConfig& c) {  // 65 next hops
    c.groups[6].members.assign(65, c.groups[6].members[0]);
    c.groups[6].table_size = 128;
  });
  refused("routes[6].prefix", [](SwitchConfig& c) { c.routes.push_back(c.routes[0]); });  // 10.1.0.0/16 twice
  refused("routes[0].prefix", [](SwitchConfig& c) { c.routes[0].addr[3] = 1; });           // 10.1.0.1/16: host bits
  refused("route_limits.v6", [](SwitchConfig& c) { c.route_limits.v6 = 2; });
  refused("route_limits.v6_tbl8", [](SwitchConfig& c) { c.route_limits.v6_tbl8 = 12; });
  refused("route_limits.v4", [](SwitchConfig& c) { c.route_limits.v4 = 0; });
  refused("mmu.pfcwd.poll_ns", [](SwitchConfig& c) { c.mmu.pfcwd.poll_ns += 1; });
}

// Any nanosecond count within the loader's range dumps to a number the loader rounds back to it.
TEST(ConfigDump, EveryNanosecondRoundTrips) {
  SwitchConfig c = load_config_text("ports:\n  - {name: a, host: {ip: 10.0.0.2, mac: \"02:00:00:00:00:aa\"}}\n", "t.yaml");
  uint64_t x = 0x9e3779b97f4a7c15ull;
  std::vector<uint64_t> ns = {0, 1, 999'999'999, 1'000'999'999, 1'001'000'000, 123'456'789'012'345, 999'999'999'999'999, 1'000'000'000'000'000};
  for (int i = 0; i < 200; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    ns.push_back(x % 1'000'000'000'000'001ull >> (i % 40));
  }
  for (uint64_t t : ns) c.link_events.push_back({0, t, true});
  std::sort(c.link_events.begin(), c.link_events.end(), [](auto& a, auto& b) { return a.at_ns < b.at_ns; });
  for (uint64_t us_ns : {1000ull, 1001ull, 4349ull, 999'999'999ull, 1'000'000'000ull}) {
    c.load_view.rate_interval_ns = us_ns;
    round_trip(c, fmt::format("rate_interval_ns {}", us_ns));
  }
}

}  // namespace
}  // namespace rs
