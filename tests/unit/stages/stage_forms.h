// The property test's (step_forms_test.cc) seed, metadata comparison and FIB, and the rig that
// runs each step in both forms on copies of the same frames. The whole switches: switch_forms.h.
#pragma once
#include <fmt/core.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "dataplane/stages/ip_route.h"
#include "dataplane/stages/l3_input.h"
#include "dataplane/stages/nexthop_select.h"
#include "dataplane/stages/parse.h"
#include "tests/support/constants.h"  // kT0
#include "tests/support/seeded_rng.h"
#include "tests/support/stage_harness.h"
#include "tests/unit/stages/frame_gen.h"

namespace rs::test {

inline uint64_t test_seed() {
  const char* e = std::getenv("RS_TEST_SEED");
  return e ? std::strtoull(e, nullptr, 0) : 0x5EED5EEDull;
}
inline std::string seed_note(uint64_t seed) { return fmt::format("seed {:#x} (replay: RS_TEST_SEED={:#x})", seed, seed); }

// --- Metadata, field by field ------------------------------------------------------------------

struct MetaField {
  const char* name;
  std::size_t offset, size;
};
inline constexpr MetaField kMetaFields[] = {
    {"in_port", 0, 2},    {"trace", 2, 2},     {"out_port", 4, 2}, {"l3_offset", 6, 2},  {"l4_offset", 8, 2},
    {"group", 10, 2},     {"flow_hash", 12, 4}, {"nexthop", 16, 4}, {"l3", 20, 1},        {"flags", 21, 1},
    {"pcp", 22, 1},       {"dscp", 23, 1},     {"ecn", 24, 1},     {"tc", 25, 1},        {"queue", 26, 1},
    {"ip_proto", 27, 1},  {"bth_opcode", 28, 1}, {"drop_reason", 29, 1}, {"dest_qp", 32, 4},
    {"psn", 36, 4},       {"vlan", 40, 2}};
// Bytes 30 and 31 are padding, not a field: a compiler may keep or rewrite them in any store of
// the struct (clang's value-initialisation zeroes them, a field-by-field fill leaves them), so
// the forms are not compared there.
static_assert(sizeof(PacketMeta) == 44);

// "" when equal, else the first field that differs and both values.
inline std::string meta_diff(const PacketMeta& a, const PacketMeta& b) {
  const auto* pa = reinterpret_cast<const uint8_t*>(&a);
  const auto* pb = reinterpret_cast<const uint8_t*>(&b);
  for (const MetaField& f : kMetaFields) {
    uint64_t va = 0, vb = 0;
    std::memcpy(&va, pa + f.offset, f.size);
    std::memcpy(&vb, pb + f.offset, f.size);
    if (va != vb) return fmt::format("meta.{}: {:#x} vs {:#x}", f.name, va, vb);
  }
  return "";
}
inline std::string edge_diff(uint8_t a, uint8_t b) { return a == b ? "" : fmt::format("edge {:#x} vs {:#x}", a, b); }

// What an mbuf's last life left in its metadata.
inline PacketMeta garbage_meta(Rng& rng) {
  PacketMeta m;
  auto* p = reinterpret_cast<uint8_t*>(&m);
  for (std::size_t i = 0; i < sizeof m; i += 8) {
    const uint64_t r = rng.next();
    std::memcpy(p + i, &r, std::min<std::size_t>(8, sizeof m - i));
  }
  return m;
}

inline uint64_t stage_counter(const Stage& s, std::string_view name) {
  const auto names = s.counter_names();
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return s.counters()[i].get();
  ADD_FAILURE() << s.name() << " has no counter " << name;
  return 0;
}

// --- The FIB of both levels (frame_gen.h aims at it) --------------------------------------------

struct RouteDef {
  std::string prefix;
  std::vector<uint16_t> ports;  // one next hop each
  std::string policy = "ecmp";
};
inline constexpr uint16_t kFormsPorts = 5;
inline constexpr uint32_t kFormsSeed = 0x5EED;

// Ports 0..3 carry the ECMP and single next-hop routes, port 4 the groups of the test policy
// (step_forms_mirror, registered by step_forms_test.cc: a policy that is more than the table).
inline std::vector<RouteDef> forms_routes() {
  std::vector<RouteDef> v;
  for (uint16_t p = 0; p < 4; ++p) {
    v.push_back({fmt::format("10.0.{}.0/24", p), {p}});
    v.push_back({fmt::format("2001:db8:{}::/48", p), {p}});
  }
  v.push_back({"10.1.0.0/16", {0, 1, 2, 3}});
  v.push_back({"10.2.0.0/16", {1, 2, 3}});
  v.push_back({"2001:db8:100::/40", {0, 1, 2, 3}});
  v.push_back({"10.9.0.0/16", {9}});  // a port the switch does not have
  v.push_back({"10.3.0.0/16", {4, 4}, "step_forms_mirror"});
  v.push_back({"2001:db8:300::/40", {4, 4, 4}, "step_forms_mirror"});
  return v;
}
inline rte_ether_addr member_mac(uint16_t port, std::size_t k) {
  return rte_ether_addr{{0x02, 0, 0, 0, static_cast<uint8_t>(0xb0 + k), static_cast<uint8_t>(port)}};
}
inline std::string member_mac_str(uint16_t port, std::size_t k) { return fmt::format("02:00:00:00:{:02x}:{:02x}", 0xb0 + k, port); }

// --- Step by step ---------------------------------------------------------------------------------

struct StepStats {
  int common_shape = 0, general_only = 0, split = 0, cnp = 0, mac_control = 0;
  uint64_t routed_inline = 0, routed_by_policy = 0;
  std::array<uint64_t, kNumDropReasons> drops{};
};

// Each step in both forms, on two copies of each frame: parse_frame's two forms; l3_input and
// l3_input_general under three QoS maps; ipv4_route / ipv6_route (+ nexthop_select for what they
// send on) against their general forms + nexthop_select, each over its own copy of the FIB.
class StepRig {
 public:
  StepRig() {
    QosMaps custom = QosMaps::sonic_default();
    custom.dscp_to_tc[26] = 3;
    custom.cnp_queue = 6;
    custom.tc_to_queue = {1, 0, 2, 4, 3, 5, 7, 2};
    QosMaps pcp = custom;
    pcp.trust = QosTrust::Pcp;
    pcp.pcp_to_tc = {1, 0, 2, 3, 4, 5, 6, 7};
    qos_ = {QosMaps::sonic_default(), custom, pcp};
    for (const auto& q : qos_) {
      l3_fast_.push_back(std::make_unique<L3Input>(StageEnv{.qos = &q, .hash_seed = kFormsSeed}));
      l3_general_.push_back(std::make_unique<L3InputGeneral>(StageEnv{.qos = &q, .hash_seed = kFormsSeed}));
    }
    for (TestWorld* w : {&wf_, &wg_})
      for (const RouteDef& d : forms_routes()) {
        std::vector<std::pair<uint16_t, std::string>> members;
        for (std::size_t k = 0; k < d.ports.size(); ++k) members.push_back({d.ports[k], member_mac_str(d.ports[k], k)});
        w->route_group(d.prefix, members, d.policy);
      }
  }

  // Runs the frames (one burst) through every step in both forms; "" or the first difference.
  std::string run(const std::vector<GenFrame>& frames, Rng& rng) {
    const std::size_t n = frames.size();
    std::vector<PacketMeta> garbage;
    std::vector<uint16_t> port;
    std::vector<rte_mbuf*> a, b;
    std::string diff;
    for (std::size_t i = 0; i < n; ++i) {
      garbage.push_back(garbage_meta(rng));
      port.push_back(static_cast<uint16_t>(rng.between(0, kFormsPorts - 1)));
      a.push_back(gen_mbuf(frames[i], test_pool(), garbage[i], port[i]));
      b.push_back(gen_mbuf(frames[i], test_pool(), garbage[i], port[i]));
      if (!a.back() || !b.back()) diff = "test pool exhausted";
    }
    // 1. The parse itself.
    for (std::size_t i = 0; i < n && diff.empty(); ++i) {
      parse::Tally ta, tb, tc;
      const auto ra = parse::parse_frame<parse::kCommonShapeFirst>(a[i], meta(a[i]), kFormsSeed, ta);
      const auto rb = parse::parse_frame<parse::kGeneral>(b[i], meta(b[i]), kFormsSeed, tb);
      PacketMeta scratch = garbage[i];
      (parse::parse_common_shape(a[i], scratch, kFormsSeed, tc) ? stats.common_shape : stats.general_only)++;
      stats.split += frames[i].split != 0;
      if (ra != rb) diff = fmt::format("parse_frame: {} vs {}", static_cast<int>(ra), static_cast<int>(rb));
      else if (auto d = meta_diff(meta(a[i]), meta(b[i])); !d.empty()) diff = "parse_frame: " + d;
      else if (counted(ta) != counted(tb))
        diff = fmt::format("parse_frame: tallies (ipv4 ipv6 vlan udp roce cnp) {} vs {}", fmt::join(counted(ta), " "),
                           fmt::join(counted(tb), " "));
      if (!diff.empty())
        diff = fmt::format("frame {} ({} bytes, split {}, ol_flags {:#x}, result {}): {}\n  {:02x}", i, frames[i].bytes.size(), frames[i].split,
                           frames[i].ol_flags, static_cast<int>(ra), diff, fmt::join(frames[i].bytes, " "));
    }
    // 2. l3_input in both forms, under each QoS map.
    uint8_t ea[kBurst], eb[kBurst];
    for (std::size_t k = 0; k < qos_.size() && diff.empty(); ++k) {
      Burst ba, bb;
      for (std::size_t i = 0; i < n; ++i) {
        meta(a[i]) = meta(b[i]) = garbage[i];
        meta(a[i]).in_port = meta(b[i]).in_port = port[i];
        meta(a[i]).trace = meta(b[i]).trace = 0;
        ba.push(a[i]);
        bb.push(b[i]);
      }
      const uint8_t wa = l3_fast_[k]->process(ba, ea, wf_.ctx), wb = l3_general_[k]->process(bb, eb, wg_.ctx);
      if (wa != wb) diff = fmt::format("l3_input (qos {}): whole-burst edge {:#x} vs {:#x}", k, wa, wb);
      for (std::size_t i = 0; i < n && diff.empty(); ++i) {
        std::string d = edge_diff(ea[i], eb[i]);
        if (d.empty()) d = meta_diff(meta(a[i]), meta(b[i]));
        if (!d.empty()) diff = fmt::format("frame {}: l3_input (qos {}): {}", i, k, d);
      }
    }
    for (std::size_t i = 0; i < n && diff.empty(); ++i) {
      if (ea[i] == kNextDrop) ++stats.drops[static_cast<std::size_t>(meta(a[i]).drop_reason)];
      stats.mac_control += ea[i] == L3Input::MacControl;
      stats.cnp += (ea[i] <= L3Input::Ipv6) && (meta(a[i]).flags & meta_flag::kCnp);
    }
    // 3. The route step: member inline (or by the policy) against always by the policy.
    if (diff.empty()) {
      std::vector<uint8_t> fa, fb;
      route(r4f_, r6f_, sel_f_, wf_, a, ea, fa);
      route(r4g_, r6g_, sel_g_, wg_, b, eb, fb);
      for (std::size_t i = 0; i < n && diff.empty(); ++i) {
        std::string d = edge_diff(fa[i], fb[i]);
        if (d.empty()) d = meta_diff(meta(a[i]), meta(b[i]));
        if (!d.empty()) diff = fmt::format("frame {}: route: {}", i, d);
        if (fa[i] == kNextDrop) ++stats.drops[static_cast<std::size_t>(meta(a[i]).drop_reason)];
      }
    }
    for (auto* m : a) rte_pktmbuf_free(m);
    for (auto* m : b) rte_pktmbuf_free(m);
    stats.routed_inline = stage_counter(r4f_, "member_inline") + stage_counter(r6f_, "member_inline");
    stats.routed_by_policy = stage_counter(sel_f_, "selected");
    return diff;
  }

  // Both forms counted the same: the parse and classify counters; the route's hits, misses and
  // expiries; members chosen and bad next hops, wherever each form chose them.
  void expect_same_counters() {
    for (std::size_t k = 0; k < qos_.size(); ++k)
      for (auto name : L3Input::kCounters)
        EXPECT_EQ(stage_counter(*l3_fast_[k], name), stage_counter(*l3_general_[k], name)) << name << ", qos " << k;
    for (auto name : {"hit", "miss", "ttl_expired"}) EXPECT_EQ(stage_counter(r4f_, name), stage_counter(r4g_, name)) << name;
    for (auto name : {"hit", "miss", "hop_limit_expired"}) EXPECT_EQ(stage_counter(r6f_, name), stage_counter(r6g_, name)) << name;
    EXPECT_EQ(stage_counter(r4f_, "member_inline") + stage_counter(r6f_, "member_inline") + stage_counter(sel_f_, "selected"),
              stage_counter(sel_g_, "selected"));
    EXPECT_EQ(stage_counter(r4f_, "bad_nexthop") + stage_counter(r6f_, "bad_nexthop") + stage_counter(sel_f_, "bad_nexthop"),
              stage_counter(sel_g_, "bad_nexthop"));
  }

  StepStats stats;

 private:
  // What a tally of one packet counts, as l3_input publishes it: a packet of the common shape
  // (one the general form did not see) is IPv4, UDP, and RoCE unless counted as not.
  static std::array<uint32_t, 6> counted(const parse::Tally& t) {
    const uint32_t common = 1 - t.general;
    return {t.ipv4 + common, t.ipv6, t.vlan, t.udp + common, t.roce + common - t.common_not_roce, t.cnp};
  }

  // Routes the packets l3_input sent on ipv4/ipv6; fate[i]: 0 (rewrite: a member chosen),
  // kNextDrop, or 0xEE (not routed).
  template <typename R4, typename R6>
  static void route(R4& r4, R6& r6, NexthopSelect& sel, TestWorld& w, const std::vector<rte_mbuf*>& pkts, const uint8_t* l3_edge,
                    std::vector<uint8_t>& fate) {
    fate.assign(pkts.size(), 0xEE);
    Burst to_select;
    std::vector<std::size_t> at_select;
    uint8_t next[kBurst];
    for (int v6 = 0; v6 < 2; ++v6) {
      Burst b;
      std::vector<std::size_t> at;
      for (std::size_t i = 0; i < pkts.size(); ++i)
        if (l3_edge[i] == (v6 ? L3Input::Ipv6 : L3Input::Ipv4)) {
          b.push(pkts[i]);
          at.push_back(i);
        }
      if (b.n == 0) continue;
      if (v6) r6.process(b, next, w.ctx);
      else r4.process(b, next, w.ctx);
      for (uint16_t k = 0; k < b.n; ++k) {
        if (next[k] == R4::Select) {
          to_select.push(b.pkts[k]);
          at_select.push_back(at[k]);
        } else {
          fate[at[k]] = next[k];
        }
      }
    }
    if (to_select.n == 0) return;
    sel.process(to_select, next, w.ctx);
    for (uint16_t k = 0; k < to_select.n; ++k) fate[at_select[k]] = next[k];
  }

  std::vector<QosMaps> qos_;
  std::vector<std::unique_ptr<L3Input>> l3_fast_;
  std::vector<std::unique_ptr<L3InputGeneral>> l3_general_;
  TestWorld wf_{kFormsPorts}, wg_{kFormsPorts};
  Ipv4Route r4f_{StageEnv{}};
  Ipv6Route r6f_{StageEnv{}};
  Ipv4RouteGeneral r4g_{StageEnv{}};
  Ipv6RouteGeneral r6g_{StageEnv{}};
  NexthopSelect sel_f_{StageEnv{}}, sel_g_{StageEnv{}};
};

}  // namespace rs::test
