// The control plane's table registry: p4/roceswitch.p4 written out by hand, table by table,
// with the C++ that implements each (p4/MAPPING.md has the details). It is NOT generated from
// the .p4: p4_conformance_test parses the program and compare()s the two, so a change to either
// side that is not made to the other fails the test, whichever side it was made on.
#include <algorithm>
#include <string>
#include <vector>

#include "control/p4/p4_schema.h"

namespace rs::p4 {

namespace {

constexpr MatchKind kExact = MatchKind::Exact;
constexpr MatchKind kLpm = MatchKind::Lpm;
constexpr MatchKind kSelector = MatchKind::Selector;

Program make_registry() {
  Program p;
  // Actions: exactly those the tables below list.
  p.actions = {
      {"set_tc", {{"tc", 3}}},                         // QosMaps::dscp_to_tc / pcp_to_tc value
      {"NoAction", {}},
      {"set_queue", {{"qid", 3}}},                     // QosMaps::tc_to_queue value
      {"mirror_in", {{"session", 32}}},                // a mirror session id (target configuration)
      {"set_nexthop", {{"port", 9}, {"dmac", 48}}},    // NextHop{port, mac} (dataplane/tables/fib.h)
      {"drop", {}},                                    // a blackhole route; also the miss: no_route
      {"rewrite_smac", {{"smac", 48}}},                // WorkerContext::port_mac
      {"mirror_out", {{"session", 32}}},
  };

  // ---- RoceIngress
  // classify step, in l3_input: dataplane/stages/classify.h (TcQueueMap), maps in
  // dataplane/tables/qos_maps.h (QosMaps).
  p.tables.push_back({.name = "dscp_to_tc", .control = "RoceIngress",
                      .keys = {{"meta.dscp", kExact, 6}},
                      .actions = {"set_tc"},
                      .default_action = "set_tc", .default_args = {"1"},
                      .implementation = "", .size = 64});
  p.tables.push_back({.name = "pcp_to_tc", .control = "RoceIngress",
                      .keys = {{"hdr.vlan.pcp", kExact, 3}},
                      .actions = {"set_tc", "NoAction"},
                      .default_action = "NoAction", .default_args = {},
                      .implementation = "", .size = 8});
  p.tables.push_back({.name = "tc_to_queue", .control = "RoceIngress",  // TcQueueMap::pair_of
                      .keys = {{"meta.tc", kExact, 3}},
                      .actions = {"set_queue", "NoAction"},
                      .default_action = "NoAction", .default_args = {},
                      .implementation = "", .size = 8});
  // Port mirroring: no dataplane step yet; the control plane keeps the entries and sessions.
  p.tables.push_back({.name = "mirror_ingress", .control = "RoceIngress",
                      .keys = {{"standard_metadata.ingress_port", kExact, 9}},
                      .actions = {"mirror_in", "NoAction"},
                      .default_action = "NoAction", .default_args = {},
                      .implementation = "", .size = 512});
  // The routes: ipv4_route / ipv6_route (dataplane/stages/ip_route.h), Fib::lookup4 / lookup6
  // (dataplane/tables/fib.h). The selector's groups are NextHopGroups and its members NextHops
  // (Fib::add_group, build_fib in dataplane/switch/build_fib.cc); the member choice is inline
  // for ecmp groups, else the group's routing policy in nexthop_select
  // (dataplane/stages/nexthop_select.cc, dataplane/routing/policies/*).
  p.tables.push_back({.name = "ipv4_lpm", .control = "RoceIngress",
                      .keys = {{"hdr.ipv4.dst_addr", kLpm, 32}, {"meta.flow_hash", kSelector, 32}},
                      .actions = {"set_nexthop", "drop"},
                      .default_action = "drop", .default_args = {},
                      .implementation = "nexthop_selector", .size = 65536});
  p.tables.push_back({.name = "ipv6_lpm", .control = "RoceIngress",
                      .keys = {{"hdr.ipv6.dst_addr", kLpm, 128}, {"meta.flow_hash", kSelector, 32}},
                      .actions = {"set_nexthop", "drop"},
                      .default_action = "drop", .default_args = {},
                      .implementation = "nexthop_selector", .size = 16384});

  // ---- RoceEgress
  // rewrite step, in rewrite_enqueue: dataplane/stages/rewrite.h (rewrite_frame).
  p.tables.push_back({.name = "port_mac", .control = "RoceEgress",
                      .keys = {{"standard_metadata.egress_port", kExact, 9}},
                      .actions = {"rewrite_smac", "NoAction"},
                      .default_action = "NoAction", .default_args = {},
                      .implementation = "", .size = 512});
  p.tables.push_back({.name = "mirror_egress", .control = "RoceEgress",  // no dataplane step yet
                      .keys = {{"standard_metadata.egress_port", kExact, 9}},
                      .actions = {"mirror_out", "NoAction"},
                      .default_action = "NoAction", .default_args = {},
                      .implementation = "", .size = 512});

  // Identity over the flow hash l3_input computes (PacketMeta::flow_hash); 16384 members is
  // kMaxNexthops (dataplane/tables/fib.h).
  p.selectors = {{"nexthop_selector", "identity", 16384, 32}};
  // BMv2's counter_read / register_read (bmv2_cli.h): the switch's own port counters and the
  // PFC quanta last received, read from the data plane.
  p.externs = {{"register", "pfc_rx_quanta", 512 * 8, "16"},
               {"counter", "port_rx_counter", 512, "packets_and_bytes"},
               {"counter", "port_tx_counter", 512, "packets_and_bytes"}};
  return p;
}

template <typename T>
const T* find_named(const std::vector<T>& v, std::string_view name) {
  const auto it = std::find_if(v.begin(), v.end(), [&](const T& x) { return x.name == name; });
  return it == v.end() ? nullptr : &*it;
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : ", ") + x;
  return "(" + s + ")";
}

// "X in the program, Y in the registry", when they differ.
struct Diff {
  std::vector<std::string>& out;
  template <typename V>
  void operator()(const std::string& what, const V& prog, const V& reg) {
    if (!(prog == reg)) out.push_back(what + text(prog) + " in the program, " + text(reg) + " in the registry");
  }
  static std::string text(const std::string& s) { return s.empty() ? "none" : s; }
  static std::string text(std::string_view s) { return std::string(s); }
  static std::string text(uint32_t n) { return std::to_string(n); }
  static std::string text(const std::vector<std::string>& v) { return join(v); }
};

// Elements of two named lists: each one missing on a side and, where order means something to
// the control plane (keys, parameters: positional in a command), the order of those on both.
// `both` is called for every name found on both sides.
template <typename T, typename Name, typename Both>
void match_lists(std::vector<std::string>& out, const std::string& prefix, const char* what, bool ordered,
                 const std::vector<T>& prog, const std::vector<T>& reg, Name name, Both both) {
  std::vector<std::string> pn, rn;
  for (const T& x : prog) pn.push_back(name(x));
  for (const T& x : reg) rn.push_back(name(x));
  for (size_t i = 0; i < prog.size(); ++i) {
    const auto it = std::find(rn.begin(), rn.end(), pn[i]);
    if (it == rn.end()) out.push_back(prefix + what + " " + pn[i] + ": in the program, not in the registry");
    else both(prog[i], reg[static_cast<size_t>(it - rn.begin())]);
  }
  for (const std::string& n : rn)
    if (std::find(pn.begin(), pn.end(), n) == pn.end())
      out.push_back(prefix + what + " " + n + ": in the registry, not in the program");
  if (!ordered) return;
  std::vector<std::string> pc, rc;  // the common names, in each side's order
  for (const std::string& n : pn) if (std::find(rn.begin(), rn.end(), n) != rn.end()) pc.push_back(n);
  for (const std::string& n : rn) if (std::find(pn.begin(), pn.end(), n) != pn.end()) rc.push_back(n);
  if (pc != rc) out.push_back(prefix + what + " order " + join(pc) + " in the program, " + join(rc) + " in the registry");
}

}  // namespace

const TableDef* Program::table(std::string_view name) const { return find_named(tables, name); }
const ActionDef* Program::action(std::string_view name) const { return find_named(actions, name); }
const SelectorDef* Program::selector(std::string_view name) const { return find_named(selectors, name); }
const ExternDef* Program::extern_named(std::string_view name) const { return find_named(externs, name); }

const Program& registry() {
  static const Program p = make_registry();
  return p;
}

std::vector<std::string> compare(const Program& program, const Program& registry) {
  std::vector<std::string> out;
  Diff diff{out};
  auto by_name = [](const auto& x) { return x.name; };
  match_lists(out, "", "table", false, program.tables, registry.tables, by_name, [&](const TableDef& p, const TableDef& r) {
    const std::string t = "table " + p.name + ": ";
    diff(t + "control ", p.control, r.control);
    match_lists(out, t, "key", true, p.keys, r.keys, [](const KeyDef& k) { return k.field; },
                [&](const KeyDef& pk, const KeyDef& rk) {
                  diff(t + "key " + pk.field + ": match ", match_kind_name(pk.match), match_kind_name(rk.match));
                  diff(t + "key " + pk.field + ": bits ", uint32_t{pk.bits}, uint32_t{rk.bits});
                });
    match_lists(out, t, "action", false, p.actions, r.actions, [](const std::string& a) { return a; },
                [](const std::string&, const std::string&) {});
    diff(t + "default_action ", p.default_action, r.default_action);
    diff(t + "default_action arguments ", p.default_args, r.default_args);
    diff(t + "implementation ", p.implementation, r.implementation);
    diff(t + "size ", p.size, r.size);
  });
  match_lists(out, "", "action", false, program.actions, registry.actions, by_name, [&](const ActionDef& p, const ActionDef& r) {
    const std::string a = "action " + p.name + ": ";
    match_lists(out, a, "param", true, p.params, r.params, [](const ParamDef& x) { return x.name; },
                [&](const ParamDef& pp, const ParamDef& rp) {
                  diff(a + "param " + pp.name + ": bits ", uint32_t{pp.bits}, uint32_t{rp.bits});
                });
  });
  match_lists(out, "", "selector", false, program.selectors, registry.selectors, by_name,
              [&](const SelectorDef& p, const SelectorDef& r) {
                const std::string s = "selector " + p.name + ": ";
                diff(s + "algorithm ", p.algorithm, r.algorithm);
                diff(s + "size ", p.size, r.size);
                diff(s + "output width ", p.output_width, r.output_width);
              });
  match_lists(out, "", "extern", false, program.externs, registry.externs, by_name, [&](const ExternDef& p, const ExternDef& r) {
    const std::string e = p.kind + " " + p.name + ": ";
    diff(e + "kind ", p.kind, r.kind);
    diff(e + "size ", p.size, r.size);
    diff(e + "type ", p.type, r.type);
  });
  return out;
}

}  // namespace rs::p4
