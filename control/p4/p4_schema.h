// The P4 program in the control plane's terms: tables (keys, match kinds, widths, actions,
// default action, size, implementation), the actions they name (control-plane parameters and
// widths) and the action selectors / profiles. Two independent descriptions fill it:
// registry() (p4_registry.cc), written by hand, which the control plane programs the switch
// through; and parse_p4() (p4_parser.cc), which reads p4/roceswitch.p4. compare() says where
// they disagree, so neither can drift from the other unnoticed (tests/unit/control/
// p4_conformance_test.cc).
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace rs::p4 {

enum class MatchKind { Exact, Lpm, Ternary, Range, Optional, Selector };

// The P4 spelling: "exact", "lpm", "ternary", "range", "optional", "selector".
constexpr std::string_view match_kind_name(MatchKind k) {
  switch (k) {
    case MatchKind::Exact: return "exact";
    case MatchKind::Lpm: return "lpm";
    case MatchKind::Ternary: return "ternary";
    case MatchKind::Range: return "range";
    case MatchKind::Optional: return "optional";
    case MatchKind::Selector: return "selector";
  }
  return "?";
}

struct KeyDef {
  std::string field;  // as written: "hdr.ipv4.dst_addr"
  MatchKind match;
  uint16_t bits;
  bool operator==(const KeyDef&) const = default;
};

struct ParamDef {
  std::string name;
  uint16_t bits;
  bool operator==(const ParamDef&) const = default;
};

// Control-plane (directionless) parameters only: in / out / inout ones are bound by the
// program where it calls the action, never by a table entry.
struct ActionDef {
  std::string name;
  std::vector<ParamDef> params;
  bool operator==(const ActionDef&) const = default;
};

struct TableDef {
  std::string name;
  std::string control;                    // "RoceIngress"
  std::vector<KeyDef> keys;
  std::vector<std::string> actions;       // action names, in order
  std::string default_action;
  std::vector<std::string> default_args;  // as written, e.g. {"1"}
  std::string implementation;             // "" or the selector / profile name
  uint32_t size = 0;
  bool operator==(const TableDef&) const = default;
};

// An action_selector(algorithm, size, output_width) instance. An action_profile(size) is
// listed here too, with algorithm "" and output_width 0 (it selects nothing).
struct SelectorDef {
  std::string name;
  std::string algorithm;  // the HashAlgorithm member: "identity", "crc32"...
  uint32_t size = 0;
  uint32_t output_width = 0;
  bool operator==(const SelectorDef&) const = default;
};

// A counter(size, CounterType.kind) or register<bit<W>>(size) instance: what BMv2's
// counter_read / register_read name. `type`: the counter's kind (packets, bytes,
// packets_and_bytes) or the register's width ("16").
struct ExternDef {
  std::string kind;  // "counter" or "register"
  std::string name;
  uint32_t size = 0;
  std::string type;
  bool operator==(const ExternDef&) const = default;
};

// Actions: exactly those some table lists (NoAction included when listed), each once.
struct Program {
  std::vector<ActionDef> actions;
  std::vector<TableDef> tables;
  std::vector<SelectorDef> selectors;
  std::vector<ExternDef> externs;

  const TableDef* table(std::string_view name) const;
  const ActionDef* action(std::string_view name) const;
  const SelectorDef* selector(std::string_view name) const;
  const ExternDef* extern_named(std::string_view name) const;
};

// what(): "source:line: reason".
struct ParseError : std::runtime_error {
  ParseError(const std::string& source, int line, const std::string& reason);
  std::string source;
  int line;
  std::string reason;
};

// Parses the subset of P4_16 (v1model) that p4/roceswitch.p4 uses. Throws ParseError.
Program parse_p4(std::string_view text, const std::string& source);

// The control plane's mirror of p4/roceswitch.p4 (p4_registry.cc).
const Program& registry();

// Every difference, both directions, one human-readable line each, e.g.
// "table ipv4_lpm: key meta.flow_hash: match selector in the program, exact in the registry".
// Empty: the two agree.
std::vector<std::string> compare(const Program& program, const Program& registry);

}  // namespace rs::p4
