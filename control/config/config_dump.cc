// dump_config: a SwitchConfig back to the loader's YAML (see config_dump.h). Sections come in
// the order the loader reads them (switch, qos, ports, the lossless sections, mirror_sessions,
// nexthop_groups, load_view, link_events, limits, routes); within a section, keys in the
// loader's order.
#include "control/config/config_dump.h"

#include <arpa/inet.h>
#include <fmt/core.h>
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <stdexcept>
#include <string_view>
#include <tuple>

#include "control/config/config_reader.h"
#include "control/config/config_writer.h"
#include "control/config/routing_config.h"
#include "dataplane/routing/routing_policy.h"
#include "dataplane/switch/mirror_sessions.h"

namespace rs {
namespace {
using namespace dump;

bool wred_eq(const WredProfile& a, const WredProfile& b) {
  return a.enabled == b.enabled && a.wred_drop == b.wred_drop && a.ecn_mark == b.ecn_mark && a.kmin == b.kmin && a.kmax == b.kmax &&
         a.pmax_percent == b.pmax_percent;
}
bool any(const std::array<bool, 8>& a) { return std::find(a.begin(), a.end(), true) != a.end(); }
bool any_by_tc(const GroupSpec& g) { return std::any_of(g.policy_by_tc.begin(), g.policy_by_tc.end(), [](auto& p) { return p.has_value(); }); }

void write_switch(Out& o, const SwitchConfig& cfg) {
  o.begin_map("switch").kv("workers", cfg.workers).kv("seed", cfg.seed).kv("mbufs", cfg.mbufs).kv("duration_s", real(cfg.duration_s));
  // Empty text is the built-in pipeline, which has no key. A file is named as the loader
  // stored it (already joined to the config's directory): the loader joins a relative path
  // to the directory of the file being loaded again, so an absolute path is what survives a
  // reload from anywhere. Its content is state too: its FNV-1a digest goes in a comment.
  if (!cfg.pipeline_text.empty()) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (unsigned char c : cfg.pipeline_text) h = (h ^ c) * 0x100000001b3ull;
    o.ks("pipeline", cfg.pipeline_source).e << YAML::Comment(fmt::format("text fnv1a-64 {:016x}", h));
  }
  o.end_map();
}

void write_qos(Out& o, const SwitchConfig& cfg, const PortLosslessConfig& l0) {
  const QosMaps& q = cfg.qos;
  const MmuConfig& m = cfg.mmu;
  // Every map in full: the dump does not lean on the loader's defaults.
  o.begin_map("qos").kv("trust", q.trust == QosTrust::Pcp ? "pcp" : "dscp");
  o.index_map("dscp_to_tc", q.dscp_to_tc).index_map("pcp_to_tc", q.pcp_to_tc).index_map("tc_to_queue", q.tc_to_queue);
  if (q.cnp_queue >= 0) o.kv("cnp_queue", static_cast<int>(q.cnp_queue));  // -1 ("like any packet") is the key's absence
  std::vector<int> pfc;
  for (int p = 0; p < 8; ++p)
    if (m.pfc_enable >> p & 1) pfc.push_back(p);
  o.list("pfc_enable", pfc, [](int p) { return p; }).index_map("tc_to_pg", m.tc_to_pg).index_map("pfc_to_queue", m.pfc_to_queue);
  o.kv("pfc_quanta", l0.pfc_quanta).end_map();  // one key for every port's (check_port_wide)
}

// The loader copies the switch-wide lossless keys into every port; a file cannot say them per
// port, so ports that differ would be written as port 0 and silently lose their value.
void check_port_wide(const SwitchConfig& cfg) {
  for (std::size_t i = 1; i < cfg.ports.size(); ++i) {
    const PortLosslessConfig &a = cfg.ports[0].lossless, &b = cfg.ports[i].lossless;
    auto differs = [&](const std::string& f, const char* key) {
      unrepresentable(fmt::format("ports[{}].lossless.{}", i, f), fmt::format("differs from ports[0]'s: {} sets it for every port", key));
    };
    if (a.pfc_quanta != b.pfc_quanta) differs("pfc_quanta", "qos.pfc_quanta");
    if (a.dynamic_th != b.dynamic_th || a.reserved != b.reserved) differs(a.reserved != b.reserved ? "reserved" : "dynamic_th", "buffer.queue");
    for (int q = 0; q < 8; ++q)
      if (!wred_eq(a.wred[q], b.wred[q])) differs(fmt::format("wred[{}]", q), "queue_wred");
  }
}

// A profile per index that has one, named after it (pg3, queue0, wred3: names follow from the
// state alone), and the `{index: name}` map that attaches them.
void profile_map(Out& o, const char* key, const char* prefix, const std::array<bool, 8>& has) {
  if (!any(has)) return;
  o.begin_map(key, true);
  for (std::size_t i = 0; i < 8; ++i)
    if (has[i]) o.ikey(i).e << fmt::format("{}{}", prefix, i);
  o.end_map();
}

// The lossless PG settings back as one buffer.pg profile per lossless PG. headroom_min and
// `lossless` have no key: the loader derives them (from speed, cable length and mtu; from
// pfc_enable), and the reload derives them again from the same inputs. A headroom equal to
// every port's minimum is left out (the loader's default for a profile without one, which
// also covers pfc_enable's built-in profile); another must be one value for every port.
struct PgProfile {
  uint64_t xoff, xon;
  std::optional<uint64_t> headroom;
};
std::array<std::optional<PgProfile>, 8> pg_profiles(const SwitchConfig& cfg) {
  std::array<std::optional<PgProfile>, 8> pgs;
  for (std::size_t g = 0; g < 8 && !cfg.ports.empty(); ++g) {
    if (!(cfg.mmu.pfc_enable >> g & 1)) continue;
    const PgSettings& s0 = cfg.ports[0].lossless.pg[g];
    bool all_min = true, one_value = true;
    for (std::size_t i = 0; i < cfg.ports.size(); ++i) {
      const PgSettings& s = cfg.ports[i].lossless.pg[g];
      if (s.xoff != s0.xoff || s.xon != s0.xon)
        unrepresentable(fmt::format("ports[{}].lossless.pg[{}]", i, g), "xoff/xon differ from ports[0]'s: buffer.pg sets them for every port");
      all_min &= s.headroom == s.headroom_min;
      one_value &= s.headroom == s0.headroom && s.headroom >= s.headroom_min;
    }
    if (!all_min && !one_value)
      unrepresentable(fmt::format("ports[*].lossless.pg[{}].headroom", g), "neither every port's computed minimum nor one value at or above each");
    pgs[g] = PgProfile{s0.xoff, s0.xon, all_min ? std::nullopt : std::optional<uint64_t>(s0.headroom)};
  }
  return pgs;
}

// buffer, wred_profiles, queue_wred, pfcwd.
void write_lossless(Out& o, const SwitchConfig& cfg, const PortLosslessConfig& l0) {
  const MmuConfig& m = cfg.mmu;
  const auto pgs = pg_profiles(cfg);
  std::array<bool, 8> has_pg{}, has_queue{}, has_wred{};
  for (std::size_t q = 0; q < 8; ++q) {
    has_pg[q] = pgs[q].has_value();
    has_queue[q] = l0.dynamic_th[q] != kNoDynamicTh;
    has_wred[q] = l0.wred[q].enabled;
    if (!has_queue[q] && l0.reserved[q]) unrepresentable(fmt::format("ports[0].lossless.reserved[{}]", q), "a queue profile's size needs its dynamic_th");
  }
  o.begin_map("buffer").begin_map("pool", true);
  if (m.pool.size) o.kv("size", m.pool.size);  // 0 (sized by the Switch) is the key's absence
  o.kv("cell_size", m.pool.cell_size).end_map().kv("mtu", m.pool.mtu);
  const bool profiles = any(has_pg) || any(has_queue);
  if (profiles) o.begin_map("profiles");
  for (std::size_t g = 0; g < 8; ++g) {
    if (!pgs[g]) continue;
    o.begin_map(fmt::format("pg{}", g).c_str(), true).kv("xoff", pgs[g]->xoff).kv("xon", pgs[g]->xon);
    if (pgs[g]->headroom) o.kv("headroom", *pgs[g]->headroom);
    o.end_map();
  }
  for (std::size_t q = 0; q < 8; ++q) {
    if (!has_queue[q]) continue;
    o.begin_map(fmt::format("queue{}", q).c_str(), true).kv("dynamic_th", static_cast<int>(l0.dynamic_th[q]));
    if (l0.reserved[q]) o.kv("size", l0.reserved[q]);  // 0 reserves nothing, as no size does
    o.end_map();
  }
  if (profiles) o.end_map();
  profile_map(o, "pg", "pg", has_pg);
  profile_map(o, "queue", "queue", has_queue);
  o.end_map();

  if (any(has_wred)) o.begin_map("wred_profiles");
  for (std::size_t q = 0; q < 8; ++q) {
    const WredProfile& w = l0.wred[q];
    if (w.enabled)  // several SONiC modes give one flag (green marked or not): these two are canonical
      o.begin_map(fmt::format("wred{}", q).c_str(), true).kv("wred_green_enable", w.wred_drop).kv("ecn", w.ecn_mark ? "ecn_all" : "ecn_none")
          .kv("green_min_threshold", w.kmin).kv("green_max_threshold", w.kmax).kv("green_drop_probability", w.pmax_percent).end_map();
  }
  if (any(has_wred)) o.end_map();
  profile_map(o, "queue_wred", "wred", has_wred);

  const PfcwdConfig& wd = m.pfcwd;
  if (!wd.enabled) return;  // the section's presence is what turns the watchdog on
  auto ms = [](uint64_t ns, const char* f) {
    if (ns % 1'000'000 || ns == 0 || ns > 600'000ull * 1'000'000)
      unrepresentable(fmt::format("mmu.pfcwd.{}", f), fmt::format("{} ns is not a whole number of milliseconds in 1..600000", ns));
    return ns / 1'000'000;
  };
  static const char* kAction[] = {"drop", "forward", "alert"};
  o.begin_map("pfcwd", true).kv("detection_time", ms(wd.detection_ns, "detection_ns")).kv("restoration_time", ms(wd.restoration_ns, "restoration_ns"));
  o.kv("poll_interval", ms(wd.poll_ns, "poll_ns")).kv("action", kAction[static_cast<int>(wd.action)]).end_map();
}

void write_policy(Out& o, const PolicySpec& p) {
  if (p.params.empty()) return void(o.text(p.name));
  const int id = RoutingPolicyRegistry::find(p.name);
  o.begin_map(nullptr, true).ks("name", p.name);
  const auto specs = id >= 0 ? RoutingPolicyRegistry::at(static_cast<std::size_t>(id)).params : std::span<const ParamSpec>{};
  for (auto& [key, v] : p.params) {  // in the order given: PolicySpec keeps it
    o.e << YAML::Key;
    o.text(key).e << YAML::Value;
    // Values in the words parse_param reads: true/false, a choice's name, else the number.
    const int k = param_index(specs, key);
    const ParamSpec* ps = k >= 0 ? &specs[static_cast<std::size_t>(k)] : nullptr;
    if (ps && ps->type == ParamType::Bool) o.e << (v != 0);
    else if (ps && ps->type == ParamType::Choice) o.e << std::string(choice_name(*ps, static_cast<std::size_t>(v)));
    else o.e << real(v);
  }
  o.end_map();
}

// A route's own group ("route:PREFIX", made for a `port + mac` or `nexthops:` route) is written
// in its route, and every other group in nexthop_groups, which refuses the reserved names. So
// each group named route:PREFIX must be what the loader makes of one route: used by that route
// alone, whose prefix PREFIX spells (the spelling is kept: it is in the name), plain ecmp, at
// most 64 members, the table the loader sizes (64, doubled until the weights fit).
// The loader numbers the named groups first, in file order, then the routes' own in route
// order. A configuration the loader built is in that order; a running switch's may not be (a
// group added after the routes', routes kept in prefix order): its dump is then the same groups
// and routes, renumbered so.
// Fills `text` with each route's prefix text and `own` with whether its group is its own.
void place_groups(const SwitchConfig& cfg, std::vector<std::string>& text, std::vector<bool>& own) {
  const std::size_t n = cfg.groups.size();
  std::vector<int> route_of(n, -1), refs(n, 0);
  for (std::size_t r = 0; r < cfg.routes.size(); ++r) {
    const uint32_t g = cfg.routes[r].group;
    if (g >= n) unrepresentable(fmt::format("routes[{}].group", r), fmt::format("{}: no such group", g));
    ++refs[g], route_of[g] = static_cast<int>(r);
  }
  text.assign(cfg.routes.size(), "");
  own.assign(cfg.routes.size(), false);
  std::map<std::string, std::size_t> names;
  for (std::size_t i = 0; i < n; ++i) {
    const GroupSpec& g = cfg.groups[i];
    const std::string field = fmt::format("nexthop_groups[{}] '{}'", i, g.name);
    uint64_t w = 0;
    for (auto& m : g.members) w += m.weight;
    if (g.drop) {
      // A blackhole: written as `drop: true`, with nothing that could contradict it.
      if (!g.members.empty() || g.policy.name != "ecmp" || !g.policy.params.empty() || any_by_tc(g))
        unrepresentable(field, "a drop group (a blackhole) with members or a policy");
    } else if (g.members.empty() || g.members.size() > kMaxGroupMembers) {
      unrepresentable(field, fmt::format("{} members (1..{})", g.members.size(), kMaxGroupMembers));
    }
    if (g.name.rfind(kRouteGroupPrefix, 0) != 0) {
      if (auto [it, fresh] = names.emplace(g.name, i); !fresh) unrepresentable(field, fmt::format("its name repeats nexthop_groups[{}]'s", it->second));
      if (g.table_size == 0 || g.table_size > (1u << 16) || (g.table_size & (g.table_size - 1)) || w > g.table_size)
        unrepresentable(field, fmt::format("table_size {} for total weight {}", g.table_size, w));
      continue;
    }
    auto refuse = [&](const std::string& why) {
      unrepresentable(field, fmt::format("a route's own group (nexthop_groups may not be named {}...) is written in its route, but {}",
                                         kRouteGroupPrefix, why));
    };
    uint32_t table = GroupSpec{}.table_size;
    while (table < w) table <<= 1;
    if (refs[i] == 0) refuse("no route uses it (its route was deleted or given another group)");
    if (refs[i] > 1) refuse(fmt::format("{} routes use it", refs[i]));
    if (g.policy.name != "ecmp" || !g.policy.params.empty() || any_by_tc(g)) refuse("it has a policy other than plain ecmp");
    if (!g.drop && g.table_size != table) refuse(fmt::format("its table_size is {}, not {}", g.table_size, table));
    const std::size_t r = static_cast<std::size_t>(route_of[i]);
    const std::string p = g.name.substr(std::string_view(kRouteGroupPrefix).size());
    RouteSpec got{};  // parsed as the loader parses a route's prefix
    try {
      got = ConfigReader("(dump)").route_prefix(YAML::Node(p), "prefix");
    } catch (const ConfigError&) {
      refuse(fmt::format("'{}' is not a route's prefix", p));
    }
    const RouteSpec& rs = cfg.routes[r];
    if (got.ipv6 != rs.ipv6 || got.depth != rs.depth || std::memcmp(got.addr, rs.addr, sizeof rs.addr) != 0)
      refuse(fmt::format("its route, routes[{}], is {}", r, ConfigReader::prefix_text(rs)));
    text[r] = p;
    own[r] = true;
  }
  // Routes to named groups in the address's usual text; the loader refuses host bits and a
  // prefix given twice.
  std::map<std::tuple<bool, std::string, uint8_t>, std::size_t> seen;
  for (std::size_t k = 0; k < cfg.routes.size(); ++k) {
    const RouteSpec& r = cfg.routes[k];
    const std::string f = fmt::format("routes[{}].prefix", k);
    if ((r.ipv6 ? r.depth > 128 : r.depth > 32)) unrepresentable(f, fmt::format("length {}", r.depth));
    const RouteSpec m = ConfigReader::masked(r);
    if (std::memcmp(m.addr, r.addr, sizeof r.addr) != 0)
      unrepresentable(f, fmt::format("{} has host bits set (the prefix is {})", ip_text(r.ipv6, r.addr) + "/" + std::to_string(r.depth), ConfigReader::prefix_text(m)));
    if (auto [it, fresh] = seen.emplace(std::tuple{r.ipv6, std::string(r.addr, r.addr + 16), r.depth}, k); !fresh)
      unrepresentable(f, fmt::format("{} is also routes[{}]'s prefix", ConfigReader::prefix_text(r), it->second));
    if (text[k].empty()) text[k] = ConfigReader::prefix_text(r);
  }
}

// The routes must fit the limits the dump writes (the loader checks them).
void check_route_limits(const SwitchConfig& cfg) {
  if (auto p = check_limits(cfg.route_limits, route_table_needs(cfg.routes))) {
    static const std::map<std::string, std::string> kField{{"routes_v4", "v4"}, {"routes_v6", "v6"}, {"tbl8_v4", "v4_tbl8"}, {"tbl8_v6", "v6_tbl8"}};
    unrepresentable("route_limits." + kField.at(p->key), p->reason);
  }
}

// mirror_sessions: whole sessions, as the switch checks them (a bad set is not written).
void write_mirrors(Out& o, const SwitchConfig& cfg) {
  if (cfg.mirror_sessions.empty()) return;
  if (auto bad = check_mirror_sessions(cfg.mirror_sessions, cfg.ports.size(), cfg.mmu))
    unrepresentable(fmt::format("mirror_sessions[{}].{}", bad->session, bad->field), bad->reason);
  auto ports = [&](const char* k, const std::vector<uint16_t>& l) {
    if (l.empty()) return;
    o.key(k).e << YAML::Flow << YAML::BeginSeq;
    for (uint16_t p : l) o.text(cfg.ports[p].name);
    o.end_seq();
  };
  o.begin_seq("mirror_sessions");
  for (const MirrorSessionSpec& m : cfg.mirror_sessions) {
    o.begin_map(nullptr, true).ks("name", m.name).ks("dst_port", cfg.ports[m.dst_port].name);
    ports("rx_ports", m.rx_ports);
    ports("tx_ports", m.tx_ports);
    o.kv("truncate", m.truncate).kv("queue", static_cast<int>(m.queue)).end_map();
  }
  o.end_seq();
}

// nexthop_groups, load_view, link_events, limits, routes.
void write_routing(Out& o, const SwitchConfig& cfg) {
  std::vector<std::string> text;
  std::vector<bool> own;
  place_groups(cfg, text, own);
  check_route_limits(cfg);
  std::vector<std::size_t> named;
  for (std::size_t i = 0; i < cfg.groups.size(); ++i)
    if (cfg.groups[i].name.rfind(kRouteGroupPrefix, 0) != 0) named.push_back(i);
  auto port_name = [&](uint16_t port, const std::string& f) -> const std::string& {
    if (port >= cfg.ports.size()) unrepresentable(f, fmt::format("port {}: no such port", port));
    return cfg.ports[port].name;
  };
  auto members = [&](const char* key, const std::vector<GroupMemberSpec>& ms, const std::string& f) {
    o.begin_seq(key);
    for (std::size_t k = 0; k < ms.size(); ++k)
      if (ms[k].via && ms[k].vlan)  // on a VLAN's subnet: its port is found again with its MAC
        o.begin_map(nullptr, true).ks("ip", format_ip(*ms[k].via)).kv("weight", ms[k].weight).end_map();
      else if (ms[k].via)  // a next hop by IP: its MAC is found again by ARP / ND
        o.begin_map(nullptr, true).ks("ip", format_ip(*ms[k].via)).ks("port", port_name(ms[k].port, fmt::format("{}[{}].port", f, k))).kv("weight", ms[k].weight).end_map();
      else
        o.begin_map(nullptr, true).ks("port", port_name(ms[k].port, fmt::format("{}[{}].port", f, k))).kmac("mac", ms[k].mac).kv("weight", ms[k].weight).end_map();
    o.end_seq();
  };
  if (!named.empty()) o.begin_seq("nexthop_groups");
  for (std::size_t i : named) {
    const GroupSpec& g = cfg.groups[i];
    if (g.drop) {
      o.begin_map(nullptr, true).ks("name", g.name).kv("drop", true).end_map();
      continue;
    }
    o.begin_map().ks("name", g.name).key("policy");
    write_policy(o, g.policy);
    if (any_by_tc(g)) o.begin_map("policy_by_tc", true);
    for (std::size_t tc = 0; tc < 8; ++tc)
      if (g.policy_by_tc[tc]) write_policy(o.ikey(tc), *g.policy_by_tc[tc]);
    if (any_by_tc(g)) o.end_map();
    o.kv("table_size", g.table_size);
    members("members", g.members, fmt::format("nexthop_groups[{}].members", i));
    o.end_map();
  }
  if (!named.empty()) o.end_seq();

  const LoadViewConfig& lv = cfg.load_view;
  o.begin_map("load_view").list("queue_thresholds_bytes", lv.queue_thresholds_bytes, [](uint64_t t) { return t; });
  o.list("rate_thresholds_pct", lv.rate_thresholds_pct, real);
  o.kv("rate_interval_us", time_text(lv.rate_interval_ns, 1e3, 1, 1e6, "load_view.rate_interval_ns")).kv("rate_weight", real(lv.rate_weight)).end_map();

  if (!cfg.link_events.empty()) o.begin_seq("link_events");
  for (std::size_t k = 0; k < cfg.link_events.size(); ++k) {
    const LinkEvent& ev = cfg.link_events[k];
    const std::string f = fmt::format("link_events[{}]", k);  // sorted by time, stably, by the loader: it must be already
    if (k > 0 && ev.at_ns < cfg.link_events[k - 1].at_ns) unrepresentable(f + ".at_ns", "earlier than the event before it");
    o.begin_map(nullptr, true).ks("port", port_name(ev.port, f + ".port")).kv("at_s", seconds(ev.at_ns, f + ".at_ns"));
    o.kv("state", ev.up ? "up" : "down").end_map();
  }
  if (!cfg.link_events.empty()) o.end_seq();

  // Always, defaults too: the dump leans on no default.
  const RouteLimits& l = cfg.route_limits;
  o.begin_map("limits", true).kv("routes_v4", l.v4).kv("routes_v6", l.v6).kv("tbl8_v4", l.v4_tbl8).kv("tbl8_v6", l.v6_tbl8).kv("prefault", l.prefault).end_map();

  if (!cfg.routes.empty()) o.begin_seq("routes");
  for (std::size_t k = 0; k < cfg.routes.size(); ++k) {
    const std::size_t gi = cfg.routes[k].group;
    const GroupSpec& g = cfg.groups[gi];
    const std::string f = fmt::format("routes[{}]", k);
    o.begin_map(nullptr, true).ks("prefix", text[k]);
    if (!own[k]) o.ks("group", g.name);
    else if (g.drop)
      o.kv("drop", true);
    else if (g.members.size() == 1 && g.members[0].weight == 1 && g.members[0].via)
      o.ks("via", format_ip(*g.members[0].via));
    else if (g.members.size() == 1 && g.members[0].weight == 1)  // the port form has no weight key
      o.ks("port", port_name(g.members[0].port, f + ".port")).kmac("mac", g.members[0].mac);
    else
      members("nexthops", g.members, f + ".nexthops");
    o.end_map();
  }
  if (!cfg.routes.empty()) o.end_seq();
}

// The config without what the ports' addresses and the neighbours found make by themselves
// (GroupOrigin other than Config): the loader makes them again from the addresses.
SwitchConfig without_derived(const SwitchConfig& in) {
  SwitchConfig c = in;
  c.groups.clear();
  c.routes.clear();
  std::vector<uint32_t> index(in.groups.size(), UINT32_MAX);
  for (std::size_t g = 0; g < in.groups.size(); ++g)
    if (in.groups[g].origin == GroupOrigin::Config) {
      index[g] = static_cast<uint32_t>(c.groups.size());
      c.groups.push_back(in.groups[g]);
    }
  for (RouteSpec r : in.routes) {
    if (r.group < index.size() && index[r.group] == UINT32_MAX) continue;
    if (r.group < index.size()) r.group = index[r.group];
    c.routes.push_back(r);
  }
  return c;
}

}  // namespace

std::string dump_config(const SwitchConfig& full) {
  const SwitchConfig cfg = without_derived(full);
  check_port_wide(cfg);
  const PortLosslessConfig l0 = cfg.ports.empty() ? PortLosslessConfig{} : cfg.ports[0].lossless;
  Out o;
  o.e << YAML::BeginMap;  // block style at the top level; small maps and lists in flow style
  write_switch(o, cfg);
  write_qos(o, cfg, l0);
  write_ports(o, cfg);
  write_lossless(o, cfg, l0);
  write_mirrors(o, cfg);
  write_host_settings(o, cfg);
  write_routing(o, cfg);
  o.e << YAML::EndMap;
  if (!o.e.good()) throw std::logic_error("dump_config: " + o.e.GetLastError());
  return std::string(o.e.c_str()) + "\n";
}

}  // namespace rs
