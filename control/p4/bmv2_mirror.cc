// The BMv2 CLI's mirror commands (see bmv2_cli.h): sessions by id and the two mirror tables.
#include <fmt/core.h>

#include <algorithm>

#include "control/p4/bmv2_args.h"
#include "control/p4/bmv2_cli.h"
#include "control/p4/p4_schema.h"

namespace rs {

namespace {

std::string session_name(uint32_t id) { return fmt::format("p4_session_{}", id); }

}  // namespace

// An entry's port joins (or leaves) its session's rx or tx ports.
void Bmv2Cli::mirror_watch(const State::MirrorEntry& e, bool on) {
  if (!e.session) return;  // NoAction
  const std::string name = session_name(*e.session);
  const auto& all = st_.mirror_sessions();
  auto at = std::find_if(all.begin(), all.end(), [&](auto& m) { return m.name == name; });
  if (at == all.end()) {
    if (on) throw OpError{"", fmt::format("no mirror session {}: mirroring_add it first", *e.session)};
    return;  // went with its session
  }
  MirrorSessionSpec s = *at;
  auto& ports = e.table == "mirror_ingress" ? s.rx_ports : s.tx_ports;
  if (on) ports.push_back(e.port);
  else ports.erase(std::remove(ports.begin(), ports.end(), e.port), ports.end());
  st_.mirror_set(0, std::move(s));
}

std::vector<std::string> Bmv2Cli::mirror_command(const std::vector<std::string>& t) {
  const std::string& c = t[0];
  auto need = [&](std::size_t n, const char* usage) {
    if (t.size() < n + 1) throw OpError{"", fmt::format("usage: {} {}", c, usage)};
  };
  auto port_of = [&](const std::string& s, const char* what) {
    const auto p = static_cast<uint16_t>(bmv2::number(s, 9, what));  // standard_metadata's bit<9>
    if (p >= st_.sw().num_ports()) throw OpError{"", fmt::format("{}: no port {} (the switch has {})", what, p, st_.sw().num_ports())};
    return p;
  };
  auto session = [&](uint32_t id) -> const MirrorSessionSpec* {
    for (auto& m : st_.mirror_sessions())
      if (m.name == session_name(id)) return &m;
    return nullptr;
  };
  // --- sessions
  if (c == "mirroring_add") {
    need(2, "<mirror_id> <egress_port>");
    const uint32_t id = bmv2::handle(t[1], "mirror_id");
    const MirrorSessionSpec* old = session(id);
    MirrorSessionSpec s;
    if (old) s = *old;
    else s.name = session_name(id);
    s.dst_port = port_of(t[2], "egress_port");
    st_.mirror_set(0, std::move(s));
    return {};
  }
  if (c == "mirroring_add_mc" || c == "mirroring_add_port_and_mgrp")
    throw OpError{"", "multicast mirror sessions are not supported: give one port (mirroring_add)"};
  if (c == "mirroring_delete") {
    need(1, "<mirror_id>");
    const uint32_t id = bmv2::handle(t[1], "mirror_id");
    if (!session(id)) throw OpError{"", fmt::format("no mirror session {}", id)};
    st_.mirror_del(0, session_name(id));
    std::erase_if(s_.mirror_entries, [&](auto& kv) { return kv.second.session == id; });  // they went with it
    return {};
  }
  if (c == "mirroring_get") {
    need(1, "<mirror_id>");
    const uint32_t id = bmv2::handle(t[1], "mirror_id");
    const MirrorSessionSpec* s = session(id);
    if (!s) throw OpError{"", fmt::format("no mirror session {}", id)};
    return {fmt::format("MirroringSessionConfig(port={}, mgid=None)", s->dst_port)};
  }
  if (c.starts_with("mirroring_")) throw OpError{"", fmt::format("unknown command '{}'", c)};

  // --- mirror_ingress / mirror_egress
  need(1, "<table> ...");
  const std::string& table = t[1];
  const p4::TableDef& td = *p4::registry().table(table);
  const std::string& action = td.actions[0];  // mirror_in or mirror_out
  const uint16_t session_bits = p4::registry().action(action)->params[0].bits;
  auto entries_of = [&] {
    std::vector<uint32_t> hs;
    for (auto& [h, e] : s_.mirror_entries)
      if (e.table == table) hs.push_back(h);
    return hs;
  };
  auto entry = [&](const std::string& s) -> State::MirrorEntry& {
    const uint32_t h = bmv2::handle(s, "entry handle");
    auto it = s_.mirror_entries.find(h);
    if (it == s_.mirror_entries.end() || it->second.table != table) throw OpError{"", fmt::format("{} has no entry {}", table, h)};
    return it->second;
  };
  // An action and its argument: mirror_in <session> / mirror_out <session>, or NoAction.
  auto action_of = [&](const std::string& a, const std::vector<std::string>& args) -> std::optional<uint32_t> {
    if (a == "NoAction") {
      if (!args.empty()) throw OpError{"", "NoAction takes no parameter"};
      return std::nullopt;
    }
    if (a != action) throw OpError{"", fmt::format("table {} has no action '{}' (it has {}, NoAction)", table, a, action)};
    if (args.size() != 1) throw OpError{"", fmt::format("{} takes 1 parameter (session), got {}", a, args.size())};
    return static_cast<uint32_t>(bmv2::number(args[0], session_bits, "session"));
  };
  if (c == "table_add") {
    const auto arrow = std::find(t.begin(), t.end(), "=>");
    if (t.size() < 4 || arrow != t.begin() + 4) throw OpError{"", fmt::format("usage: table_add {} <action> <port> => <session>", table)};
    State::MirrorEntry e{table, port_of(t[3], "port"), action_of(t[2], {arrow + 1, t.end()})};
    for (auto& [h, o] : s_.mirror_entries)
      if (o.table == table && o.port == e.port) throw OpError{"", fmt::format("{} already has an entry for port {} (handle {})", table, e.port, h)};
    mirror_watch(e, true);
    const uint32_t h = s_.next_mirror_entry++;
    s_.mirror_entries[h] = e;
    return {fmt::format("Entry has been added with handle {}", h)};
  }
  if (c == "table_modify") {
    need(3, "<table> <action> <entry handle> [session]");
    State::MirrorEntry& e = entry(t[3]);
    const auto next = action_of(t[2], {t.begin() + 4, t.end()});
    mirror_watch(e, false);
    e.session = next;
    mirror_watch(e, true);
    return {};
  }
  if (c == "table_delete") {
    need(2, "<table> <entry handle>");
    const uint32_t h = bmv2::handle(t[2], "entry handle");
    State::MirrorEntry& e = entry(t[2]);
    mirror_watch(e, false);
    s_.mirror_entries.erase(h);
    return {};
  }
  if (c == "table_clear") {
    const auto hs = entries_of();
    for (uint32_t h : hs) {
      mirror_watch(s_.mirror_entries[h], false);
      s_.mirror_entries.erase(h);
    }
    return {fmt::format("Cleared {} entries", hs.size())};
  }
  if (c == "table_set_default") {
    need(2, "<table> NoAction");
    if (t[2] != "NoAction" || t.size() != 3) throw OpError{"", fmt::format("{}'s default is NoAction: a port without an entry is not mirrored", table)};
    return {};
  }
  if (c == "table_num_entries") return {std::to_string(entries_of().size())};
  if (c == "table_dump") {
    std::vector<std::string> out{"==========", "TABLE ENTRIES"};
    for (uint32_t h : entries_of()) {
      const State::MirrorEntry& e = s_.mirror_entries[h];
      out.push_back(fmt::format("**********\nDumping entry {:#x}\nMatch key:\n* {:<18}: EXACT     {:04x}\nAction entry: {}", h,
                                td.keys[0].field, e.port, e.session ? fmt::format("{} - {:02x}", action, *e.session) : "NoAction - "));
    }
    out.push_back("==========");
    return out;
  }
  throw OpError{"", fmt::format("'{}' does not apply to {}", c, table)};
}

}  // namespace rs
