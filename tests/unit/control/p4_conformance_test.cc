// The control plane's table registry (control/p4/p4_registry.cc) against the P4 program it
// mirrors (p4/roceswitch.p4, found under RS_SOURCE_ROOT): they must agree table by table, key
// by key, action by action, width by width. Drift on either side must be caught, so the real
// file and a copy of the registry are mutated and each mutation must be reported by name.
// The parser's own cases come last.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "control/p4/p4_schema.h"

namespace fs = std::filesystem;
using rs::p4::compare;
using rs::p4::MatchKind;
using rs::p4::parse_p4;
using rs::p4::ParseError;
using rs::p4::Program;
using rs::p4::registry;

namespace {

// RS_SOURCE_ROOT under meson test; run by hand, the first directory above the executable
// that holds the program.
fs::path program_path() {
  if (const char* root = std::getenv("RS_SOURCE_ROOT")) return fs::path(root) / "p4" / "roceswitch.p4";
  std::error_code ec;
  for (fs::path d = fs::read_symlink("/proc/self/exe", ec).parent_path(); !d.empty() && d != d.root_path();
       d = d.parent_path())
    if (fs::exists(d / "p4" / "roceswitch.p4")) return d / "p4" / "roceswitch.p4";
  return {};
}

std::string real_program() {
  const fs::path p = program_path();
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string lines(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += "  " + x + "\n";
  return s;
}

// `text` with `from` (which must occur exactly once) replaced by `to`.
std::string mutate(const std::string& text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << "the program no longer contains: " << from;
  EXPECT_EQ(text.find(from, at + 1), std::string::npos) << "more than one: " << from;
  if (at == std::string::npos) return text;
  return text.substr(0, at) + to + text.substr(at + from.size());
}

// compare() reports something, and one line mentions every one of `needles`.
void expect_reported(const std::vector<std::string>& diffs, const std::vector<std::string>& needles) {
  ASSERT_FALSE(diffs.empty()) << "the drift went unnoticed";
  bool found = false;
  for (const std::string& d : diffs) {
    bool all = true;
    for (const std::string& n : needles) all = all && d.find(n) != std::string::npos;
    found = found || all;
  }
  std::string want;
  for (const std::string& n : needles) want += " '" + n + "'";
  EXPECT_TRUE(found) << "no difference names" << want << "; got:\n" << lines(diffs);
}

std::vector<std::string> drift(const std::string& from, const std::string& to) {
  return compare(parse_p4(mutate(real_program(), from, to), "mutated.p4"), registry());
}

class P4Conformance : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(program_path().empty()) << "p4/roceswitch.p4 not found: set RS_SOURCE_ROOT";
    ASSERT_FALSE(real_program().empty()) << program_path() << " is empty or unreadable";
  }
};

// ---- the real program

TEST_F(P4Conformance, RegistryMirrorsTheProgram) {
  const Program program = parse_p4(real_program(), program_path().string());
  for (const std::string& d : compare(program, registry())) ADD_FAILURE() << d;
  // A sanity floor, so an empty parse cannot pass by agreeing with an empty registry.
  EXPECT_GE(program.tables.size(), 8u);
  ASSERT_NE(program.table("ipv4_lpm"), nullptr);
  EXPECT_EQ(program.table("ipv4_lpm")->implementation, "nexthop_selector");
  ASSERT_NE(program.selector("nexthop_selector"), nullptr);
  EXPECT_EQ(program.selector("nexthop_selector")->size, 16384u);
  EXPECT_EQ(program.table("ipv6_lpm")->keys.at(0).bits, 128u);
  EXPECT_EQ(program.table("mirror_ingress")->keys.at(0).bits, 9u);
  EXPECT_TRUE(compare(registry(), registry()).empty());
}

// ---- drift in the program

TEST_F(P4Conformance, DeletedKeyIsReported) {
  expect_reported(drift("key = { hdr.ipv4.dst_addr: lpm; meta.flow_hash: selector; }",
                        "key = { hdr.ipv4.dst_addr: lpm; }"),
                  {"table ipv4_lpm", "key meta.flow_hash", "in the registry, not in the program"});
}

TEST_F(P4Conformance, ChangedMatchKindIsReported) {
  expect_reported(drift("hdr.ipv6.dst_addr: lpm;", "hdr.ipv6.dst_addr: ternary;"),
                  {"table ipv6_lpm: key hdr.ipv6.dst_addr: match ternary in the program, lpm in the registry"});
}

TEST_F(P4Conformance, RenamedActionParamIsReported) {
  const auto d = drift("action set_nexthop(bit<9> port,", "action set_nexthop(bit<9> out_port,");
  expect_reported(d, {"action set_nexthop", "param out_port", "in the program, not in the registry"});
  expect_reported(d, {"action set_nexthop", "param port", "in the registry, not in the program"});
}

TEST_F(P4Conformance, ChangedParamWidthIsReported) {
  expect_reported(drift("action set_tc(bit<3> tc)", "action set_tc(bit<4> tc)"),
                  {"action set_tc: param tc: bits 4 in the program, 3 in the registry"});
}

TEST_F(P4Conformance, ChangedFieldWidthReachesTheKey) {
  expect_reported(drift("bit<32> src_addr;  bit<32> dst_addr;", "bit<32> src_addr;  bit<31> dst_addr;"),
                  {"table ipv4_lpm: key hdr.ipv4.dst_addr: bits 31 in the program, 32 in the registry"});
}

TEST_F(P4Conformance, ActionDroppedFromATableIsReported) {
  expect_reported(drift("actions = { set_queue; NoAction; }", "actions = { set_queue; }"),
                  {"table tc_to_queue", "action NoAction", "in the registry, not in the program"});
}

TEST_F(P4Conformance, CountersAndRegistersAreCompared) {
  expect_reported(drift("counter(512, CounterType.packets_and_bytes) port_rx_counter;", "counter(512, CounterType.packets) port_rx_counter;"),
                  {"counter port_rx_counter: type packets in the program, packets_and_bytes in the registry"});
  expect_reported(drift("register<bit<16>>(512 * 8) pfc_rx_quanta;", "register<bit<16>>(512 * 4) pfc_rx_quanta;"),
                  {"register pfc_rx_quanta: size 2048 in the program, 4096 in the registry"});
  expect_reported(drift("counter(512, CounterType.packets_and_bytes) port_tx_counter;", ""),
                  {"extern port_tx_counter: in the registry, not in the program"});
}

TEST_F(P4Conformance, RemovedTableIsReported) {
  const std::string text = real_program();
  const size_t b = text.find("    table port_mac {");
  ASSERT_NE(b, std::string::npos);
  const size_t e = text.find("    }\n", b) + 6;
  const std::string removed = text.substr(0, b) + text.substr(e);
  const auto d = compare(parse_p4(removed, "mutated.p4"), registry());
  expect_reported(d, {"table port_mac: in the registry, not in the program"});
  expect_reported(d, {"action rewrite_smac: in the registry, not in the program"});  // listed by no table now
}

TEST_F(P4Conformance, ExtraTableIsReported) {
  expect_reported(drift("    table ipv6_lpm {",
                        "    table acl { key = { hdr.ipv4.src_addr: ternary; } actions = { drop; NoAction; }\n"
                        "                default_action = NoAction(); size = 256; }\n"
                        "    table ipv6_lpm {"),
                  {"table acl: in the program, not in the registry"});
}

TEST_F(P4Conformance, ChangedDefaultsAndSizesAreReported) {
  expect_reported(drift("default_action = set_tc(1);", "default_action = set_tc(2);"),
                  {"table dscp_to_tc: default_action arguments (2) in the program, (1) in the registry"});
  expect_reported(drift("32w16384, 32w32) nexthop_selector;", "32w8192, 32w32) nexthop_selector;"),
                  {"selector nexthop_selector: size 8192 in the program, 16384 in the registry"});
}

// ---- drift in the registry

TEST_F(P4Conformance, RegistryWithoutATableIsReported) {
  const Program program = parse_p4(real_program(), "roceswitch.p4");
  Program reg = registry();
  std::erase_if(reg.tables, [](const auto& t) { return t.name == "mirror_egress"; });
  expect_reported(compare(program, reg), {"table mirror_egress: in the program, not in the registry"});
}

TEST_F(P4Conformance, RegistryWithAnExtraParamIsReported) {
  const Program program = parse_p4(real_program(), "roceswitch.p4");
  Program reg = registry();
  for (auto& a : reg.actions)
    if (a.name == "set_nexthop") a.params.push_back({"vlan", 12});
  expect_reported(compare(program, reg), {"action set_nexthop: param vlan: in the registry, not in the program"});
}

TEST_F(P4Conformance, RegistryWithReorderedKeysIsReported) {
  const Program program = parse_p4(real_program(), "roceswitch.p4");
  Program reg = registry();
  for (auto& t : reg.tables)
    if (t.name == "ipv4_lpm") std::swap(t.keys[0], t.keys[1]);
  expect_reported(compare(program, reg), {"table ipv4_lpm: key order"});
}

// ---- the parser

constexpr const char* kPrelude = R"(#include <core.p4>
#include <v1model.p4>
typedef bit<10> vid_t;
struct inner_t { vid_t vid; bit<5> x; }
header h_t { bit<7> f; bit<16> g; }
struct headers_t { h_t h; }
struct meta_t { inner_t in1; bit<32> hash; }
)";

Program parse(const std::string& body) { return parse_p4(std::string(kPrelude) + body, "test.p4"); }

TEST(P4Parser, SkipsCommentsAndPreprocessorContinuations) {
  const Program p = parse(R"(
// table fake1 { key = { meta.hash: exact; } }
/* table fake2 {
   } */
#define BROKEN { hdr.h.f, \
    table fake3 { ; \
    }}}
control C(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t standard_metadata) {
    action a() { }   /* a comment */ // another
    table real { key = { hdr.h.f: exact; } actions = { a; } default_action = a(); }
    apply { real.apply(); if (true) { BROKEN; } }
}
V1Switch(P(), V(), C(), E(), CC(), D()) main;
)");
  ASSERT_EQ(p.tables.size(), 1u);
  EXPECT_EQ(p.tables[0].name, "real");
  EXPECT_EQ(p.tables[0].control, "C");
  EXPECT_EQ(p.tables[0].keys.at(0).bits, 7u);
}

TEST(P4Parser, SkipsDirectionalParams) {
  const Program p = parse(R"(
control C(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t standard_metadata) {
    action a(in bit<8> x, bit<9> port, inout bit<4> y, out bit<2> z, vid_t vid) { }
    table t { key = { meta.hash: exact; } actions = { a; } }
    apply { }
}
)");
  ASSERT_NE(p.action("a"), nullptr);
  EXPECT_EQ(p.action("a")->params, (std::vector<rs::p4::ParamDef>{{"port", 9}, {"vid", 10}}));
}

TEST(P4Parser, HandlesDefaultOnlyAndOtherTableProperties) {
  const Program p = parse(R"(
action top(bit<3> q) { }
control C(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t standard_metadata) {
    direct_counter(CounterType.packets) hits;
    table t {
        key = { hdr.h.g: ternary @name("gee"); }
        actions = { top; @defaultonly NoAction; }
        const default_action = NoAction();
        counters = hits;
        const entries = { 0x0800 &&& 0xffff : top(3); }
        support_timeout = false;
        size = 32w1024;
    }
    apply { t.apply(); }
}
)");
  const auto* t = p.table("t");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->actions, (std::vector<std::string>{"top", "NoAction"}));
  EXPECT_EQ(t->default_action, "NoAction");
  EXPECT_TRUE(t->default_args.empty());
  EXPECT_EQ(t->size, 1024u);
  EXPECT_EQ(t->keys.at(0).match, MatchKind::Ternary);
  ASSERT_EQ(p.actions.size(), 2u);  // only the listed actions: top, NoAction
  EXPECT_EQ(p.action("top")->params.at(0).bits, 3u);
}

TEST(P4Parser, ResolvesKeyWidthsThroughStructsAndStandardMetadata) {
  const Program p = parse(R"(
control C(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    action a() { }
    action_selector(HashAlgorithm.crc16, 32w0x400, 8w10) sel;
    action_profile(128) prof;
    register<bit<16>>(512 * 8) r;
    bit<8> local = 8w3;
    table t {
        key = { m.in1.vid: exact; m.in1.x: lpm; h.h.g[11:4]: range; sm.egress_spec: optional;
                sm.instance_type: exact; sm.ingress_port: exact; m.hash: selector; }
        actions = { a; }
        implementation = sel;
    }
    apply { }
}
)");
  const auto* t = p.table("t");
  ASSERT_NE(t, nullptr);
  std::vector<uint16_t> bits;
  for (const auto& k : t->keys) bits.push_back(k.bits);
  EXPECT_EQ(bits, (std::vector<uint16_t>{10, 5, 8, 9, 32, 9, 32}));
  EXPECT_EQ(t->keys.at(2).field, "h.h.g[11:4]");
  EXPECT_EQ(t->implementation, "sel");
  ASSERT_NE(p.selector("sel"), nullptr);
  EXPECT_EQ(*p.selector("sel"), (rs::p4::SelectorDef{"sel", "crc16", 1024, 10}));
  ASSERT_NE(p.selector("prof"), nullptr);
  EXPECT_EQ(p.selector("prof")->size, 128u);
}

// The line of the fault: prelude lines + the line within the body.
int body_line(int n) {
  int prelude = 0;
  for (const char* c = kPrelude; *c; ++c) prelude += *c == '\n';
  return prelude + n;
}

void expect_error_at(const std::string& body, int line_in_body, const std::string& reason) {
  try {
    parse(body);
    ADD_FAILURE() << "no error for:\n" << body;
  } catch (const ParseError& e) {
    EXPECT_EQ(e.line, body_line(line_in_body)) << e.what();
    EXPECT_NE(std::string(e.what()).find("test.p4:" + std::to_string(body_line(line_in_body)) + ": "), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find(reason), std::string::npos) << e.what();
  }
}

TEST(P4Parser, ErrorsNameTheirLine) {
  expect_error_at(R"(control C(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t standard_metadata) {
    action a() { }
    /* a comment
       over lines */
    table t {
        key = { hdr.h.f: fuzzy; }
    }
    apply { }
})",
                  6, "unknown match kind 'fuzzy'");
  expect_error_at(R"(control C(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t standard_metadata) {
    action a() { }
    table t {
        key = { hdr.h.nope: exact; }
    }
})",
                  4, "no field 'nope'");
  expect_error_at(R"(control C(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t standard_metadata) {
    table t {
        key = { hdr.h.f: exact; }
        actions = { missing; }
        size = 16
    }
})",
                  6, "expected ';'");
  expect_error_at(R"(
control C(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t standard_metadata) {
    table t {
        key = { hdr.h.f: exact; }
        actions = { missing; }
    }
    apply { }
})",
                  3, "unknown action 'missing'");
}

}  // namespace
