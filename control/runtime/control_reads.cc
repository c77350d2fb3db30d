#include "control/runtime/control_reads.h"

#include <fmt/core.h>
#include <fmt/format.h>
#include <rte_ether.h>
#include <yaml-cpp/yaml.h>

#include "control/config/config_reader.h"
#include "dataplane/routing/routing_policy.h"
#include "dataplane/proto/mac_addr.h"

namespace rs {

using nlohmann::json;

namespace {

json param_value(const ParamSpec& p, double v) {
  switch (p.type) {
    case ParamType::Bool: return v != 0;
    case ParamType::Int: return static_cast<int64_t>(v);
    case ParamType::Real: return v;
    case ParamType::Choice: return std::string(choice_name(p, static_cast<std::size_t>(v)));
  }
  return v;
}

json policy_json(const PolicySpec& p) { return policy_choice_json(resolve_policy(p, "policy")); }

// The first `bits` bits of two addresses agree.
bool same_bits(const std::array<uint8_t, 16>& a, const std::array<uint8_t, 16>& b, int bits) {
  for (int i = 0; i < bits; ++i) {
    const uint8_t bit = static_cast<uint8_t>(0x80 >> (i % 8));
    if ((a[i / 8] & bit) != (b[i / 8] & bit)) return false;
  }
  return true;
}

}  // namespace

json policy_choice_json(const PolicyChoice& pc) {
  const RoutingPolicyEntry& e = RoutingPolicyRegistry::at(pc.policy);
  json params = json::object();
  for (std::size_t k = 0; k < e.params.size(); ++k) params[std::string(e.params[k].name)] = param_value(e.params[k], pc.params.v[k]);
  return {{"name", std::string(e.name)}, {"params", params}};
}

json group_json(const RunningState& st, uint32_t id) {
  const GroupSpec& g = *st.group(id);
  json members = json::array();
  for (std::size_t m = 0; m < g.members.size(); ++m) {
    const GroupMemberSpec& mm = g.members[m];
    // A next hop on a VLAN interface has no port until its host is found.
    json e = {{"port", mm.port < st.sw().num_ports() ? json(st.sw().config().ports[mm.port].name) : json(nullptr)},
              {"mac", format_mac(mm.mac)},
              {"weight", mm.weight},
              {"nexthop", st.member_nexthops(id)[m]}};
    if (mm.via) e["ip"] = format_ip(*mm.via), e["resolved"] = mm.resolved;
    if (mm.vlan) e["vlan"] = mm.vlan;
    members.push_back(std::move(e));
  }
  json by_tc = json::object();
  for (int tc = 0; tc < 8; ++tc)
    if (g.policy_by_tc[tc]) by_tc[std::to_string(tc)] = policy_json(*g.policy_by_tc[tc]);
  json out{{"name", g.name},       {"id", id},          {"policy", policy_json(g.policy)}, {"policy_by_tc", by_tc},
           {"table_size", g.table_size}, {"members", members}, {"routes", st.route_refs(id)}};
  if (g.drop) out["drop"] = true;
  return out;
}

json read_state(const RunningState& st, const std::string& op, const json& args) {
  const ConfigReader rd("request");
  if (op == "route.list") {
    std::optional<RouteKey> filter;
    if (args.contains("prefix")) {
      if (!args["prefix"].is_string()) throw OpError{"prefix", "expected a string"};
      filter = route_key(rd.prefix(YAML::Node(args["prefix"].get<std::string>()), "prefix"));
    }
    std::size_t limit = 10000;
    if (args.contains("limit")) {
      if (!args["limit"].is_number_integer() || args["limit"].get<int64_t>() < 0) throw OpError{"limit", "expected a non-negative integer"};
      limit = args["limit"].get<std::size_t>();
    }
    json routes = json::array();
    std::size_t total = 0;
    // Routes inside a prefix are contiguous in the map's order (family, address, length).
    auto it = filter ? st.routes().lower_bound(RouteKey{filter->ipv6, filter->addr, 0}) : st.routes().begin();
    for (; it != st.routes().end(); ++it) {
      if (filter) {
        if (it->first.ipv6 != filter->ipv6 || !same_bits(it->first.addr, filter->addr, filter->depth)) break;
        if (it->first.depth < filter->depth) continue;  // a shorter prefix at the same address
      }
      ++total;
      if (routes.size() >= limit) continue;
      const GroupSpec& g = *st.group(it->second);
      json e{{"prefix", format_prefix(it->first)}, {"group", g.name}};
      if (g.drop) e["drop"] = true;
      routes.push_back(std::move(e));
    }
    return json{{"routes", routes}, {"total", total}, {"truncated", total > routes.size()}};
  }
  if (op == "group.list") {
    json out = json::array();
    if (args.contains("name")) {
      if (!args["name"].is_string()) throw OpError{"name", "expected a string"};
      const auto id = st.group_id(args["name"].get<std::string>());
      if (!id) throw OpError{"name", fmt::format("no group '{}'", args["name"].get<std::string>())};
      out.push_back(group_json(st, *id));
      return out;
    }
    for (uint32_t g = 0; g < st.group_slots(); ++g)
      if (st.group(g)) out.push_back(group_json(st, g));
    return out;
  }
  if (op == "port.list") {
    json out = json::array();
    const SwitchConfig c = st.config(false);  // no routes copied for a port list
    for (std::size_t p = 0; p < c.ports.size(); ++p)
      out.push_back({{"name", c.ports[p].name},
                     {"index", p},
                     {"admin", c.ports[p].admin_up ? "up" : "down"},
                     {"link", st.sw().load().link_up(static_cast<uint16_t>(p)) ? "up" : "down"},
                     {"speed_gbps", c.ports[p].egress.speed_gbps},
                     {"mac", fmt::format("{:02x}", fmt::join(c.ports[p].mac.addr_bytes, c.ports[p].mac.addr_bytes + 6, ":"))}});
    return out;
  }
  if (op == "mirror.list") {
    // Each session as mirror.set takes it, with the copies its ports made and lost.
    json out = json::array();
    const auto& ports = st.sw().config().ports;
    const PortMirror& pm = st.sw().mirror();
    for (const MirrorSessionSpec& m : st.mirror_sessions()) {
      json rx = json::array(), tx = json::array();
      uint64_t copies = 0, lost = 0;
      for (uint16_t p : m.rx_ports) {
        rx.push_back(ports[p].name);
        copies += pm.copies(p, PortMirror::kRx);
        lost += pm.lost(p, PortMirror::kRx);
      }
      for (uint16_t p : m.tx_ports) {
        tx.push_back(ports[p].name);
        copies += pm.copies(p, PortMirror::kTx);
        lost += pm.lost(p, PortMirror::kTx);
      }
      out.push_back({{"name", m.name}, {"dst_port", ports[m.dst_port].name}, {"rx_ports", rx}, {"tx_ports", tx},
                     {"truncate", m.truncate}, {"queue", m.queue}, {"copies", copies}, {"lost", lost}});
    }
    return out;
  }
  if (op == "limits") {
    const ControlLimits& l = st.limits();
    std::size_t groups = 0;
    for (uint32_t g = 0; g < st.group_slots(); ++g) groups += st.group(g) ? 1 : 0;
    const RouteLimits& r = const_cast<Switch&>(st.sw()).fib_writer().limits();
    return json{{"routes_v4", {{"max", r.v4}, {"used", st.routes_v4()}}},
                {"routes_v6", {{"max", r.v6}, {"used", st.routes_v6()}}},
                {"groups", {{"max", l.groups}, {"used", groups}}},
                {"mirror_sessions", {{"max", l.mirror_sessions}, {"used", st.mirror_sessions().size()}}},
                {"members_per_group", kMaxGroupMembers},
                {"nexthops", l.nexthops},
                {"request_bytes", l.request_bytes},
                {"ops_per_request", l.ops_per_request},
                {"connections", l.connections}};
  }
  throw OpError{"op", fmt::format("unknown operation '{}'", op)};
}

}  // namespace rs
