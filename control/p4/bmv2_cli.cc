#include "control/p4/bmv2_cli.h"

#include <fmt/core.h>
#include <rte_ether.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <sstream>

#include "control/config/config_reader.h"
#include "control/p4/bmv2_args.h"
#include "control/p4/p4_schema.h"

namespace rs {

namespace {

std::string group_name(uint32_t h) { return fmt::format("p4_group_{}", h); }
std::string member_name(uint32_t h) { return fmt::format("p4_member_{}", h); }

using bmv2::handle;
using bmv2::number;

GroupSpec spec_of(const std::string& name, const std::vector<std::pair<uint16_t, rte_ether_addr>>& members) {
  GroupSpec g;
  g.name = name;
  for (auto& [port, mac] : members) g.members.push_back(static_member(port, mac));
  while (g.table_size < g.members.size()) g.table_size <<= 1;
  return g;
}

// A member's own group (a route to that member alone): its next hop, or a blackhole.
GroupSpec member_spec(const std::string& name, const Bmv2Cli::Member& m) {
  return m.drop ? drop_group(name) : spec_of(name, {{m.port, m.mac}});
}

}  // namespace

std::string Bmv2Cli::selector_of(const std::string& name, bool is_table) const {
  const p4::Program& r = p4::registry();
  if (is_table) {
    const p4::TableDef* t = r.table(name);
    if (!t) throw OpError{"", fmt::format("no table '{}'", name)};
    if (t->implementation.empty()) throw OpError{"", fmt::format("table '{}' is not indirect (no action selector)", name)};
    return t->implementation;
  }
  for (auto& s : r.selectors)
    if (s.name == name) return s.name;
  throw OpError{"", fmt::format("no action profile '{}'", name)};
}

Bmv2Cli::Member Bmv2Cli::member_params(const std::string& action, const std::vector<std::string>& args) const {
  const p4::ActionDef* a = p4::registry().action(action);
  if (!a) throw OpError{"", fmt::format("no action '{}'", action)};
  if (action == "drop") {
    if (!args.empty()) throw OpError{"", fmt::format("drop takes no parameters, got {}", args.size())};
    return Member{.drop = true};
  }
  if (action != "set_nexthop") throw OpError{"", fmt::format("action '{}' is not a member action of nexthop_selector", action)};
  if (args.size() != a->params.size())
    throw OpError{"", fmt::format("{} takes {} parameters, got {}", action, a->params.size(), args.size())};
  Member m;
  const uint64_t port = number(args[0], a->params[0].bits, a->params[0].name);
  if (port >= st_.sw().num_ports()) throw OpError{"", fmt::format("port {}: the switch has {} ports", port, st_.sw().num_ports())};
  m.port = static_cast<uint16_t>(port);
  if (rte_ether_unformat_addr(args[1].c_str(), &m.mac) != 0) {
    const uint64_t v = number(args[1], a->params[1].bits, a->params[1].name);
    for (int i = 0; i < 6; ++i) m.mac.addr_bytes[i] = static_cast<uint8_t>(v >> (40 - 8 * i));
  }
  return m;
}

RouteSpec Bmv2Cli::match_key(const std::string& table, const std::string& key) const {
  const p4::TableDef* t = p4::registry().table(table);
  if (!t || t->implementation.empty() || t->keys.empty() || t->keys[0].match != p4::MatchKind::Lpm)
    throw OpError{"", fmt::format("table '{}' is not a route table (ipv4_lpm, ipv6_lpm)", table)};
  RouteSpec r;
  try {
    r = ConfigReader("cli").prefix(YAML::Node(key), "key");
  } catch (const ConfigError& e) {
    throw OpError{"", e.reason};
  }
  if ((t->keys[0].bits == 128) != r.ipv6)
    throw OpError{"", fmt::format("{}: key {} is not a {}-bit address", table, key, t->keys[0].bits)};
  return r;
}

void Bmv2Cli::sync_group(uint32_t grp) {
  const std::string name = group_name(grp);
  std::vector<std::pair<uint16_t, rte_ether_addr>> ms;
  for (uint32_t m : s_.groups[grp]) {
    if (s_.members[m].drop) throw OpError{"", fmt::format("member {} is drop(): a selector group's members forward (a route to the member itself is a blackhole)", m)};
    ms.emplace_back(s_.members[m].port, s_.members[m].mac);
  }
  const auto id = st_.group_id(name);
  if (ms.empty()) {
    if (id && st_.route_refs(*id)) throw OpError{"", fmt::format("group {} would be empty while {} route(s) use it", grp, st_.route_refs(*id))};
    if (id) st_.group_del(0, name);
    return;
  }
  GroupSpec g = spec_of(name, ms);
  if (id) {
    g.policy = st_.group(*id)->policy;  // a policy set by group.set stays
    g.policy_by_tc = st_.group(*id)->policy_by_tc;
    g.table_size = std::max(g.table_size, st_.group(*id)->table_size);
    st_.group_set(0, std::move(g));
  } else {
    st_.group_add(0, std::move(g));
  }
}

std::string Bmv2Cli::member_group(uint32_t mbr) {
  const std::string name = member_name(mbr);
  if (!st_.group_id(name)) st_.group_add(0, member_spec(name, s_.members[mbr]));
  return name;
}

void Bmv2Cli::sync_member(uint32_t mbr) {
  for (auto& [g, ms] : s_.groups)
    if (std::find(ms.begin(), ms.end(), mbr) != ms.end()) sync_group(g);
  if (const auto id = st_.group_id(member_name(mbr))) {
    const GroupSpec& old = *st_.group(*id);
    GroupSpec g = member_spec(member_name(mbr), s_.members[mbr]);
    if (!g.drop && !old.drop) {  // what group.set gave the member's group stays, as sync_group keeps it
      g.policy = old.policy;
      g.policy_by_tc = old.policy_by_tc;
      g.table_size = std::max(g.table_size, old.table_size);
      g.table_from = old.table_from;
    }
    st_.group_set(0, std::move(g));
  }
}

uint32_t Bmv2Cli::entry_handle(const RouteKey& k) {
  auto it = s_.entry_of.find(k);
  if (it != s_.entry_of.end()) return it->second;
  const uint32_t h = s_.next_entry++;
  s_.entry_of[k] = h;
  s_.entries[h] = k;
  return h;
}

std::vector<std::string> Bmv2Cli::dump(const std::string& table) {
  const RouteSpec probe = match_key(table, table == "ipv6_lpm" ? "::/0" : "0.0.0.0/0");
  std::vector<std::string> out{"==========", "TABLE ENTRIES"};
  for (auto& [k, g] : st_.routes()) {
    if (k.ipv6 != probe.ipv6) continue;
    const std::string& name = st_.group(g)->name;
    std::string action;
    if (name.starts_with("p4_group_")) action = "Group " + name.substr(9);
    else if (name.starts_with("p4_member_")) action = "Member " + name.substr(10);
    else action = fmt::format("Group '{}' (configured)", name);
    out.push_back("**********");
    out.push_back(fmt::format("Dumping entry {:#x}", entry_handle(k)));
    out.push_back(fmt::format("Match key:\n* {:<18}: LPM       {}", p4::registry().table(table)->keys[0].field, format_prefix(k)));
    out.push_back("Action entry: " + action);
  }
  out.push_back("==========");
  return out;
}

std::vector<std::string> Bmv2Cli::command(const std::vector<std::string>& t) {
  const std::string& c = t[0];
  auto need = [&](std::size_t n, const char* usage) {
    if (t.size() < n + 1) throw OpError{"", fmt::format("usage: {} {}", c, usage)};
  };
  const bool via_table = c.starts_with("table_indirect_");
  // --- members and groups of the selector (act_prof_* by profile, table_indirect_* by table)
  if (c == "act_prof_create_member" || c == "table_indirect_create_member") {
    need(2, "<profile|table> <action> <params...>");
    selector_of(t[1], via_table);
    Member m = member_params(t[2], {t.begin() + 3, t.end()});
    const uint32_t h = s_.next_member++;
    s_.members[h] = m;
    return {fmt::format("Member has been created with handle {}", h)};
  }
  if (c == "act_prof_modify_member" || c == "table_indirect_modify_member") {
    need(3, "<profile|table> <action> <member handle> <params...>");
    selector_of(t[1], via_table);
    const uint32_t h = handle(t[3], "member handle");
    if (!s_.members.count(h)) throw OpError{"", fmt::format("no member {}", h)};
    s_.members[h] = member_params(t[2], {t.begin() + 4, t.end()});
    sync_member(h);
    return {fmt::format("Member {} has been modified", h)};
  }
  if (c == "act_prof_delete_member" || c == "table_indirect_delete_member") {
    need(2, "<profile|table> <member handle>");
    selector_of(t[1], via_table);
    const uint32_t h = handle(t[2], "member handle");
    if (!s_.members.count(h)) throw OpError{"", fmt::format("no member {}", h)};
    for (auto& [g, ms] : s_.groups)
      if (std::find(ms.begin(), ms.end(), h) != ms.end()) throw OpError{"", fmt::format("member {} is in group {}", h, g)};
    if (const auto id = st_.group_id(member_name(h))) {
      if (st_.route_refs(*id)) throw OpError{"", fmt::format("member {} is used by {} route(s)", h, st_.route_refs(*id))};
      st_.group_del(0, member_name(h));
    }
    s_.members.erase(h);
    return {fmt::format("Member {} has been deleted", h)};
  }
  if (c == "act_prof_create_group" || c == "table_indirect_create_group") {
    need(1, "<profile|table>");
    selector_of(t[1], via_table);
    const uint32_t h = s_.next_group++;
    s_.groups[h] = {};
    return {fmt::format("Group has been created with handle {}", h)};
  }
  if (c == "act_prof_delete_group" || c == "table_indirect_delete_group") {
    need(2, "<profile|table> <group handle>");
    selector_of(t[1], via_table);
    const uint32_t h = handle(t[2], "group handle");
    if (!s_.groups.count(h)) throw OpError{"", fmt::format("no group {}", h)};
    if (const auto id = st_.group_id(group_name(h))) {
      if (st_.route_refs(*id)) throw OpError{"", fmt::format("group {} is used by {} route(s)", h, st_.route_refs(*id))};
      st_.group_del(0, group_name(h));
    }
    s_.groups.erase(h);
    return {fmt::format("Group {} has been deleted", h)};
  }
  if (c == "act_prof_add_member_to_group" || c == "table_indirect_add_member_to_group" ||
      c == "act_prof_remove_member_from_group" || c == "table_indirect_remove_member_from_group") {
    need(3, "<profile|table> <member handle> <group handle>");
    selector_of(t[1], via_table);
    const uint32_t m = handle(t[2], "member handle"), g = handle(t[3], "group handle");
    if (!s_.members.count(m)) throw OpError{"", fmt::format("no member {}", m)};
    if (!s_.groups.count(g)) throw OpError{"", fmt::format("no group {}", g)};
    auto& ms = s_.groups[g];
    const auto at = std::find(ms.begin(), ms.end(), m);
    if (c.find("add_member") != std::string::npos) {
      if (at != ms.end()) throw OpError{"", fmt::format("member {} is already in group {}", m, g)};
      if (ms.size() >= kMaxGroupMembers) throw OpError{"", fmt::format("group {} has {} members already (at most {})", g, ms.size(), kMaxGroupMembers)};
      ms.push_back(m);
    } else {
      if (at == ms.end()) throw OpError{"", fmt::format("member {} is not in group {}", m, g)};
      ms.erase(at);
    }
    sync_group(g);
    return {fmt::format("Member {} {} group {}", m, c.find("add_member") != std::string::npos ? "added to" : "removed from", g)};
  }
  // --- mirror sessions and the mirror tables (bmv2_mirror.cc)
  if (c.starts_with("mirroring_") || (t.size() > 1 && (t[1] == "mirror_ingress" || t[1] == "mirror_egress")))
    return mirror_command(t);
  if (c.starts_with("table_") && t.size() > 1 && t[1] == "port_mac") return port_mac_command(t);
  // --- the classification tables
  if (t.size() > 1 && (t[1] == "dscp_to_tc" || t[1] == "pcp_to_tc" || t[1] == "tc_to_queue") &&
      (c == "table_add" || c == "table_modify" || c == "table_delete" || c == "table_set_default" || c == "table_dump" ||
       c == "table_clear" || c == "table_num_entries"))
    return qos_command(t);
  // --- route entries
  if (c == "table_indirect_add" || c == "table_indirect_add_with_group") {
    const auto arrow = std::find(t.begin(), t.end(), "=>");
    if (t.size() < 5 || arrow != t.begin() + 3 || arrow + 2 > t.end())
      throw OpError{"", fmt::format("usage: {} <table> <prefix> => <{} handle> [priority]", c, via_table && c.ends_with("group") ? "group" : "member")};
    const RouteSpec r = match_key(t[1], t[2]);
    const uint32_t h = handle(t[4], "handle");
    std::string group;
    if (c.ends_with("with_group")) {
      if (!s_.groups.count(h)) throw OpError{"", fmt::format("no group {}", h)};
      if (s_.groups[h].empty()) throw OpError{"", fmt::format("group {} is empty", h)};
      group = group_name(h);
    } else {
      if (!s_.members.count(h)) throw OpError{"", fmt::format("no member {}", h)};
      group = member_group(h);
    }
    st_.route_add(0, r, group, false);
    return {fmt::format("Entry has been added with handle {}", entry_handle(route_key(r)))};
  }
  if (c == "table_indirect_modify" || c == "table_indirect_modify_with_group") {
    need(3, "<table> <entry handle> <member|group handle>");
    match_key(t[1], t[1] == "ipv6_lpm" ? "::/0" : "0.0.0.0/0");
    const uint32_t e = handle(t[2], "entry handle"), h = handle(t[3], "handle");
    if (!s_.entries.count(e) || !st_.routes().count(s_.entries[e])) throw OpError{"", fmt::format("no entry {}", e)};
    const RouteSpec r = route_spec(s_.entries[e]);
    std::string group;
    if (c.ends_with("with_group")) {
      if (!s_.groups.count(h) || s_.groups[h].empty()) throw OpError{"", fmt::format("no non-empty group {}", h)};
      group = group_name(h);
    } else {
      if (!s_.members.count(h)) throw OpError{"", fmt::format("no member {}", h)};
      group = member_group(h);
    }
    st_.route_add(0, r, group, true);
    return {fmt::format("Entry {} has been modified", e)};
  }
  if (c == "table_indirect_delete" || c == "table_delete") {
    need(2, "<table> <entry handle>");
    match_key(t[1], t[1] == "ipv6_lpm" ? "::/0" : "0.0.0.0/0");
    const uint32_t e = handle(t[2], "entry handle");
    if (!s_.entries.count(e) || !st_.routes().count(s_.entries[e])) throw OpError{"", fmt::format("no entry {}", e)};
    const RouteSpec r = route_spec(s_.entries[e]);
    st_.route_del(0, r);
    return {fmt::format("Entry {} has been deleted", e)};
  }
  if (c == "table_dump") {
    need(1, "<table>");
    return dump(t[1]);
  }
  if (c == "table_num_entries") {
    need(1, "<table>");
    const bool v6 = match_key(t[1], t[1] == "ipv6_lpm" ? "::/0" : "0.0.0.0/0").ipv6;
    return {std::to_string(v6 ? st_.routes_v6() : st_.routes_v4())};
  }
  if (c == "table_clear") {
    need(1, "<table>");
    const bool v6 = match_key(t[1], t[1] == "ipv6_lpm" ? "::/0" : "0.0.0.0/0").ipv6;
    std::vector<RouteSpec> del;
    for (auto& [k, g] : st_.routes())
      if (k.ipv6 == v6) del.push_back(route_spec(k));
    for (auto& r : del) st_.route_del(0, r);
    return {fmt::format("Cleared {} entries of {}", del.size(), t[1])};
  }
  if (c == "act_prof_dump") {
    need(1, "<profile>");
    selector_of(t[1], false);
    std::vector<std::string> out{"==========", "MEMBERS"};
    for (auto& [h, m] : s_.members) {
      char mac[RTE_ETHER_ADDR_FMT_SIZE];
      rte_ether_format_addr(mac, sizeof mac, &m.mac);
      out.push_back(m.drop ? fmt::format("Dumping member {}: drop - ", h) : fmt::format("Dumping member {}: set_nexthop - {}, {}", h, m.port, mac));
    }
    out.push_back("GROUPS");
    for (auto& [h, ms] : s_.groups) {
      std::string l;
      for (uint32_t m : ms) l += (l.empty() ? "" : ", ") + std::to_string(m);
      out.push_back(fmt::format("Dumping group {}: members [{}]", h, l));
    }
    out.push_back("==========");
    return out;
  }
  // --- the rest of the program's tables and BMv2's target commands
  if (c == "table_add" || c == "table_set_default" || c == "table_modify") {
    need(1, "<table> ...");
    const p4::TableDef* td = p4::registry().table(t[1]);
    if (!td) throw OpError{"", fmt::format("no table '{}'", t[1])};
    if (!td->implementation.empty()) throw OpError{"", fmt::format("table '{}' is indirect: use table_indirect_add or table_indirect_add_with_group", t[1])};
    throw OpError{"", fmt::format("table '{}' is not programmable at run time yet: set it in the configuration (README, Configuration)", t[1])};
  }
  if (c == "set_queue_rate" || c == "set_queue_depth") return queue_command(t);
  if (c == "counter_read" || c == "register_read") return read_command(t);
  if (c == "counter_reset" || c == "register_write" || c == "register_reset")
    throw OpError{"", fmt::format("'{}': the switch's counters and PFC state are the data plane's, read-only", c)};
  throw OpError{"", fmt::format("unknown command '{}'", c)};
}

std::vector<std::string> Bmv2Cli::qos_command(const std::vector<std::string>& t) {
  const std::string &c = t[0], &table = t[1];
  const p4::TableDef& td = *p4::registry().table(table);
  QosMaps q = st_.qos();
  auto& entries = s_.qos_entries[table];
  std::array<uint8_t, 64>* dscp = table == "dscp_to_tc" ? &q.dscp_to_tc : nullptr;
  uint8_t* map = dscp ? dscp->data() : table == "pcp_to_tc" ? q.pcp_to_tc.data() : q.tc_to_queue.data();
  const std::size_t keys = dscp ? 64 : 8;
  // What a key without an entry gets: table_set_default's value, else the program's default
  // (dscp_to_tc's set_tc(1); NoAction leaves the queue at the class, a PCP at its own number).
  auto fallback = [&](uint8_t key) -> uint8_t {
    if (auto d = s_.qos_default.find(table); d != s_.qos_default.end()) return d->second;
    if (table == "dscp_to_tc") return static_cast<uint8_t>(number(td.default_args.at(0), 3, "default"));
    return key;
  };
  auto value = [&](const std::string& action, const std::vector<std::string>& args) -> uint8_t {
    if (std::find(td.actions.begin(), td.actions.end(), action) == td.actions.end())
      throw OpError{"", fmt::format("table '{}' has no action '{}'", table, action)};
    if (action == "NoAction") throw OpError{"", fmt::format("NoAction entries in '{}' are not supported: delete the entry instead", table)};
    const p4::ActionDef& a = *p4::registry().action(action);
    if (args.size() != a.params.size()) throw OpError{"", fmt::format("{} takes {} parameters, got {}", action, a.params.size(), args.size())};
    return static_cast<uint8_t>(number(args[0], a.params[0].bits, a.params[0].name));
  };
  auto commit = [&] {
    // An entry in pcp_to_tc is what makes tagged frames trust their PCP (the program's rule).
    if (table == "pcp_to_tc") q.trust = entries.empty() ? QosTrust::Dscp : QosTrust::Pcp;
    st_.qos_set(0, q);
  };
  if (c == "table_add") {
    const auto arrow = std::find(t.begin(), t.end(), "=>");
    if (t.size() < 5 || arrow != t.begin() + 4) throw OpError{"", fmt::format("usage: table_add {} <action> <key> => <params>", table)};
    const uint8_t key = static_cast<uint8_t>(number(t[3], td.keys[0].bits, td.keys[0].field));
    for (auto& [h, k] : entries)
      if (k == key) throw OpError{"", fmt::format("{} already has an entry for {} (handle {})", table, key, h)};
    map[key] = value(t[2], {arrow + 1, t.end()});
    const uint32_t h = s_.qos_next[table]++;
    entries[h] = key;
    commit();
    return {fmt::format("Entry has been added with handle {}", h)};
  }
  if (c == "table_modify" || c == "table_delete") {
    if (t.size() < (c == "table_modify" ? 4u : 3u))
      throw OpError{"", c == "table_modify" ? "usage: table_modify <table> <action> <handle> <params>" : "usage: table_delete <table> <handle>"};
    const uint32_t h = handle(t[c == "table_modify" ? 3 : 2], "entry handle");
    auto it = entries.find(h);
    if (it == entries.end()) throw OpError{"", fmt::format("{} has no entry {}", table, h)};
    if (c == "table_modify") {
      map[it->second] = value(t[2], {t.begin() + 4, t.end()});
    } else {
      map[it->second] = fallback(it->second);
      entries.erase(it);
    }
    commit();
    return {fmt::format("Entry {} has been {}", h, c == "table_modify" ? "modified" : "deleted")};
  }
  if (c == "table_set_default") {
    if (t.size() < 3) throw OpError{"", "usage: table_set_default <table> <action> <params>"};
    if (t[2] == "NoAction" && table != "dscp_to_tc") {
      s_.qos_default.erase(table);
    } else {
      s_.qos_default[table] = value(t[2], {t.begin() + 3, t.end()});
    }
    for (std::size_t k = 0; k < keys; ++k) {
      bool has = false;
      for (auto& [h, key] : entries) has |= key == k;
      if (!has) map[k] = fallback(static_cast<uint8_t>(k));
    }
    commit();
    return {fmt::format("Setting default action of {}", table)};
  }
  if (c == "table_clear") {
    for (auto& [h, key] : entries) map[key] = fallback(key);
    entries.clear();
    commit();
    return {fmt::format("Cleared {} entries", table)};
  }
  if (c == "table_num_entries") return {std::to_string(entries.size())};
  std::vector<std::string> out{"==========", "TABLE ENTRIES"};
  for (auto& [h, key] : entries)
    out.push_back(fmt::format("**********\nDumping entry {:#x}\nMatch key:\n* {:<18}: EXACT     {:02x}\nAction entry: {} - {:02x}", h,
                              td.keys[0].field, key, td.actions[0], map[key]));
  out.push_back("==========");
  return out;
}

std::vector<std::string> Bmv2Cli::run(const std::vector<std::string>& lines) {
  // The handles undo with the transaction (RunningState::abort).
  st_.on_abort([this, saved = s_]() mutable { s_ = std::move(saved); });
  std::vector<std::string> out;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    std::istringstream in(lines[i].substr(0, lines[i].find('#')));
    std::vector<std::string> tokens;
    for (std::string w; in >> w;) tokens.push_back(w);
    if (tokens.empty()) continue;
    try {
      for (auto& l : command(tokens)) out.push_back(l);
    } catch (const OpError& e) {
      throw OpError{fmt::format("line {}", i + 1), fmt::format("{}: {}{}", tokens[0], e.field.empty() ? "" : e.field + ": ", e.reason)};
    }
  }
  return out;
}

}  // namespace rs
