#include "control/runtime/control_api.h"

#include "control/local/local_agent.h"

#include <fmt/core.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <iterator>
#include <set>

#include "control/config/config_dump.h"
#include "control/config/config_reader.h"
#include "control/config/mirror_config.h"
#include "control/config/routing_config.h"
#include "control/runtime/captures.h"
#include "control/runtime/control_reads.h"
#include "control/runtime/request_yaml.h"
#include "control/runtime/settings_ops.h"
#include "dataplane/proto/mac_addr.h"

namespace rs {

using nlohmann::json;

namespace {

struct Op {
  const char* name;
  bool writes;
  const char* help;
};
constexpr Op kOps[] = {
    {"route.add", true, "prefix, and group (a group's name), or port + mac (one next hop), or nexthops [{port, mac, weight}], or drop: true (a blackhole); [replace]: route a prefix (IPv4 or IPv6, /0 allowed), as routes[] in the config"},
    {"route.del", true, "prefix: remove a route"},
    {"group.add", true, "name, members [{port, mac, weight}], [policy, policy_by_tc, table_size], or name and drop: true (a blackhole): a next-hop group, as in nexthop_groups[]"},
    {"group.set", true, "name, and any of members, policy, policy_by_tc, table_size, drop: change a group (members that stay keep their counters; policy {PARAM: VALUE} without a name changes only those parameters)"},
    {"group.del", true, "name: delete a group no route uses"},
    {"port.set", true, "port, and any of admin (up|down), speed_gbps, queues {limit_packets, limit_bytes, scheduler, weights}, cable_length_m, mac, ipv4, ipv6 (an address or a list; null: none), icmp_unreachable, lldp, vlan {access, tagged}: a port's state and settings, as ports[] in the config (queues merges into the port's; an address brings its routes)"},
    {"buffer.set", true, "any of buffer, wred_profiles, queue_wred, pfcwd, pfc_quanta, load_view (or yaml: those sections as YAML text, with ports [{name, speed_gbps, cable_length_m, queues}] as buffer.get writes them): the lossless settings, as in the config, merged into the running ones (RFC 7386: a map merges, null removes a key); which PGs are lossless and the cell size stay"},
    {"system.set", true, "any of lldp, neighbours, copp, bridge (ageing_s, flood_pps, flood_burst), vlans (the whole list: VLANs and their interfaces) (or yaml: those sections as YAML text, as system.get writes them): the switch's settings as a host on its links, as in the config, merged into the running ones (RFC 7386)"},
    {"qos.set", true, "any of trust (dscp|pcp), dscp_to_tc, pcp_to_tc, tc_to_queue ({key: value} over the current maps), cnp_queue (-1 = none): the classification maps, as in the config's qos"},
    {"mirror.set", true, "name, dst_port, rx_ports [...] and/or tx_ports [...], [truncate (bytes, 0 = whole), queue (lossy)]: add or replace a mirror session, as mirror_sessions[] in the config"},
    {"mirror.del", true, "name: remove a mirror session (its ports are no longer watched)"},
    {"p4.cli", true, "lines [...]: BMv2 simple_switch_CLI commands for the P4 program's tables, as one transaction"},
    {"route.list", false, "[prefix, limit]: routes inside a prefix (all by default), at most limit (10000)"},
    {"group.list", false, "[name]: groups with their policy, members and route count"},
    {"port.list", false, "ports with admin and link state"},
    {"mirror.list", false, "mirror sessions, with the copies made and lost"},
    {"fdb.list", false, "the bridge's MAC table: vlan, mac, port, seconds since seen"},
    {"lldp.list", false, "LLDP neighbours per port: chassis and port IDs, system name, TTL, their DCBX PFC/ETS/application settings, pfc_mismatch"},
    {"neighbour.list", false, "the neighbour table (ARP / ND): port, ip, mac, state (incomplete, reachable, stale, delay, probe, failed), held packets"},
    {"counters", false, "[object]: every counter, or one port or group by name"},
    {"config.dump", false, "the running state as a YAML configuration the switch accepts at start-up"},
    {"state.hash", false, "a hash of the running state (of config.dump)"},
    {"limits", false, "what the control plane accepts at most, and what is used"},
    {"qos.get", false, "the classification maps in full"},
    {"system.get", false, "the lldp, neighbours, copp, bridge and vlans sections, as YAML system.set and the config take"},
    {"buffer.get", false, "the lossless sections and each port's speed, queues and cable length, as YAML buffer.set and the config take"},
    {"capture.start", false, "port, file, [direction (rx|tx|both), count, duration_s, snaplen]: write a port's packets to a pcapng file (an action, not part of the state)"},
    {"capture.stop", false, "port: end a capture now"},
    {"capture.list", false, "captures: file, packets written, copies lost, done"},
    {"trace.start", false, "count, [every]: trace the next count packets each worker receives (then 1 in every), an action"},
    {"trace.get", false, "ready, and when it is, the trace as text: one line a stage a packet"},
    {"trace.stop", false, "end a trace (a 1-in-K one never ends by itself) and return it"},
    {"help", false, "this list"},
};

// A settings request's sections: its own keys, or `yaml`, the same sections as YAML text (a
// file's, or what the matching .get wrote), which may also hold `allowed`'s extra keys.
YAML::Node sections(const ConfigReader& rd, const YAML::Node& n, std::initializer_list<const char*> allowed) {
  if (!n["yaml"]) return n;
  if (n.size() > 2) throw OpError{"yaml", "give the sections either as YAML text or as keys, not both"};
  YAML::Node y;
  try {
    y = YAML::Load(rd.str(n["yaml"], "yaml"));
  } catch (const YAML::Exception& e) {
    throw OpError{"yaml", e.what()};
  }
  if (!y.IsMap()) throw OpError{"yaml", "expected a map of sections"};
  rd.keys(y, "yaml", allowed);
  return y;
}

const Op* find_op(const std::string& name) {
  for (auto& o : kOps)
    if (name == o.name) return &o;
  return nullptr;
}

std::string op_names() {
  std::string s;
  for (auto& o : kOps) s += std::string(s.empty() ? "" : ", ") + o.name;
  return s;
}

json error(const json& id, std::optional<std::size_t> index, const std::string& field, const std::string& reason) {
  json e{{"field", field}, {"reason", reason}};
  if (index) e["index"] = *index;
  return json{{"id", id}, {"ok", false}, {"error", e}};
}

}  // namespace

ControlApi::ControlApi(RunningState& state, std::function<void()> wait, CountersFn counters)
    : state_(state), wait_(std::move(wait)), counters_(std::move(counters)), p4_(state) {}

// route.add (group form) and route.del straight from the JSON: the common operation of a
// big batch, where turning each into a YAML tree for the readers would cost more than the
// route itself (perf/README, route installation). False: not that simple form, read it fully.
bool ControlApi::simple_route(std::size_t index, const std::string& op, const json& args) {
  const bool add = op == "route.add";
  if (!add && op != "route.del") return false;
  for (auto& [k, v] : args.items())
    if (k != "op" && k != "id" && k != "prefix" && !(add && (k == "group" || k == "replace"))) return false;
  const auto p = args.find("prefix");
  const auto g = args.find("group");
  const auto rep = args.find("replace");
  if (p == args.end() || !p->is_string() || (add && (g == args.end() || !g->is_string())) ||
      (rep != args.end() && !rep->is_boolean()))
    return false;
  RouteSpec r;
  if (std::string why = ConfigReader::parse_prefix(p->get_ref<const std::string&>(), true, r); !why.empty())
    throw OpError{"prefix", std::move(why)};
  if (add) state_.route_add(index, r, g->get_ref<const std::string&>(), rep != args.end() && rep->get<bool>());
  else state_.route_del(index, r);
  return true;
}

void ControlApi::write(std::size_t index, const std::string& op, const json& args) {
  if (simple_route(index, op, args)) return;
  const ConfigReader rd("request");
  json fields = args;
  fields.erase("id");  // a single operation shares its object with the request's id
  const YAML::Node n = to_yaml(fields);
  std::map<std::string, uint16_t> ports;
  for (std::size_t p = 0; p < state_.sw().num_ports(); ++p) ports[state_.sw().config().ports[p].name] = static_cast<uint16_t>(p);
  auto need = [&](const char* key) {
    if (!n[key]) throw OpError{key, "missing"};
    return n[key];
  };
  if (op == "route.add" || op == "route.del") {
    rd.keys(n, "", {"op", "prefix", "group", "port", "mac", "nexthops", "drop", "replace"});
    const RouteSpec r = rd.route_prefix(need("prefix"), "prefix");
    if (op == "route.del") {
      rd.keys(n, "", {"op", "prefix"});
      return state_.route_del(index, r);
    }
    const bool replace = n["replace"] ? rd.boolean(n["replace"], "replace") : false;
    // The config's forms: a group by name, one next hop (port + mac), several, or a blackhole.
    const int forms = (n["group"] ? 1 : 0) + (n["port"] ? 1 : 0) + (n["nexthops"] ? 1 : 0) + (n["drop"] ? 1 : 0);
    if (forms != 1) throw OpError{"", "give exactly one of: group, port (+ mac), nexthops, drop"};
    if (n["mac"] && !n["port"]) throw OpError{"mac", "mac goes with port"};
    if (n["group"]) return state_.route_add(index, r, rd.str(n["group"], "group"), replace);
    if (n["drop"]) {
      read_drop(rd, n["drop"], "drop");
      return state_.route_add_own(index, r, {}, replace, true);
    }
    std::vector<GroupMemberSpec> members;
    if (n["port"]) {
      members.push_back(read_member(rd, n, "", ports, true));
    } else {
      rd.seq(n["nexthops"], "nexthops");
      if (n["nexthops"].size() == 0 || n["nexthops"].size() > kMaxGroupMembers)
        throw OpError{"nexthops", fmt::format("{} next hops; a route has 1 to {}", n["nexthops"].size(), kMaxGroupMembers)};
      for (std::size_t k = 0; k < n["nexthops"].size(); ++k)
        members.push_back(read_member(rd, n["nexthops"][k], fmt::format("nexthops[{}]", k), ports));
    }
    return state_.route_add_own(index, r, std::move(members), replace);
  }
  if (op == "group.add") {
    YAML::Node g = YAML::Clone(n);
    g.remove("op");
    return state_.group_add(index, read_group(rd, g, "", ports));
  }
  if (op == "group.set") {
    rd.keys(n, "", {"op", "name", "members", "policy", "policy_by_tc", "table_size", "drop"});
    const std::string name = rd.str(need("name"), "name");
    if (name.starts_with(kRouteGroupPrefix))
      throw OpError{"name", fmt::format("'{}' is a route's own group: it changes with its route (route.add with replace)", name)};
    const auto id = state_.group_id(name);
    if (!id) throw OpError{"name", fmt::format("no group '{}'", name)};
    GroupSpec g = *state_.group(*id);
    // drop: true makes the group a blackhole (nothing else may be given); drop: false makes a
    // blackhole forward again, to the members given with it.
    if (auto d = n["drop"]) {
      g.drop = rd.boolean(d, "drop");
      if (g.drop) {
        for (const char* k : kForwardingGroupKeys)
          if (n[k]) throw OpError{k, "a drop group (a blackhole) has no members and no policy"};
        return state_.group_set(index, drop_group(name));
      }
      if (!n["members"]) throw OpError{"members", "missing: a group that stops dropping needs its members"};
    } else if (g.drop && std::any_of(std::begin(kForwardingGroupKeys), std::end(kForwardingGroupKeys), [&](const char* k) { return bool(n[k]); })) {
      throw OpError{"drop", fmt::format("'{}' is a drop group (a blackhole): give drop: false with its members", name)};
    }
    if (auto x = n["policy"]) {
      if (x.IsMap() && !x["name"]) {
        // Parameters alone: they change the group's current policy, the others stay.
        YAML::Node full = YAML::Clone(x);
        full["name"] = g.policy.name;
        PolicySpec p = read_policy(rd, full, "policy");
        for (auto& [k, v] : p.params) {
          const std::string& key = k;  // clang before 16 lets no lambda capture a structured binding
          auto at = std::find_if(g.policy.params.begin(), g.policy.params.end(), [&](auto& kv) { return kv.first == key; });
          if (at != g.policy.params.end()) at->second = v;
          else g.policy.params.emplace_back(k, v);
        }
      } else {
        g.policy = read_policy(rd, x, "policy");
      }
    }
    if (auto x = n["policy_by_tc"]) {
      g.policy_by_tc = {};
      read_policy_by_tc(rd, x, "policy_by_tc", g);
    }
    if (auto x = n["table_size"]) {
      g.table_size = static_cast<uint32_t>(rd.integer(x, "table_size", 1, 1 << 16));
      if (g.table_size & (g.table_size - 1)) throw OpError{"table_size", "must be a power of two"};
    }
    if (auto x = n["members"]) {
      rd.seq(x, "members");
      if (x.size() == 0) throw OpError{"members", "a group needs at least one member"};
      if (x.size() > kMaxGroupMembers) throw OpError{"members", fmt::format("{} members; a group has at most {}", x.size(), kMaxGroupMembers)};
      g.members.clear();
      for (std::size_t k = 0; k < x.size(); ++k) g.members.push_back(read_member(rd, x[k], fmt::format("members[{}]", k), ports));
    }
    uint32_t w = 0;
    for (auto& m : g.members) w += m.weight;
    if (w > g.table_size) throw OpError{"table_size", fmt::format("{} slots cannot hold total weight {}", g.table_size, w)};
    return state_.group_set(index, std::move(g));
  }
  if (op == "group.del") {
    rd.keys(n, "", {"op", "name"});
    const std::string name = rd.str(need("name"), "name");
    if (name.starts_with(kRouteGroupPrefix))
      throw OpError{"name", fmt::format("'{}' is a route's own group: it goes with its route (route.del)", name)};
    return state_.group_del(index, name);
  }
  if (op == "mirror.set") {
    YAML::Node m = YAML::Clone(n);
    m.remove("op");
    return state_.mirror_set(index, read_mirror_session(rd, m, "", ports));
  }
  if (op == "mirror.del") {
    rd.keys(n, "", {"op", "name"});
    return state_.mirror_del(index, rd.str(need("name"), "name"));
  }
  if (op == "p4.cli") {
    if (!args.contains("lines") || !args["lines"].is_array()) throw OpError{"lines", "expected a list of command lines"};
    std::vector<std::string> lines;
    for (auto& l : args["lines"]) {
      if (!l.is_string()) throw OpError{"lines", "expected a list of strings"};
      lines.push_back(l.get<std::string>());
    }
    for (auto& o : p4_.run(lines)) output_.push_back(std::move(o));
    return;
  }
  if (op == "qos.set") {
    rd.keys(n, "", {"op", "trust", "dscp_to_tc", "pcp_to_tc", "tc_to_queue", "cnp_queue"});
    QosMaps q = state_.qos();
    if (auto t = n["trust"]) {
      const std::string s = rd.str(t, "trust");
      if (s != "dscp" && s != "pcp") throw OpError{"trust", "expected 'dscp' or 'pcp'"};
      q.trust = s == "pcp" ? QosTrust::Pcp : QosTrust::Dscp;
    }
    if (auto m = n["dscp_to_tc"]) rd.index_map(m, "dscp_to_tc", 63, 7, q.dscp_to_tc);
    if (auto m = n["pcp_to_tc"]) rd.index_map(m, "pcp_to_tc", 7, 7, q.pcp_to_tc);
    if (auto m = n["tc_to_queue"]) rd.index_map(m, "tc_to_queue", 7, 7, q.tc_to_queue);
    if (auto c = n["cnp_queue"]) q.cnp_queue = static_cast<int8_t>(rd.integer(c, "cnp_queue", -1, 7));
    return state_.qos_set(index, q);
  }
  if (op == "port.set") {
    rd.keys(n, "", {"op", "port", "admin", "speed_gbps", "queues", "cable_length_m", "mac", "ipv4", "ipv6", "icmp_unreachable", "lldp", "vlan"});
    const std::string p = rd.str(need("port"), "port");
    const int idx = state_.port_index(p);
    if (idx < 0) throw OpError{"port", fmt::format("no port '{}'", p)};
    const bool settings = n["speed_gbps"] || n["queues"] || n["cable_length_m"] || n["mac"];
    const bool host = std::any_of(std::begin(kPortHostKeys), std::end(kPortHostKeys), [&](const char* k) { return bool(n[k]); });
    if (!n["admin"] && !settings && !host)
      throw OpError{"", "nothing to set (admin, speed_gbps, queues, cable_length_m, mac, ipv4, ipv6, icmp_unreachable, lldp, vlan)"};
    if (settings) port_settings_set(state_, index, static_cast<uint16_t>(idx), n);
    if (host) port_host_set(state_, index, static_cast<uint16_t>(idx), n);
    if (!n["admin"]) return;
    const std::string a = rd.str(n["admin"], "admin");
    if (a != "up" && a != "down") throw OpError{"admin", "expected 'up' or 'down'"};
    return state_.port_admin(index, static_cast<uint16_t>(idx), a == "up");
  }
  if (op == "buffer.set") {
    rd.keys(n, "", {"op", "buffer", "wred_profiles", "queue_wred", "pfcwd", "pfc_quanta", "load_view", "yaml"});
    return buffer_set(state_, index, sections(rd, n, {"buffer", "wred_profiles", "queue_wred", "pfcwd", "pfc_quanta", "load_view", "ports"}));
  }
  if (op == "system.set") {
    rd.keys(n, "", {"op", "lldp", "neighbours", "copp", "bridge", "vlans", "yaml"});
    return system_set(state_, index, sections(rd, n, {"lldp", "neighbours", "copp", "bridge", "vlans"}));
  }
  throw OpError{"op", fmt::format("unknown operation '{}' (known: {})", op, op_names())};
}

json ControlApi::read(const std::string& op, const json& args) {
  if (op == "help") {
    json out = json::array();
    for (auto& o : kOps) out.push_back({{"op", o.name}, {"writes", o.writes}, {"args", o.help}});
    return out;
  }
  if (op == "config.dump") return json{{"yaml", dump_config(state_.config())}};
  if (op == "qos.get") {
    const QosMaps& q = state_.qos();
    return json{{"trust", q.trust == QosTrust::Pcp ? "pcp" : "dscp"}, {"dscp_to_tc", q.dscp_to_tc}, {"pcp_to_tc", q.pcp_to_tc},
                {"tc_to_queue", q.tc_to_queue}, {"cnp_queue", q.cnp_queue}};
  }
  if (op == "state.hash") return json{{"hash", fmt::format("{:016x}", state_hash())}};
  if (op == "buffer.get") return json{{"yaml", buffer_get(state_)}};
  if (op == "system.get") return json{{"yaml", system_get(state_)}};
  if (op == "neighbour.list") return local_ ? local_->neighbours_json() : json::array();
  if (op == "lldp.list") return local_ ? local_->lldp_json() : json::array();
  if (op == "fdb.list") {
    json out = json::array();
    const Switch& sw = state_.sw();
    if (const Fdb* fdb = sw.fdb())
      for (const Fdb::Row& r : fdb->rows())
        out.push_back({{"vlan", r.vlan},
                       {"mac", format_mac(r.mac)},
                       {"port", r.port < sw.num_ports() ? sw.port(r.port).name : std::to_string(r.port)}});
    return out;
  }
  if (op.starts_with("capture.")) {
    if (!captures_) throw OpError{"", "this switch does not capture"};
    if (op == "capture.list") return captures_->list();
    const ConfigReader rd("request");
    json fields = args;
    fields.erase("id");
    const YAML::Node n = to_yaml(fields);
    if (!n["port"]) throw OpError{"port", "missing"};
    const std::string port = rd.str(n["port"], "port");
    const int idx = state_.port_index(port);
    if (idx < 0) throw OpError{"port", fmt::format("no port '{}'", port)};
    if (op == "capture.stop") {
      rd.keys(n, "", {"op", "port"});
      if (!captures_->stop(static_cast<uint16_t>(idx))) throw OpError{"port", fmt::format("no capture running on '{}'", port)};
      return captures_->list();
    }
    rd.keys(n, "", {"op", "port", "file", "direction", "count", "duration_s", "snaplen"});
    CaptureSpec spec;
    spec.port = static_cast<uint16_t>(idx);
    if (!n["file"]) throw OpError{"file", "missing"};
    spec.file = rd.str(n["file"], "file");
    if (spec.file.empty() || spec.file[0] != '/') throw OpError{"file", "give an absolute path (the switch's working directory is not the client's)"};
    if (auto d = n["direction"]) {
      const std::string s = rd.str(d, "direction");
      if (s == "rx") spec.dirs = CaptureTap::kRx;
      else if (s == "tx") spec.dirs = CaptureTap::kTx;
      else if (s != "both") throw OpError{"direction", "expected rx, tx or both"};
    }
    if (auto c = n["count"]) spec.count = static_cast<uint64_t>(rd.integer(c, "count", 0, INT64_MAX));
    if (auto c = n["duration_s"]) spec.duration_s = rd.real(c, "duration_s", 0, 86400);
    if (auto c = n["snaplen"]) spec.snaplen = static_cast<uint32_t>(rd.integer(c, "snaplen", 0, 65535));
    try {
      captures_->start(spec);
    } catch (const std::runtime_error& e) {
      throw OpError{std::string_view(e.what()).starts_with("cannot write") ? "file" : "port", e.what()};
    }
    return captures_->list();
  }
  if (op.starts_with("trace.")) {
    Switch& sw = const_cast<Switch&>(state_.sw());
    if (op == "trace.start") {
      const ConfigReader rd("request");
      json fields = args;
      fields.erase("id");
      const YAML::Node n = to_yaml(fields);
      rd.keys(n, "", {"op", "count", "every"});
      if (!n["count"]) throw OpError{"count", "missing"};
      const auto count = static_cast<uint32_t>(rd.integer(n["count"], "count", 0, 1 << 16));
      const auto every = n["every"] ? static_cast<uint32_t>(rd.integer(n["every"], "every", 0, UINT32_MAX)) : 0u;
      sw.request_trace(count, every);
      return json{{"started", true}};
    }
    if (op == "trace.stop") {
      sw.stop_trace();
      // The workers acknowledge on their next poll; a stepped switch is polled by wait_.
      for (int i = 0; i < 100000 && !sw.trace_ready(); ++i)
        if (wait_) wait_();
    }
    if (!sw.trace_ready()) return json{{"ready", false}};
    return json{{"ready", true}, {"text", sw.trace_text()}};
  }
  if (op == "counters") {
    const std::string object = args.contains("object") ? args["object"].get<std::string>() : "";
    if (!counters_) throw OpError{"", "this switch serves no counters"};
    return counters_(object);
  }
  return read_state(state_, op, args);
}

uint64_t ControlApi::state_hash() const {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : dump_config(state_.config())) h = (h ^ c) * 1099511628211ull;
  return h;
}

json ControlApi::handle(const json& req) {
  const json id = req.is_object() && req.contains("id") ? req["id"] : json(nullptr);
  if (!req.is_object()) return error(id, std::nullopt, "", "a request is a JSON object");
  const bool batch = req.contains("ops");
  if (batch == req.contains("op")) return error(id, std::nullopt, "", "give exactly one of: op (one operation), ops (a transaction)");
  const json single = batch ? json() : json::array({req});
  const json& ops = batch ? req["ops"] : single;  // a batch's operations are read where they are
  if (!ops.is_array()) return error(id, std::nullopt, "ops", "expected a list");
  if (ops.size() > state_.limits().ops_per_request)
    return error(id, std::nullopt, "ops", fmt::format("{} operations; at most {} a request", ops.size(), state_.limits().ops_per_request));
  const auto where = [&](std::size_t i, std::string f) {
    if (!f.empty() && f[0] == '.') f.erase(0, 1);  // read_group's paths under an empty prefix
    const std::string base = batch ? fmt::format("ops[{}]", i) : "";
    return base.empty() ? f : f.empty() ? base : base + "." + f;
  };
  // The index names an operation of a transaction; a single operation has none.
  const auto index_of = [&](std::size_t i) { return batch ? std::optional<std::size_t>(i) : std::nullopt; };
  // A read is a request of its own; a transaction holds writes only.
  if (!batch) {
    if (!ops[0]["op"].is_string()) return error(id, std::nullopt, "op", "expected a string");
    const std::string name = ops[0]["op"];
    const Op* o = find_op(name);
    if (!o) return error(id, std::nullopt, "op", fmt::format("unknown operation '{}' (known: {})", name, op_names()));
    if (!o->writes) {
      try {
        return json{{"id", id}, {"ok", true}, {"result", read(name, ops[0])}};
      } catch (const OpError& e) {
        return error(id, std::nullopt, where(0, e.field), e.reason);
      } catch (const ConfigError& e) {
        return error(id, std::nullopt, where(0, e.path), e.reason);
      } catch (const std::exception& e) {
        return error(id, std::nullopt, "", e.what());
      }
    }
  }
  state_.begin();
  output_.clear();
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const json& op = ops[i];
    try {
      if (!op.is_object() || !op.contains("op") || !op["op"].is_string()) throw OpError{"op", "missing: each operation is an object with an op"};
      const std::string name = op["op"];
      const Op* o = find_op(name);
      if (o && !o->writes) throw OpError{"op", fmt::format("'{}' reads: send it as a request of its own", name)};
      write(i, name, op);
    } catch (const OpError& e) {
      state_.abort();
      return error(id, index_of(i), where(i, e.field), e.reason);
    } catch (const ConfigError& e) {
      state_.abort();
      return error(id, index_of(i), where(i, e.path), e.reason);
    } catch (const std::exception& e) {
      state_.abort();
      return error(id, index_of(i), where(i, ""), e.what());
    }
  }
  if (auto f = state_.commit(wait_)) return error(id, index_of(f->first), where(f->first, f->second.field), f->second.reason);
  json result{{"applied", ops.size()}};
  if (!output_.empty()) result["output"] = output_;
  return json{{"id", id}, {"ok", true}, {"result", result}};
}

namespace {
// A response as one line. Bytes that are not UTF-8 (a parse error quotes what it read; a reason
// may name a key the request spelled so) become U+FFFD instead of making dump() throw.
std::string line_of(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }
}  // namespace

std::string ControlApi::handle_line(std::string_view line) {
  json req;
  try {
    req = json::parse(line);
  } catch (const json::parse_error& e) {
    return line_of(error(nullptr, std::nullopt, "", fmt::format("invalid JSON: {}", e.what())));
  }
  try {
    return line_of(handle(req));
  } catch (const std::exception& e) {
    return line_of(error(req.is_object() && req.contains("id") ? req["id"] : json(nullptr), std::nullopt, "", e.what()));
  }
}

}  // namespace rs
