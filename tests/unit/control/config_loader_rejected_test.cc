// The YAML loader: every kind of mistake is rejected with the file, the key path and a reason
// (and nothing is applied: the loader returns no config), pointing at the offending line.
#include "control/config/config_loader.h"
#include "control/config/config_reader.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <utility>

#include "config_loader_helpers.h"

namespace rs {
namespace {

struct Bad {
  const char* name;
  std::string yaml;
  const char* path;    // expected key path in the message
  const char* reason;  // expected words of the reason
};

const std::string kPfc34 = "qos: {pfc_enable: [3, 4]}\n";
std::string wred_yaml(const std::string& fields) { return "wred_profiles: {W: {" + fields + "}}\n" + kTwoPorts; }
// n next hops on port b, each its own MAC.
std::string nexthops(int n) {
  std::string s;
  for (int i = 0; i < n; ++i) {
    char m[64];
    std::snprintf(m, sizeof m, "%s{port: b, mac: \"02:00:00:00:%02x:%02x\"}", i ? ", " : "", i >> 8, i & 0xff);
    s += m;
  }
  return s;
}
// n distinct IPv6 /64 routes to port b.
std::string v6_routes(int n) {
  std::string s;
  for (int i = 0; i < n; ++i) {
    char r[96];
    std::snprintf(r, sizeof r, "  - {prefix: \"2001:db8:%x::/64\", port: b, mac: \"02:00:00:00:00:01\"}\n", i);
    s += r;
  }
  return s;
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
        Bad{"drop_false", with_port("name: b, devargs: x", "routes:\n  - {prefix: 10.0.0.0/8, drop: false}\n"), "routes[0].drop",
            "only drop: true"},
        Bad{"drop_and_group", with_port("name: b, devargs: x", "routes:\n  - {prefix: 10.0.0.0/8, drop: true, group: g}\n"), "routes[0]",
            "exactly one of"},
        Bad{"drop_group_with_members",
            with_port("name: b, devargs: x", "nexthop_groups:\n  - {name: g, drop: true, members: [{port: b, mac: \"02:00:00:00:00:01\"}]}\n"),
            "nexthop_groups[0].members", "no members"},
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
        // Lossless RoCE settings.
        Bad{"xon_not_below_xoff", kPfc34 + "buffer: {profiles: {p: {xoff: 1000, xon: 1000}}, pg: {3: p, 4: p}}\n" + kTwoPorts,
            "buffer.profiles.p.xon", "xon 1000 must be below xoff 1000"},
        Bad{"xoff_without_xon", "buffer: {profiles: {p: {xoff: 1000}}}\n" + kTwoPorts, "buffer.profiles.p.xon", "missing"},
        Bad{"headroom_without_xoff", "buffer: {profiles: {p: {dynamic_th: 0, headroom: 5}}}\n" + kTwoPorts, "buffer.profiles.p.headroom", "goes with xoff"},
        Bad{"empty_profile", "buffer: {profiles: {p: {}}}\n" + kTwoPorts, "buffer.profiles.p", "empty profile"},
        Bad{"profile_unknown_key", "buffer: {profiles: {p: {dynamic_th: 0, static_th: 5}}}\n" + kTwoPorts, "buffer.profiles.p.static_th", "unknown key"},
        Bad{"wred_min_not_below_max", wred_yaml("green_min_threshold: 2097152, green_max_threshold: 2097152, green_drop_probability: 5"),
            "wred_profiles.W.green_min_threshold", "green_min_threshold 2097152 must be below green_max_threshold 2097152"},
        Bad{"wred_probability_over_100", wred_yaml("green_min_threshold: 1, green_max_threshold: 2, green_drop_probability: 101"),
            "wred_profiles.W.green_drop_probability", "out of range [0, 100], got 101"},
        Bad{"wred_probability_negative", wred_yaml("green_min_threshold: 1, green_max_threshold: 2, green_drop_probability: -1"),
            "wred_profiles.W.green_drop_probability", "out of range [0, 100]"},
        Bad{"wred_missing_threshold", wred_yaml("green_min_threshold: 1, green_drop_probability: 5"), "wred_profiles.W.green_max_threshold", "missing"},
        Bad{"wred_unknown_ecn_mode", wred_yaml("ecn: ecn_blue, green_min_threshold: 1, green_max_threshold: 2, green_drop_probability: 5"),
            "wred_profiles.W.ecn", "unknown ECN mode 'ecn_blue'"},
        Bad{"wred_yellow_not_supported", wred_yaml("wred_yellow_enable: true, green_min_threshold: 1, green_max_threshold: 2, green_drop_probability: 5"),
            "wred_profiles.W.wred_yellow_enable", "unknown key"},
        Bad{"wred_enable_not_bool", wred_yaml("wred_green_enable: maybe, green_min_threshold: 1, green_max_threshold: 2, green_drop_probability: 5"),
            "wred_profiles.W.wred_green_enable", "expected true or false"},
        Bad{"unknown_wred_profile", "wred_profiles: {W: {green_min_threshold: 1, green_max_threshold: 2, green_drop_probability: 5}}\n"
                                    "queue_wred: {3: AZURE}\n" + kTwoPorts, "queue_wred.3", "unknown WRED profile 'AZURE' (defined: W)"},
        Bad{"queue_wred_queue_out_of_range", "queue_wred: {8: W}\n" + kTwoPorts, "queue_wred", "out of range [0, 7]"},
        Bad{"pfcwd_poll_over_detection", "pfcwd: {detection_time: 100, restoration_time: 500, poll_interval: 150}\n" + kTwoPorts,
            "pfcwd.poll_interval", "150 ms is longer than detection_time 100 ms"},
        Bad{"pfcwd_poll_over_restoration", "pfcwd: {detection_time: 500, restoration_time: 100, poll_interval: 150}\n" + kTwoPorts,
            "pfcwd.poll_interval", "150 ms is longer than restoration_time 100 ms"},
        Bad{"pfcwd_default_poll_over_detection", "pfcwd: {detection_time: 100}\n" + kTwoPorts,
            "pfcwd.poll_interval", "200 ms (default) is longer than detection_time 100 ms"},
        Bad{"pfcwd_unknown_action", "pfcwd: {action: reboot}\n" + kTwoPorts, "pfcwd.action", "unknown action 'reboot'"},
        Bad{"pfcwd_zero_time", "pfcwd: {detection_time: 0}\n" + kTwoPorts, "pfcwd.detection_time", "out of range"},
        Bad{"pfcwd_unknown_key", "pfcwd: {enabled: true}\n" + kTwoPorts, "pfcwd.enabled", "unknown key"},
        Bad{"headroom_below_minimum", kPfc34 + "buffer: {profiles: {p: {xoff: 65536, xon: 32768, headroom: 30000}}, pg: {3: p, 4: p}}\n" + kTwoPorts,
            "buffer.profiles.p.headroom", "30000 bytes is below the computed minimum 34941 bytes for port 'a' PG 3 (100 Gb/s, 5 m cable, mtu 9100)"},
        Bad{"headroom_below_minimum_on_fast_long_port",
            kPfc34 + "buffer: {profiles: {p: {xoff: 65536, xon: 32768, headroom: 40000}}, pg: {3: p, 4: p}}\n" +
                with_port("name: b, devargs: x, speed_gbps: 400, cable_length_m: 40"),
            "buffer.profiles.p.headroom", "below the computed minimum 87020 bytes for port 'b' PG 3 (400 Gb/s, 40 m cable"},
        Bad{"pfc_priority_without_pg_profile", kPfc34 + "buffer: {profiles: {p: {xoff: 65536, xon: 32768}}, pg: {3: p}}\n" + kTwoPorts,
            "qos.pfc_enable", "priority 4 is lossless but buffer.pg gives PG 4 no profile"},
        Bad{"pg_profile_without_pfc", "qos: {pfc_enable: [3]}\nbuffer: {profiles: {p: {xoff: 65536, xon: 32768}}, pg: {3: p, 5: p}}\n" + kTwoPorts,
            "buffer.pg.5", "PG 5 has a lossless profile but priority 5 is not in qos.pfc_enable"},
        Bad{"pfc_priority_no_tc_maps_to", "qos: {pfc_enable: [3], tc_to_pg: {3: 4}}\n" + kTwoPorts,
            "qos.pfc_enable", "priority 3 is lossless but no TC maps to PG 3"},
        Bad{"unknown_pg_profile", kPfc34 + "buffer: {profiles: {p: {xoff: 65536, xon: 32768}}, pg: {3: p, 4: nope}}\n" + kTwoPorts,
            "buffer.pg.4", "unknown buffer profile 'nope' (defined: p)"},
        Bad{"unknown_queue_profile", "buffer: {queue: {0: nope}}\n" + kTwoPorts, "buffer.queue.0", "unknown buffer profile 'nope' (defined: none)"},
        Bad{"pg_profile_is_a_queue_profile", kPfc34 + "buffer: {profiles: {q: {dynamic_th: 1}}, pg: {3: q, 4: q}}\n" + kTwoPorts,
            "buffer.pg.3", "profile 'q' has no xoff/xon"},
        Bad{"queue_profile_without_dynamic_th", "buffer: {profiles: {p: {xoff: 65536, xon: 32768}}, queue: {1: p}}\n" + kTwoPorts,
            "buffer.queue.1", "profile 'p' has no dynamic_th"},
        Bad{"dynamic_th_too_high", "buffer: {profiles: {q: {dynamic_th: 4}}}\n" + kTwoPorts, "buffer.profiles.q.dynamic_th", "out of range [-7, 3], got 4"},
        Bad{"dynamic_th_too_low", "buffer: {profiles: {q: {dynamic_th: -8}}}\n" + kTwoPorts, "buffer.profiles.q.dynamic_th", "out of range [-7, 3], got -8"},
        Bad{"cell_size_zero", "buffer: {pool: {cell_size: 0}}\n" + kTwoPorts, "buffer.pool.cell_size", "must be a power of two (bytes), got 0"},
        Bad{"cell_size_not_pow2", "buffer: {pool: {cell_size: 192}}\n" + kTwoPorts, "buffer.pool.cell_size", "must be a power of two (bytes), got 192"},
        Bad{"pool_below_one_cell", "buffer: {pool: {size: 100}}\n" + kTwoPorts, "buffer.pool.size", "less than one 256-byte cell"},
        Bad{"pool_unknown_key", "buffer: {pool: {mode: dynamic}}\n" + kTwoPorts, "buffer.pool.mode", "unknown key"},
        Bad{"buffer_unknown_key", "buffer: {colour: red}\n" + kTwoPorts, "buffer.colour", "unknown key"},
        Bad{"mtu_out_of_range", "buffer: {mtu: 20000}\n" + kTwoPorts, "buffer.mtu", "out of range"},
        // 16 ports at 400 Gb/s behind 2 km: (36400 + 9100 + 1000000 + 905 x 64) x 2 PGs x 16 > 32 MiB.
        Bad{"headroom_exceeds_pool", many_ports(16, 400, 2000, ", pool: {size: 33554432}"), "buffer.pool.size",
            "lossless PGs reserve 35309440 bytes (xoff + headroom over 16 ports x 2 PGs; port 'p0' alone 2206840) but the pool is 33554432 bytes"},
        Bad{"headroom_exceeds_small_pool", many_ports(2, 100, 5, ", pool: {size: 200000}"), "buffer.pool.size", "but the pool is 200000 bytes"},
        Bad{"cnp_queue_out_of_range", "qos: {cnp_queue: 8}\n" + kTwoPorts, "qos.cnp_queue", "out of range [0, 7], got 8"},
        Bad{"pfc_quanta_zero", "qos: {pfc_quanta: 0}\n" + kTwoPorts, "qos.pfc_quanta", "out of range [1, 65535]"},
        Bad{"pfc_enable_string_bad", "qos: {pfc_enable: \"3,9\"}\n" + kTwoPorts, "qos.pfc_enable", "'9' is not a priority 0..7"},
        Bad{"pfc_enable_list_bad", "qos: {pfc_enable: [3, 8]}\n" + kTwoPorts, "qos.pfc_enable[1]", "out of range"},
        Bad{"tc_to_pg_out_of_range", "qos: {tc_to_pg: {3: 8}}\n" + kTwoPorts, "qos.tc_to_pg.3", "out of range"},
        Bad{"pfc_to_queue_out_of_range", "qos: {pfc_to_queue: {9: 1}}\n" + kTwoPorts, "qos.pfc_to_queue", "out of range"},
        Bad{"qos_unknown_key", "qos: {pfc_enabled: [3]}\n" + kTwoPorts, "qos.pfc_enabled", "unknown key"},
        Bad{"cable_not_metres", with_port("name: b, devargs: x, cable_length_m: 5km"), "ports[1].cable_length_m", "expected metres"},
        Bad{"cable_negative", "buffer: {cable_length_m: -1}\n" + kTwoPorts, "buffer.cable_length_m", "out of range"},
        Bad{"flow_priority_out_of_range", with_port("name: b, host: {ip: 10.0.0.3, mac: \"02:00:00:00:00:01\", flows: [{dst: 10.0.0.2, priority: 8}]}"),
            "ports[1].host.flows[0].priority", "out of range [0, 7], got 8"},
        Bad{"storm_without_priority", with_port("name: b, host: {ip: 10.0.0.3, mac: \"02:00:00:00:00:01\", pfc_storm: {start_s: 1}}"),
            "ports[1].host.pfc_storm.priority", "missing"},
        Bad{"storm_stops_before_it_starts", with_port("name: b, host: {ip: 10.0.0.3, mac: \"02:00:00:00:00:01\", pfc_storm: {priority: 3, start_s: 2, stop_s: 1}}"),
            "ports[1].host.pfc_storm.stop_s", "must be after start_s"},
        Bad{"size_on_a_pg_profile", kPfc34 + "buffer: {profiles: {p: {xoff: 65536, xon: 32768, size: 1518}}, pg: {3: p, 4: p}}\n" + kTwoPorts,
            "buffer.profiles.p.size", "size is a queue profile's reservation"},
        Bad{"queue_sizes_exceed_pool", "buffer: {pool: {size: 4096}, profiles: {q: {dynamic_th: 1, size: 1518}}, queue: {0: q, 1: q}}\n" + kTwoPorts,
            "buffer.pool.size", "queue profiles reserve 6072 bytes"},
        // Routes are compared by prefix, not by text; host bits are refused, as `ip route` does.
        Bad{"duplicate_route_longer_length_text", with_port("name: b, devargs: x", "routes:\n  - {prefix: 10.0.0.0/24, port: b, mac: \"02:00:00:00:00:01\"}\n"
                                                                                  "  - {prefix: 10.0.0.0/024, port: a, mac: \"02:00:00:00:00:01\"}\n"),
            "routes[1].prefix", "duplicate route 10.0.0.0/024: the prefix of routes[0] (10.0.0.0/24)"},
        Bad{"duplicate_route_ipv6_spelling", with_port("name: b, devargs: x", "routes:\n  - {prefix: \"2001:db8::/32\", port: b, mac: \"02:00:00:00:00:01\"}\n"
                                                                            "  - {prefix: 10.0.0.0/8, port: b, mac: \"02:00:00:00:00:01\"}\n"
                                                                            "  - {prefix: \"2001:0db8:0::/32\", port: a, mac: \"02:00:00:00:00:01\"}\n"),
            "routes[2].prefix", "duplicate route 2001:0db8:0::/32: the prefix of routes[0] (2001:db8::/32)"},
        Bad{"duplicate_route_no_length", with_port("name: b, devargs: x", "routes:\n  - {prefix: 10.0.0.1/32, port: b, mac: \"02:00:00:00:00:01\"}\n"
                                                                         "  - {prefix: 10.0.0.1, port: a, mac: \"02:00:00:00:00:01\"}\n"),
            "routes[1].prefix", "duplicate route 10.0.0.1: the prefix of routes[0] (10.0.0.1/32)"},
        Bad{"route_host_bits_set", with_port("name: b, devargs: x", "routes:\n  - {prefix: 10.0.0.0/24, port: b, mac: \"02:00:00:00:00:01\"}\n"
                                                                   "  - {prefix: 10.0.0.1/24, port: a, mac: \"02:00:00:00:00:01\"}\n"),
            "routes[1].prefix", "10.0.0.1/24 has host bits set (did you mean 10.0.0.0/24?)"},
        Bad{"route_host_bits_set_ipv6", with_port("name: b, devargs: x", "routes:\n  - {prefix: \"2001:0db8:ff::1/33\", port: b, mac: \"02:00:00:00:00:01\"}\n"),
            "routes[0].prefix", "2001:0db8:ff::1/33 has host bits set (did you mean 2001:db8::/33?)"},
        Bad{"route_host_bits_set_default", with_port("name: b, devargs: x", "routes:\n  - {prefix: 1.2.3.4/0, port: b, mac: \"02:00:00:00:00:01\"}\n"),
            "routes[0].prefix", "1.2.3.4/0 has host bits set (did you mean 0.0.0.0/0?)"},
        // A route's own group is named route:PREFIX; a named group may not take such a name.
        Bad{"group_name_reserved", with_port("name: b, devargs: x", "nexthop_groups:\n  - {name: \"route:10.9.0.0/16\", members: [{port: b, mac: \"02:00:00:00:00:01\"}]}\n"
                                                                   "routes:\n  - {prefix: 10.9.0.0/16, port: a, mac: \"02:00:00:00:00:01\"}\n"),
            "nexthop_groups[0].name", "'route:10.9.0.0/16': names starting with 'route:' are reserved"},
        Bad{"route_nexthops_over_group_limit", with_port("name: b, devargs: x", "routes:\n  - {prefix: 10.0.0.0/8, nexthops: [" + nexthops(65) + "]}\n"),
            "routes[0].nexthops", "65 next hops; a route has at most 64"},
        Bad{"queue_threshold_fraction", "load_view: {queue_thresholds_bytes: [1, 2.5, 4, 8, 16, 32, 64]}\n" + kTwoPorts,
            "load_view.queue_thresholds_bytes[1]", "expected an integer"},
        // limits: the route tables' sizes.
        Bad{"limits_unknown_key", "limits: {routes: 5}\n" + kTwoPorts, "limits.routes", "unknown key"},
        Bad{"limits_routes_v4_zero", "limits: {routes_v4: 0}\n" + kTwoPorts, "limits.routes_v4", "out of range [1, 16777216], got 0"},
        Bad{"limits_routes_v6_too_many", "limits: {routes_v6: 4194305}\n" + kTwoPorts, "limits.routes_v6", "out of range [1, 4194304]"},
        Bad{"limits_tbl8_v4_too_many", "limits: {tbl8_v4: 16777217}\n" + kTwoPorts, "limits.tbl8_v4", "out of range [1, 16777216]"},
        Bad{"limits_tbl8_v6_too_many", "limits: {tbl8_v6: 2097153}\n" + kTwoPorts, "limits.tbl8_v6", "out of range [1, 2097152]"},
        Bad{"limits_fraction", "limits: {routes_v4: 10.5}\n" + kTwoPorts, "limits.routes_v4", "expected an integer"},
        Bad{"limits_routes_v4_exceeded", "limits: {routes_v4: 2}\n" + with_port("name: b, devargs: x",
                "routes:\n  - {prefix: 10.0.0.0/8, port: b, mac: \"02:00:00:00:00:01\"}\n  - {prefix: \"::/0\", port: b, mac: \"02:00:00:00:00:01\"}\n"
                "  - {prefix: 10.1.0.0/16, port: b, mac: \"02:00:00:00:00:01\"}\n  - {prefix: 0.0.0.0/0, port: b, mac: \"02:00:00:00:00:01\"}\n"),
            "limits.routes_v4", "3 IPv4 routes (the default route counts too) but limits.routes_v4 is 2"},
        Bad{"limits_routes_v6_exceeded_by_default", "limits: {routes_v4: 10}\n" + with_port("name: b, devargs: x", "routes:\n" + v6_routes(16385)),
            "limits.routes_v6", "16385 IPv6 routes (the default route counts too) but limits.routes_v6 is 16384 (the default)"},
        Bad{"limits_tbl8_v4_exceeded", "limits: {tbl8_v4: 2}\n" + with_port("name: b, devargs: x",
                "routes:\n  - {prefix: 10.0.0.1/32, port: b, mac: \"02:00:00:00:00:01\"}\n  - {prefix: 10.0.0.128/25, port: b, mac: \"02:00:00:00:00:01\"}\n"
                "  - {prefix: 10.0.1.0/24, port: b, mac: \"02:00:00:00:00:01\"}\n  - {prefix: 10.0.1.2/31, port: b, mac: \"02:00:00:00:00:01\"}\n"
                "  - {prefix: 10.0.2.2/31, port: b, mac: \"02:00:00:00:00:01\"}\n"),
            "limits.tbl8_v4", "routes need 3 IPv4 tbl8 groups (one per /24 holding a longer prefix) but limits.tbl8_v4 is 2"},
        Bad{"limits_tbl8_v6_exceeded", "limits: {tbl8_v6: 5}\n" + with_port("name: b, devargs: x",
                "routes:\n  - {prefix: \"2001:db8::/48\", port: b, mac: \"02:00:00:00:00:01\"}\n  - {prefix: \"2001:db8:0:1::/64\", port: b, mac: \"02:00:00:00:00:01\"}\n"
                "  - {prefix: \"2001:db8:100::/48\", port: b, mac: \"02:00:00:00:00:01\"}\n"),
            "limits.tbl8_v6", "routes need 6 IPv6 tbl8 groups (one per 8 bits of a prefix beyond its first 24, shared by prefixes that agree) but limits.tbl8_v6 is 5"},
        // switch.pipeline: a file of a pipeline's size, never a device or a directory.
        Bad{"pipeline_device", "switch: {pipeline: /dev/zero}\n" + kTwoPorts, "switch.pipeline", "'/dev/zero' is not a file"},
        Bad{"pipeline_directory", "switch: {pipeline: /tmp}\n" + kTwoPorts, "switch.pipeline", "'/tmp' is not a file"},
        Bad{"pipeline_missing", "switch: {pipeline: /nonexistent/p.yaml}\n" + kTwoPorts, "switch.pipeline", "is not a file"},
        // ports[].faults: the fault model.
        Bad{"faults_unknown_key", with_port("name: b, devargs: x, faults: {loss: 0.1}"), "ports[1].faults.loss", "unknown key"},
        Bad{"faults_probability", with_port("name: b, devargs: x, faults: {drop: 1.5}"), "ports[1].faults.drop", "out of range [0, 1], got 1.5"},
        Bad{"faults_direction", with_port("name: b, devargs: x, faults: {direction: in}"), "ports[1].faults.direction",
            "expected 'rx', 'tx' or 'both'"},
        Bad{"faults_stuck_backwards", with_port("name: b, devargs: x, faults: {stuck: {start_s: 2, stop_s: 1}}"),
            "ports[1].faults.stuck.stop_s", "must be after start_s"},
        Bad{"faults_stuck_priority", with_port("name: b, devargs: x, faults: {stuck: {pfc: [3, 8]}}"), "ports[1].faults.stuck.pfc[1]",
            "out of range [0, 7], got 8"},
        // mirror_sessions: SPAN sessions.
        Bad{"mirror_unknown_key", "mirror_sessions: [{name: s, dst_port: b, ports: [a]}]\n" + kTwoPorts, "mirror_sessions[0].ports", "unknown key"},
        Bad{"mirror_no_dst", "mirror_sessions: [{name: s, rx_ports: [a]}]\n" + kTwoPorts, "mirror_sessions[0].dst_port", "missing"},
        Bad{"mirror_unknown_port", "mirror_sessions: [{name: s, dst_port: b, rx_ports: [a, c]}]\n" + kTwoPorts, "mirror_sessions[0].rx_ports[1]",
            "port 'c' is referenced but not defined in ports"},
        Bad{"mirror_dst_is_source", "mirror_sessions: [{name: s, dst_port: b, tx_ports: [b]}]\n" + kTwoPorts, "mirror_sessions[0].tx_ports[0]",
            "the destination port cannot be a source of its session"},
        Bad{"mirror_watched_twice", "mirror_sessions: [{name: s, dst_port: b, rx_ports: [a]}, {name: t, dst_port: b, rx_ports: [a]}]\n" + kTwoPorts,
            "mirror_sessions[1].rx_ports[0]", "this port's rx is already watched by session 's'"},
        Bad{"mirror_same_name", "mirror_sessions: [{name: s, dst_port: b}, {name: s, dst_port: a}]\n" + kTwoPorts, "mirror_sessions[1].name",
            "a second session 's'"},
        Bad{"mirror_short_truncate", "mirror_sessions: [{name: s, dst_port: b, rx_ports: [a], truncate: 13}]\n" + kTwoPorts,
            "mirror_sessions[0].truncate", "0 (whole frames) or 14 to 65535"},
        Bad{"mirror_lossless_queue", kPfc34 + "mirror_sessions: [{name: s, dst_port: b, rx_ports: [a], queue: 4}]\n" + kTwoPorts,
            "mirror_sessions[0].queue", "queue 4 is lossless"},
        // Router interfaces, next hops by IP, CoPP and neighbour settings (issue 21).
        Bad{"addr_no_length", with_port("name: b, devargs: x, ipv4: 10.0.1.1"), "ports[1].ipv4", "give the prefix length too"},
        Bad{"addr_wrong_family", with_port("name: b, devargs: x, ipv4: \"2001:db8::1/64\""), "ports[1].ipv4", "is not an IPv4 address"},
        Bad{"addr_v6_in_v4_list", with_port("name: b, devargs: x, ipv6: [10.0.1.1/24]"), "ports[1].ipv6[0]", "is not an IPv6 address"},
        Bad{"addr_network", with_port("name: b, devargs: x, ipv4: 10.0.1.0/24"), "ports[1].ipv4", "the subnet's own address"},
        Bad{"addr_broadcast", with_port("name: b, devargs: x, ipv4: 10.0.1.255/24"), "ports[1].ipv4", "the subnet's broadcast address"},
        Bad{"addr_twice", with_port("name: b, devargs: x, ipv4: [10.0.1.1/24, 10.0.1.1/16]"), "ports[1].ipv4[1]", "is given twice"},
        Bad{"addr_overlap", "ports:\n  - {name: a, devargs: x, ipv4: 10.0.1.1/24}\n  - {name: b, devargs: y, ipv4: 10.0.0.1/16}\n",
            "ports[1].ipv4", "10.0.0.1/16 overlaps port a's 10.0.1.1/24"},
        Bad{"addr_not_text", with_port("name: b, devargs: x, ipv4: {a: 1}"), "ports[1].ipv4", ""},
        Bad{"icmp_unreachable_not_bool", with_port("name: b, devargs: x, icmp_unreachable: maybe"), "ports[1].icmp_unreachable",
            "expected true or false"},
        Bad{"via_off_subnet", with_port("name: b, devargs: x, ipv4: 10.0.1.1/24", "routes: [{prefix: 10.9.0.0/16, via: 10.0.2.2}]\n"),
            "routes[0].via", "no port's subnet holds 10.0.2.2"},
        Bad{"via_is_ours", with_port("name: b, devargs: x, ipv4: 10.0.1.1/24", "routes: [{prefix: 10.9.0.0/16, via: 10.0.1.1}]\n"),
            "routes[0].via", "10.0.1.1 is port b's own address"},
        Bad{"via_with_mac", with_port("name: b, devargs: x, ipv4: 10.0.1.1/24", "routes: [{prefix: 10.9.0.0/16, via: 10.0.1.2, mac: \"02:00:00:00:00:01\"}]\n"),
            "routes[0].mac", "has its MAC found by ARP"},
        Bad{"via_wrong_port", with_port("name: b, devargs: x, ipv4: 10.0.1.1/24", "routes: [{prefix: 10.9.0.0/16, nexthops: [{ip: 10.0.1.2, port: a}]}]\n"),
            "routes[0].nexthops[0].port", "10.0.1.2 is in port b's subnet, not port a's"},
        Bad{"via_not_ip", with_port("name: b, devargs: x, ipv4: 10.0.1.1/24", "routes: [{prefix: 10.9.0.0/16, via: gateway}]\n"),
            "routes[0].via", "not an IPv4 or IPv6 address: 'gateway'"},
        Bad{"route_on_own_address", with_port("name: b, devargs: x, ipv4: 10.0.1.1/24", "routes: [{prefix: 10.0.1.0/24, port: b, mac: \"02:00:00:00:00:01\"}]\n"),
            "routes", "route 10.0.1.0/24: port b's address 10.0.1.1/24 makes this route itself"},
        Bad{"copp_unknown_class", "copp: {bgp: 100}\n" + kTwoPorts, "copp.bgp", "unknown key"},
        Bad{"copp_negative", "copp: {arp: -1}\n" + kTwoPorts, "copp.arp", "out of range"},
        Bad{"copp_burst_zero", "copp: {arp: {pps: 10, burst: 0}}\n" + kTwoPorts, "copp.arp.burst", "out of range"},
        Bad{"neighbours_unknown", "neighbours: {reachable: 3}\n" + kTwoPorts, "neighbours.reachable", "unknown key"},
        Bad{"neighbours_zero_probes", "neighbours: {mcast_probes: 0}\n" + kTwoPorts, "neighbours.mcast_probes", "out of range"},
        // The bridge: VLANs and port membership.
        Bad{"vlan_out_of_range", "vlans: [4095]\n" + kTwoPorts, "vlans[0]", "out of range"},
        Bad{"vlan_twice", "vlans: [10, 10]\n" + kTwoPorts, "vlans[1]", "VLAN 10 is given twice"},
        Bad{"vlan_undeclared", "vlans: [10]\n" + with_port("name: b, devargs: x, vlan: {access: 20}"), "ports[1].vlan.access",
            "VLAN 20 is not declared in vlans"},
        Bad{"vlan_access_and_tagged", "vlans: [10]\n" + with_port("name: b, devargs: x, vlan: {access: 10, tagged: [10]}"),
            "ports[1].vlan.tagged[0]", "a port carries a VLAN untagged or tagged, not both"},
        Bad{"vlan_tagged_twice", "vlans: [10, 20]\n" + with_port("name: b, devargs: x, vlan: {tagged: [20, 20]}"), "ports[1].vlan.tagged[1]",
            "VLAN 20 is given twice"},
        Bad{"vlan_unknown_key", "vlans: [10]\n" + with_port("name: b, devargs: x, vlan: {native: 10}"), "ports[1].vlan.native", "unknown key"},
        Bad{"vlan_with_address", "vlans: [10]\n" + with_port("name: b, devargs: x, ipv4: 10.0.1.1/24, vlan: {access: 10}"), "ports[1].vlan",
            "a bridged port has no addresses of its own"},
        // VLAN interfaces (SVIs).
        Bad{"svi_without_address", "vlans: [{id: 10}]\n" + kTwoPorts, "vlans[0]", "a VLAN interface needs an address"},
        Bad{"svi_without_id", "vlans: [{ipv4: 10.0.10.1/24}]\n" + kTwoPorts, "vlans[0].id", "missing"},
        Bad{"svi_unknown_key", "vlans: [{id: 10, ipv4: 10.0.10.1/24, lldp: true}]\n" + kTwoPorts, "vlans[0].lldp", "unknown key"},
        Bad{"svi_twice", "vlans: [10, {id: 10, ipv4: 10.0.10.1/24}]\n" + kTwoPorts, "vlans[1].id", "VLAN 10 is given twice"},
        Bad{"svi_network_address", "vlans: [{id: 10, ipv4: 10.0.10.0/24}]\n" + kTwoPorts, "vlans[0].ipv4",
            "is the subnet's own address"},
        Bad{"svi_overlaps_port", "vlans: [{id: 10, ipv4: 10.0.1.9/16}]\n" + with_port("name: b, devargs: x, ipv4: 10.0.1.1/24"),
            "vlans[0].ipv4", "10.0.1.9/16 overlaps port b's 10.0.1.1/24"},
        Bad{"svi_overlaps_svi", "vlans: [{id: 10, ipv4: 10.0.10.1/24}, {id: 20, ipv4: 10.0.10.2/25}]\n" + kTwoPorts, "vlans[1].ipv4",
            "overlaps VLAN 10's 10.0.10.1/24"},
        Bad{"svi_via_with_port", "vlans: [{id: 10, ipv4: 10.0.10.1/24}]\n" + with_port("name: b, devargs: x, vlan: {access: 10}",
            "routes:\n  - {prefix: 10.9.0.0/16, via: 10.0.10.7, port: b}\n"), "routes[0].port", "is in VLAN 10's subnet"},
        Bad{"svi_via_own_address", "vlans: [{id: 10, ipv4: 10.0.10.1/24}]\n" + with_port("name: b, devargs: x",
            "routes:\n  - {prefix: 10.9.0.0/16, via: 10.0.10.1}\n"), "routes[0].via", "is VLAN 10's own address"},
        // The emulated NIC and its queue pairs.
        Bad{"nic_mtu_not_ib", "ports:\n  - {name: a, host: {ip: 10.0.0.2, mac: \"02:00:00:00:00:aa\", nic: {mtu: 1500}}}\n", "ports[0].host.nic.mtu",
            "an IB path MTU is 256, 512, 1024, 2048 or 4096"},
        Bad{"nic_cc_unknown", "ports:\n  - {name: a, host: {ip: 10.0.0.2, mac: \"02:00:00:00:00:aa\", nic: {cc: timely}}}\n", "ports[0].host.nic.cc",
            "expected 'dcqcn' or 'none'"},
        Bad{"nic_dcqcn_out_of_range", "ports:\n  - {name: a, host: {ip: 10.0.0.2, mac: \"02:00:00:00:00:aa\", nic: {dcqcn: {rpg_threshold: 40}}}}\n",
            "ports[0].host.nic.dcqcn.rpg_threshold", "out of range"},
        Bad{"nic_dcqcn_unknown", "ports:\n  - {name: a, host: {ip: 10.0.0.2, mac: \"02:00:00:00:00:aa\", nic: {dcqcn: {kmin: 4}}}}\n",
            "ports[0].host.nic.dcqcn.kmin", "unknown key"},
        Bad{"qp_message_zero", "ports:\n  - {name: a, host: {ip: 10.0.0.2, mac: \"02:00:00:00:00:aa\", qps: [{dst: 10.0.0.3, message_bytes: 0}]}}\n",
            "ports[0].host.qps[0].message_bytes", "out of range"},
        Bad{"qp_to_itself", "ports:\n  - {name: a, host: {ip: 10.0.0.2, mac: \"02:00:00:00:00:aa\", qps: [{dst: 10.0.0.2}]}}\n",
            "ports[0].host.qps[0].dst", "the host's own address"},
        Bad{"qp_twice", "ports:\n  - {name: a, host: {ip: 10.0.0.2, mac: \"02:00:00:00:00:aa\", qps: [{dst: 10.0.0.3, qpn: 5}, {dst: 10.0.0.3, qpn: 5}]}}\n",
            "ports[0].host.qps[1].qpn", "given twice"},
        Bad{"qp_bad_op", "ports:\n  - {name: a, host: {ip: 10.0.0.2, mac: \"02:00:00:00:00:aa\", qps: [{dst: 10.0.0.3, op: read}]}}\n",
            "ports[0].host.qps[0].op", "expected 'write' or 'send'"},
        Bad{"nic_port_no_gateway", "ports:\n  - {name: n, kind: nic, devargs: x, host: {ip: 10.0.0.2, mac: \"02:00:00:00:00:aa\"}}\n",
            "ports[0].host.gateway", "the MAC of the next hop on the link"},
        Bad{"nic_port_no_devargs", "ports:\n  - {name: n, kind: nic, host: {ip: 10.0.0.2, mac: \"02:00:00:00:00:aa\", gateway: \"02:00:00:00:00:01\"}}\n",
            "ports[0].devargs", "a nic port is an emulated host on a DPDK ethdev"},
        Bad{"gateway_on_emulated_host", "ports:\n  - {name: a, host: {ip: 10.0.0.2, mac: \"02:00:00:00:00:aa\", gateway: \"02:00:00:00:00:01\"}}\n",
            "ports[0].host.gateway", "only a nic port's host has a gateway"},
        Bad{"bridge_unknown_key", "bridge: {aging: 3}\n" + kTwoPorts, "bridge.aging", "unknown key"},
        Bad{"bridge_fdb_too_small", "bridge: {fdb_size: 3}\n" + kTwoPorts, "bridge.fdb_size", "out of range"},
        Bad{"empty_file", "", "(top level)", "expected a map of sections"},
        Bad{"empty_key", "\"\": 5\n" + kTwoPorts, "\"\"", "unknown key"},
        Bad{"buffer_is_a_scalar", "buffer: 5\n" + kTwoPorts, "buffer", "expected a map"},
        Bad{"key_is_a_list", with_port("name: b, devargs: x, ? [q]: 1"), "ports[1]", "a key must be a name, not a list or a map"},
        Bad{"top_key_is_a_map", "? {a: 1}\n: x\n" + kTwoPorts, "(top level)", "a key must be a name"},
        Bad{"scalar_file", "42\n", "(top level)", "expected a map of sections"},
        Bad{"syntax", "ports: [\n", "(syntax)", ""}),
    [](const ::testing::TestParamInfo<Bad>& i) { return std::string(i.param.name); });

// route_prefix (routes in a file, route.add) refuses host bits; prefix (route.list's filter,
// a P4 match key) takes any prefix.
TEST(ConfigReader, RoutePrefixRefusesHostBitsPrefixTakesThem) {
  const ConfigReader rd("request");
  EXPECT_EQ(rd.prefix(YAML::Node("10.0.0.1/24"), "prefix").depth, 24);
  EXPECT_EQ(rd.prefix(YAML::Node("2001:db8::1/16"), "prefix").depth, 16);
  EXPECT_EQ(rd.route_prefix(YAML::Node("10.0.0.0/24"), "prefix").depth, 24);
  EXPECT_EQ(rd.route_prefix(YAML::Node("10.0.0.1"), "prefix").depth, 32);
  EXPECT_EQ(rd.route_prefix(YAML::Node("2001:db8::/32"), "prefix").depth, 32);
  for (auto [text, reason] : {std::pair{"10.0.0.1/24", "10.0.0.1/24 has host bits set (did you mean 10.0.0.0/24?)"},
                              std::pair{"10.255.0.0/9", "10.255.0.0/9 has host bits set (did you mean 10.128.0.0/9?)"},
                              std::pair{"2001:db8::1/127", "2001:db8::1/127 has host bits set (did you mean 2001:db8::/127?)"}}) {
    try {
      rd.route_prefix(YAML::Node(text), "prefix");
      ADD_FAILURE() << text << " accepted";
    } catch (const ConfigError& e) {
      EXPECT_EQ(e.path, "prefix");
      EXPECT_EQ(e.reason, reason);
    }
  }
}

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

TEST(ConfigLoader, LosslessErrorsPointAtTheLine) {
  // The headroom check runs per port, after the file is read; it still points at the profile.
  const std::string y =
      "qos:\n  pfc_enable: \"3\"\n"
      "buffer:\n  pool: {size: 60000}\n  profiles:\n    p: {xoff: 65536, xon: 32768,\n        headroom: 30000}\n  pg: {3: p}\n"
      "ports:\n  - {name: a, host: {ip: 10.0.0.2, mac: \"02:00:00:00:00:aa\"}}\n";
  try {
    load_config_text(y, "f.yaml");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.line, 7) << e.what();
    EXPECT_EQ(e.path, "buffer.profiles.p.headroom");
  }
  // With enough headroom, the pool check points at buffer.pool.size.
  std::string fits = y;
  fits.replace(fits.find("30000"), 5, "40000");
  try {
    load_config_text(fits, "f.yaml");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.line, 4) << e.what();
    EXPECT_EQ(e.path, "buffer.pool.size");
    EXPECT_NE(e.reason.find("reserve 105536 bytes"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace rs
