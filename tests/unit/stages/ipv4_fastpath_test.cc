// ipv4_fastpath, the entry node of l3_roce: every packet it finishes must leave exactly as
// parser -> qos_classify -> ipv4_lpm -> nexthop_group -> egress_rewrite -> tm_enqueue would
// leave it (same frame bytes, same metadata, same egress port and queue, or the same handoff
// worker); every other shape goes on `slow` untouched but for its metadata (in_port kept), so
// the general stages name the same drop; and each packet is counted once under local,
// handoff, slow_path or (with a per-packet policy) bad_nexthop.
#include "dataplane/stages/fast/ipv4_fastpath.h"

#include <arpa/inet.h>
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "dataplane/core/pipeline.h"
#include "dataplane/mmu/shared_buffer.h"
#include "dataplane/queues/egress_port.h"
#include "dataplane/tables/qos_maps.h"
#include "pipelines_embedded.h"
#include "tests/support/stage_harness.h"
#include "tests/unit/stages/stage_test_util.h"

namespace rs::test {
namespace {

constexpr uint16_t kPorts = 4;
constexpr uint16_t kInPort = 1;
constexpr int8_t kCnpQueue = 6;
constexpr uint8_t kTtl = 64;

// SONiC's map with RoCE's DSCP 26 on TC3, a tc -> queue map that is not the identity (a path
// that put the TC where the queue belongs, or skipped the map, shows) and CNPs steered to a
// queue of their own.
QosMaps make_qos() {
  QosMaps q = QosMaps::sonic_default();
  q.dscp_to_tc[26] = 3;
  q.tc_to_queue = {1, 0, 2, 4, 3, 5, 7, 2};
  q.cnp_queue = kCnpQueue;
  return q;
}
const QosMaps kQos = make_qos();
// One env for both pipelines: the same maps and the same (non-zero) flow-hash seed.
StageEnv env() { return StageEnv{.qos = &kQos, .hash_seed = 0x5EED0123}; }

uint8_t expected_queue(uint8_t dscp, bool cnp) {
  return cnp ? static_cast<uint8_t>(kCnpQueue) : kQos.tc_to_queue[kQos.dscp_to_tc[dscp]];
}

std::string nh_mac(int port, int member = 0) { return fmt::format("02:00:00:00:{:02x}:{:02x}", 0xb0 + member, port); }

// A second routing policy: with it in the FIB no policy is uniform, so both paths ask each
// packet's group for its own answer instead of handing the burst to one policy.
class MirrorTablePolicy final : public RoutingPolicy {
 public:
  uint32_t select(const PacketMeta& m, const NextHopGroup& g, const PortLoad&, uint64_t) override {
    return g.table[~m.flow_hash & g.mask];
  }
};

// 10.0.P.0/24 -> port P (P = 0, 1, 2), 10.0.8.0/24 -> port 3, three ECMP groups (4, 3 and 2
// members; the last under MirrorTablePolicy when `mirror` is given), a next hop on a port the
// world does not have (10.0.9.0/24 -> port 9), and an IPv6 route for the IPv6 slow shape.
void add_routes(TestWorld& w, int mirror_policy) {
  for (uint16_t p = 0; p < 3; ++p) w.route(fmt::format("10.0.{}.0/24", p), p, nh_mac(p));
  w.route("10.0.8.0/24", 3, nh_mac(3));
  w.route_group("10.0.3.0/24", {{0, nh_mac(0, 1)}, {1, nh_mac(1, 1)}, {2, nh_mac(2, 1)}, {3, nh_mac(3, 1)}});
  w.route_group("10.0.4.0/24", {{3, nh_mac(3, 2)}, {1, nh_mac(1, 2)}, {0, nh_mac(0, 2)}});
  if (mirror_policy < 0) {
    w.route_group("10.0.5.0/24", {{2, nh_mac(2, 3)}, {3, nh_mac(3, 3)}});
  } else {
    NextHopGroup g;
    g.name = "mirror";
    g.policy = static_cast<uint16_t>(mirror_policy);
    g.members = {w.fib->add_nexthop({2, mac(nh_mac(2, 3))}), w.fib->add_nexthop({3, mac(nh_mac(3, 3))})};
    RouteSpec r;
    EXPECT_EQ(inet_pton(AF_INET, "10.0.5.0", r.addr), 1);
    r.depth = 24;
    r.group = w.fib->add_group(std::move(g));
    w.fib->add_route(r);
    EXPECT_EQ(w.fib->uniform_policy(), -1);
  }
  w.route("10.0.9.0/24", 9, nh_mac(9));
  w.route("2001:db8:2::/64", 3, nh_mac(3, 4));
}

// Which worker owns each port's egress; this worker is 0.
using Owners = std::array<uint8_t, kPorts>;
constexpr Owners kAllLocal = {0, 0, 0, 0};
constexpr Owners kAllRemote = {1, 2, 3, 4};

// A worker's view of the switch running the built-in l3_roce pipeline, with or without its
// ipv4_fastpath entry node (without it the parser is the entry, as before the stage existed).
// Egress ports have no Port behind them: packets stay queued where the test can read them.
class Rig {
 public:
  // full_admission: egress ports on a shared pool that can fill, so their admission reads each
  // packet's metadata.
  Rig(bool fast, const Owners& owners = kAllLocal, bool mirror = false, bool full_admission = false) {
    PipelineSpec s = parse_pipeline(kPipelineL3Roce, "l3_roce.yaml");
    EXPECT_EQ(s.nodes.at(0).name, "ipv4_fastpath");
    if (!fast) s.nodes.erase(s.nodes.begin());
    pipe = std::make_unique<Pipeline>(s, env());
    int mirror_policy = -1;
    if (mirror) {
      w.policy_ptrs.push_back(&mirror_);
      w.ctx.policies = w.policy_ptrs.data();  // the vector may have moved
      mirror_policy = static_cast<int>(w.policy_ptrs.size() - 1);
    }
    add_routes(w, mirror_policy);
    w.ctx.fib = w.fib.get();
    for (uint16_t p = 0; p < kPorts; ++p) {
      if (full_admission) {
        if (!sb) {
          MmuConfig mc;
          mc.pool.size = 1u << 20;
          sb = std::make_unique<SharedBuffer>(mc, std::vector<PortLosslessConfig>(kPorts), 1, uint64_t{1} << 30);
        }
        egress[p] = std::make_unique<EgressPort>(p, nullptr, EgressConfig{}, 0, sb.get(), 0, PortLosslessConfig{},
                                                 test_pool());
      } else {
        egress[p] = std::make_unique<EgressPort>(p, nullptr, EgressConfig{}, 0);
      }
      // As a Worker wires it: ctx.egress names only the ports this worker owns.
      egress_ptrs[p] = owners[p] == 0 ? egress[p].get() : nullptr;
      w.port_owner[p] = owners[p];
    }
    w.ctx.egress = egress_ptrs;
    w.ctx.handoff = handoff;
  }
  ~Rig() {
    drain();
    free_all(handed);
    for (auto& e : egress) e->flush(w.ctx, DropReason::Shutdown);
  }

  // Builds the packets (received on in_port) and runs them through the pipeline in bursts of
  // kBurst, as the worker does. Returns the mbufs in input order: the caller may read one only
  // if it was queued or handed off (a dropped one is freed).
  std::vector<rte_mbuf*> run(const std::vector<PacketSpec>& specs, uint16_t in_port = kInPort) {
    std::vector<rte_mbuf*> v;
    for (const auto& s : specs) {
      // A stale in_port in the metadata, as an mbuf's last life leaves it: the pipeline's
      // entry must write the rx port where anything reads it.
      rte_mbuf* m = s.mbuf(test_pool(), static_cast<uint16_t>(in_port + 2));
      EXPECT_NE(m, nullptr) << "test pool exhausted";
      if (m) v.push_back(m);
    }
    w.ctx.rx_port = in_port;  // as the worker says which port a burst came in on
    for (std::size_t at = 0; at < v.size(); at += kBurst) {
      Burst b;
      for (std::size_t i = at; i < v.size() && b.n < kBurst; ++i) b.push(v[i]);
      pipe->run(b, w.ctx);
      drain();  // a worker flushes its handoff bursts to the rings after every burst
    }
    for (auto& e : egress) e->publish_counters();
    return v;
  }

  uint64_t counter(std::string_view node, std::string_view name) const {
    for (const auto& n : pipe->nodes()) {
      if (n.name != node) continue;
      const auto names = n.stage->counter_names();
      for (std::size_t i = 0; i < names.size(); ++i)
        if (names[i] == name) return n.stage->counters()[i].get();
    }
    ADD_FAILURE() << "no counter " << node << "." << name;
    return 0;
  }
  uint64_t node_packets(std::string_view node) const {
    for (const auto& n : pipe->nodes())
      if (n.name == node) return n.packets.get();
    ADD_FAILURE() << "no node " << node;
    return 0;
  }
  std::array<uint64_t, kNumDropReasons> drops(uint16_t port = kInPort) const {
    std::array<uint64_t, kNumDropReasons> d{};
    for (std::size_t r = 0; r < kNumDropReasons; ++r) d[r] = w.counters.port_drops[port][r].get();
    return d;
  }
  uint64_t all_drops() const {
    uint64_t s = 0;
    for (uint16_t p = 0; p < kMaxPorts; ++p)
      for (auto n : drops(p)) s += n;
    return s;
  }
  // Where each queued packet sits: (port, queue). The metadata cannot say for the fast
  // path's packets on lossy local ports, which it queues without storing any.
  std::map<const rte_mbuf*, std::pair<uint16_t, uint8_t>> placement() const {
    std::map<const rte_mbuf*, std::pair<uint16_t, uint8_t>> at;
    for (uint16_t p = 0; p < kPorts; ++p)
      for (uint8_t q = 0; q < 8; ++q) {
        const PacketFifo& f = egress[p]->fifo(q);
        for (uint32_t i = 0; i < f.packets(); ++i) at[f.at(i)] = {p, q};
      }
    return at;
  }
  uint64_t queued() const {
    uint64_t s = 0;
    for (auto& e : egress) s += e->queued_packets();
    return s;
  }

  TestWorld w{kPorts};
  std::unique_ptr<SharedBuffer> sb;
  std::unique_ptr<Pipeline> pipe;
  std::unique_ptr<EgressPort> egress[kPorts];
  EgressPort* egress_ptrs[kMaxPorts] = {};
  Burst handoff[kMaxWorkers];
  std::vector<rte_mbuf*> handed;       // every packet handed to another worker, in order
  std::vector<uint8_t> handed_owner;   // ... and the worker it was handed to

 private:
  void drain() {
    for (uint8_t o = 0; o < kMaxWorkers; ++o) {
      for (uint16_t i = 0; i < handoff[o].n; ++i) {
        handed.push_back(handoff[o].pkts[i]);
        handed_owner.push_back(o);
      }
      handoff[o].clear();
    }
  }
  MirrorTablePolicy mirror_;
};

// The PacketMeta fields both paths must agree on (drop_reason is not one: nothing is dropped).
void expect_same_meta(const PacketMeta& a, const PacketMeta& b) {
#define RS_SAME(f) EXPECT_EQ(static_cast<uint64_t>(a.f), static_cast<uint64_t>(b.f)) << "meta." #f " differs"
  RS_SAME(in_port);
  RS_SAME(out_port);
  RS_SAME(l3_offset);
  RS_SAME(l4_offset);
  RS_SAME(flow_hash);
  RS_SAME(nexthop);
  RS_SAME(group);
  RS_SAME(l3);
  RS_SAME(flags);
  RS_SAME(pcp);
  RS_SAME(dscp);
  RS_SAME(ecn);
  RS_SAME(tc);
  RS_SAME(queue);
  RS_SAME(ip_proto);
  RS_SAME(bth_opcode);
  RS_SAME(dest_qp);
  RS_SAME(psn);
#undef RS_SAME
}

// A frame of the fast shape and what its queue must be.
struct Frame {
  PacketSpec spec;
  uint8_t dscp = 0;
  bool cnp = false;
  uint8_t ttl = kTtl;
};

// noinline: GCC 12 at -O2 reports a false -Wmaybe-uninitialized in std::variant's move when the
// packet builder is inlined into a loop.
[[gnu::noinline]] Frame roce(const std::string& dst, uint8_t dscp, uint8_t ecn, uint16_t sport, uint8_t opcode,
                             uint32_t n, uint8_t ttl = kTtl) {
  Frame f;
  f.spec = Eth{} / Ipv4{.src = fmt::format("10.0.1.{}", 2 + n % 200), .dst = dst, .dscp = dscp, .ecn = ecn, .ttl = ttl} /
           Udp{.sport = sport} / Bth{.opcode = opcode, .dest_qp = 0x100 + n, .psn = 0xABC000 + n * 3} /
           Payload::of_size(opcode == 0x81 ? 16 : 8 + (n * 13) % 200, static_cast<uint8_t>(n));
  f.dscp = dscp;
  f.cnp = opcode == 0x81;
  f.ttl = ttl;
  return f;
}

[[gnu::noinline]] Frame udp(const std::string& dst, uint8_t dscp, uint8_t ecn, uint16_t sport, uint16_t dport, uint32_t n,
                            uint16_t frag = 0x4000) {
  Frame f;
  f.spec = Eth{} / Ipv4{.dst = dst, .dscp = dscp, .ecn = ecn, .frag = frag} / Udp{.sport = sport, .dport = dport} /
           Payload::of_size(16 + n % 90, static_cast<uint8_t>(n));
  f.dscp = dscp;
  return f;
}

// RoCEv2 over every route (single next hop and the three ECMP groups) with five DSCPs, all
// four ECN codepoints and many UDP source ports; CNPs; plain UDP (DNS, 9000, 4792; payloads
// of at least a BTH and an ICRC, the fast shape's bound) and the TTL boundaries 2 and 255.
// More than one burst.
std::vector<Frame> equivalence_frames() {
  const std::vector<std::string> dsts = {"10.0.2.7", "10.0.3.9", "10.0.4.20", "10.0.5.33", "10.0.0.5", "10.0.8.8"};
  const std::vector<uint8_t> dscps = {0, 3, 26, 46, 48};
  std::vector<Frame> v;
  uint32_t n = 0;
  for (const auto& d : dsts)
    for (uint8_t dscp : dscps)
      for (int k = 0; k < 2; ++k, ++n)
        v.push_back(roce(d, dscp, static_cast<uint8_t>(n % 4), static_cast<uint16_t>(0xC000 + n * 251), 0x04, n));
  // Many flows into the 4-way group so every member is used.
  for (int k = 0; k < 16; ++k, ++n)
    v.push_back(roce("10.0.3.77", 26, 2, static_cast<uint16_t>(0xD000 + k * 7919), 0x0A, n));
  for (const auto& d : dsts)
    for (uint8_t dscp : {uint8_t{48}, uint8_t{26}}) {
      v.push_back(roce(d, dscp, static_cast<uint8_t>(n % 2), static_cast<uint16_t>(0xC100 + n), 0x81, n));
      ++n;
    }
  for (const auto& d : dsts) {
    v.push_back(udp(d, 10, 0, static_cast<uint16_t>(40000 + n), 53, n));
    ++n;
    v.push_back(udp(d, 46, 1, static_cast<uint16_t>(40000 + n), 9000, n));
    ++n;
  }
  v.push_back(udp("10.0.3.1", 0, 0, 4791, 4792, n++));  // RoCE's port as the source only
  v.push_back(udp("10.0.4.2", 26, 1, 40001, 9000, n++, 0x2000));  // first fragment (MF, offset 0): has its UDP header
  v.push_back(roce("10.0.2.99", 26, 0, 0xC0DE, 0x04, n++, 2));
  v.push_back(roce("10.0.4.99", 3, 3, 0xC0DF, 0x04, n++, 255));
  return v;
}

struct Mode {
  const char* name;
  Owners owners;
  bool mirror;
};
void PrintTo(const Mode& m, std::ostream* os) { *os << m.name; }

class Ipv4FastpathEquivalence : public ::testing::TestWithParam<Mode> {};

TEST_P(Ipv4FastpathEquivalence, SameFramesMetaPortAndQueueAsTheGeneralStages) {
  const Mode mode = GetParam();
  const bool local = mode.owners == kAllLocal;
  const auto frames = equivalence_frames();
  std::vector<PacketSpec> specs;
  for (const auto& f : frames) specs.push_back(f.spec);
  const std::size_t n = specs.size();
  ASSERT_GT(n, kBurst) << "more than one burst";
  const unsigned pool_before = rte_mempool_avail_count(test_pool());
  {
    Rig fast(true, mode.owners, mode.mirror);
    Rig slow(false, mode.owners, mode.mirror);
    const auto fv = fast.run(specs);
    const auto sv = slow.run(specs);
    ASSERT_EQ(fv.size(), n);
    ASSERT_EQ(sv.size(), n);
    // The comparison means something only if the fast stage finished every packet itself...
    EXPECT_EQ(fast.counter("ipv4_fastpath", local ? "local" : "handoff"), n);
    EXPECT_EQ(fast.counter("ipv4_fastpath", "slow_path"), 0u);
    EXPECT_EQ(fast.node_packets("parser"), 0u) << "the general stages must not have seen these";
    EXPECT_EQ(fast.node_packets("tm_enqueue"), 0u);
    // ...and the general stages did all of it in the other pipeline.
    EXPECT_EQ(slow.node_packets("parser"), n);
    EXPECT_EQ(slow.counter("tm_enqueue", local ? "local" : "handoff"), n);
    EXPECT_EQ(fast.counter("ipv4_fastpath", "cnp_to_queue"), slow.counter("qos_classify", "cnp_to_queue"));
    // Nothing dropped: every mbuf is still queued or handed off, so all may be read.
    ASSERT_EQ(fast.all_drops(), 0u);
    ASSERT_EQ(slow.all_drops(), 0u);
    if (local) {
      ASSERT_EQ(fast.queued(), n);
      ASSERT_EQ(slow.queued(), n);
    } else {
      ASSERT_EQ(fast.handed.size(), n);
      ASSERT_EQ(slow.handed.size(), n);
    }

    // On lossy local ports (these rigs') the fast path queues with plain ECMP without storing
    // metadata, since nothing past the queue reads it; with another policy, or for a handoff
    // (the owner reads it), it stores it all.
    const bool fast_meta = !local || mode.mirror;
    const auto fplace = fast.placement(), splace = slow.placement();
    std::map<std::pair<uint16_t, uint8_t>, uint64_t> per_queue;  // (port, queue) -> packets
    std::set<uint16_t> four_way_ports;
    for (std::size_t i = 0; i < n; ++i) {
      SCOPED_TRACE(fmt::format("frame {} (dscp {}, cnp {}, ttl {})", i, frames[i].dscp, frames[i].cnp, frames[i].ttl));
      const auto fb = mbuf_bytes(fv[i]), sb = mbuf_bytes(sv[i]);
      EXPECT_EQ(fb, sb) << "output frames differ";
      const PacketMeta& sm = meta(sv[i]);  // the general stages' metadata, always stored
      if (fast_meta) expect_same_meta(meta(fv[i]), sm);
      if (local) {
        // Each packet sits in the queue the general stages chose for it, in both rigs.
        ASSERT_EQ(fplace.count(fv[i]), 1u) << "not queued";
        EXPECT_EQ(fplace.at(fv[i]), std::make_pair(sm.out_port, sm.queue)) << "fast path's port and queue";
        EXPECT_EQ(splace.at(sv[i]), std::make_pair(sm.out_port, sm.queue));
      }
      // What both paths must have done, stated independently of either.
      ASSERT_LT(sm.out_port, kPorts);
      EXPECT_EQ(sm.queue, expected_queue(frames[i].dscp, frames[i].cnp));
      EXPECT_EQ(sm.in_port, kInPort);
      EXPECT_EQ(fb[14 + 8], frames[i].ttl - 1) << "TTL decremented";
      EXPECT_TRUE(ipv4_checksum_ok(fb));
      EXPECT_EQ(0, std::memcmp(&fb[0], fast.w.fib->nexthop(sm.nexthop).mac.addr_bytes, 6)) << "DMAC = next hop MAC";
      EXPECT_EQ(0, std::memcmp(&fb[6], fast.w.port_mac[sm.out_port].addr_bytes, 6)) << "SMAC = egress port MAC";
      ++per_queue[{sm.out_port, sm.queue}];
      if (fb[14 + 16 + 2] == 3) four_way_ports.insert(sm.out_port);  // dst 10.0.3.x
    }
    EXPECT_GE(four_way_ports.size(), 3u) << "the 4-way ECMP group should use several members";
    if (local) {
      // The egress ports agree with the metadata: each packet sits in the queue it names.
      for (uint16_t p = 0; p < kPorts; ++p)
        for (uint8_t q = 0; q < 8; ++q) {
          const auto it = per_queue.find({p, q});
          const uint64_t want = it == per_queue.end() ? 0 : it->second;
          EXPECT_EQ(fast.egress[p]->queue(q).enq_packets.get(), want) << "port " << p << " queue " << int{q};
          EXPECT_EQ(slow.egress[p]->queue(q).enq_packets.get(), want) << "port " << p << " queue " << int{q};
        }
    } else {
      // The same packets to the same workers in the same order, each to its port's owner.
      std::map<const rte_mbuf*, std::size_t> fidx, sidx;
      for (std::size_t i = 0; i < n; ++i) fidx[fv[i]] = i, sidx[sv[i]] = i;
      for (std::size_t k = 0; k < n; ++k) {
        EXPECT_EQ(fidx.at(fast.handed[k]), sidx.at(slow.handed[k])) << "handoff order, position " << k;
        EXPECT_EQ(fast.handed_owner[k], slow.handed_owner[k]);
        EXPECT_EQ(fast.handed_owner[k], mode.owners[meta(fast.handed[k]).out_port]);
      }
    }
  }
  EXPECT_EQ(rte_mempool_avail_count(test_pool()), pool_before) << "an mbuf leaked or was freed twice";
}

INSTANTIATE_TEST_SUITE_P(All, Ipv4FastpathEquivalence,
                         ::testing::Values(Mode{"LocalEgress", kAllLocal, false}, Mode{"HandedOff", kAllRemote, false},
                                           Mode{"LocalEgressPerPacketPolicy", kAllLocal, true},
                                           Mode{"HandedOffPerPacketPolicy", kAllRemote, true}),
                         [](const ::testing::TestParamInfo<Mode>& i) { return std::string(i.param.name); });

// --- Shapes the fast stage leaves to the general stages -------------------------------------

struct Shape {
  std::string name;
  PacketSpec spec;
  std::optional<DropReason> drop;  // what the general stages drop it for; none: they forward it
};

[[gnu::noinline]] PacketSpec roce_to(const std::string& dst, uint8_t ttl = kTtl) {
  return Eth{} / Ipv4{.dst = dst, .dscp = 26, .ttl = ttl} / Udp{.sport = 0xC123} / Bth{.psn = 7} / Payload::of_size(64);
}

std::vector<Shape> slow_shapes() {
  std::vector<Shape> v;
  v.push_back({"vlan_tagged_ipv4", Eth{} / Vlan{.pcp = 3, .vid = 10} / Ipv4{.dst = "10.0.2.7", .dscp = 26} / Udp{} / Bth{} /
                                       Payload::of_size(64),
               std::nullopt});
  v.push_back({"ipv6_roce", Eth{} / Ipv6{.dscp = 26} / Udp{} / Bth{} / Payload::of_size(64), std::nullopt});
  v.push_back({"ipv4_options_ihl6", Eth{} / Ipv4{.dst = "10.0.2.7", .dscp = 26, .options = {1, 1, 1, 0}} / Udp{} / Bth{} /
                                        Payload::of_size(64),
               std::nullopt});
  const auto good = roce_to("10.0.2.7").bytes();
  const auto sum = static_cast<uint16_t>(good[24] << 8 | good[25]);
  v.push_back({"bad_ipv4_checksum",
               Eth{} / Ipv4{.dst = "10.0.2.7", .dscp = 26, .checksum = static_cast<uint16_t>(sum ^ 0x0100)} / Udp{.sport = 0xC123} /
                   Bth{.psn = 7} / Payload::of_size(64),
               DropReason::BadIpv4Checksum});
  v.push_back({"ttl_1", roce_to("10.0.2.7", 1), DropReason::TtlExpired});
  v.push_back({"ttl_0", roce_to("10.0.2.7", 0), DropReason::TtlExpired});
  v.push_back({"ttl_1_and_no_route", roce_to("192.0.2.1", 1), DropReason::TtlExpired});
  v.push_back({"no_route", roce_to("192.0.2.1"), DropReason::NoRoute});
  v.push_back({"cnp_no_route", Eth{} / Ipv4{.dst = "192.0.2.1", .dscp = 48} / Udp{} / Bth{.opcode = 0x81} / Payload::of_size(16),
               DropReason::NoRoute});
  v.push_back({"mac_control_pfc", Eth{.dst = "01:80:c2:00:00:01"} / MacCtl{.class_enable = 0x08, .quanta = {0, 0, 0, 100}},
               DropReason::MacControl});
  v.push_back({"truncated_roce", roce_to("10.0.2.7").no_pad().truncate(50), DropReason::BadIpv4Length});
  v.push_back({"runt", roce_to("10.0.2.7").no_pad().truncate(10), DropReason::MalformedEth});
  v.push_back({"udp_too_short_for_bth", Eth{} / Ipv4{.dst = "10.0.2.7"} / Udp{.length = 8 + 12} / Bth{} / Payload::of_size(8),
               DropReason::MalformedBth});
  v.push_back({"later_fragment", Eth{} / Ipv4{.dst = "10.0.2.7", .frag = 0x0010} / Udp{} / Payload::of_size(40), std::nullopt});
  v.push_back({"ipv4_not_udp", Eth{} / Ipv4{.dst = "10.0.2.7", .proto = 6} / Payload::of_size(40), std::nullopt});
  // Plain UDP with less payload than a BTH and an ICRC: below the fast shape's one bound,
  // forwarded by the general stages.
  v.push_back({"udp_payload_shorter_than_bth_and_icrc",
               Eth{} / Ipv4{.dst = "10.0.2.7", .dscp = 10} / Udp{.sport = 40000, .dport = 53} / Payload::of_size(15), std::nullopt});
  // A next hop on a port the switch does not have (10.0.9.0/24's, on port 9 of a 4-port world):
  // left to nexthop_group, which drops it.
  v.push_back({"nexthop_on_missing_port", roce_to("10.0.9.1"), DropReason::BadNextHop});
  return v;
}

TEST(Ipv4Fastpath, StoresTheMetadataWhereTheEgressReadsIt) {
  // A port whose admission reads the metadata (here: a shared pool that can fill) gets every
  // packet with the metadata the general stages would have stored.
  const auto frames = equivalence_frames();
  std::vector<PacketSpec> specs;
  for (const auto& f : frames) specs.push_back(f.spec);
  const unsigned pool_before = rte_mempool_avail_count(test_pool());
  {
    Rig fast(true, kAllLocal, false, true), slow(false, kAllLocal, false, true);
    ASSERT_TRUE(fast.egress[0]->reads_metadata());
    const auto fv = fast.run(specs);
    const auto sv = slow.run(specs);
    ASSERT_EQ(fv.size(), specs.size());
    EXPECT_EQ(fast.counter("ipv4_fastpath", "local"), specs.size());
    ASSERT_EQ(fast.all_drops(), 0u);
    ASSERT_EQ(slow.all_drops(), 0u);
    const auto fplace = fast.placement();
    for (std::size_t i = 0; i < fv.size(); ++i) {
      SCOPED_TRACE(fmt::format("frame {}", i));
      expect_same_meta(meta(fv[i]), meta(sv[i]));
      EXPECT_EQ(fplace.at(fv[i]), std::make_pair(meta(sv[i]).out_port, meta(sv[i]).queue));
      EXPECT_EQ(mbuf_bytes(fv[i]), mbuf_bytes(sv[i]));
    }
  }
  EXPECT_EQ(rte_mempool_avail_count(test_pool()), pool_before) << "an mbuf leaked or was freed twice";
}

TEST(Ipv4Fastpath, SlowShapesGoOutOnSlowUntouched) {
  const auto shapes = slow_shapes();
  Rig rig(true);  // only for its world (routes, wired egress and handoff)
  StageHarness<Ipv4Fastpath> h{env(), &rig.w};
  std::vector<rte_mbuf*> in;
  // A stale in_port in the metadata (the mbuf's last life); the burst came in on kInPort.
  for (const auto& s : shapes) in.push_back(s.spec.mbuf(test_pool(), kInPort + 2));
  for (auto* m : in) ASSERT_NE(m, nullptr);
  rig.w.ctx.rx_port = kInPort;
  auto out = h.run_mbufs(in);  // one burst, all of them
  EXPECT_EQ(out.edge.size(), 1u) << "only the slow edge is used";
  ASSERT_EQ(out[Ipv4Fastpath::Slow].size(), shapes.size());
  EXPECT_EQ(out[Ipv4Fastpath::Slow], in) << "in order";
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    SCOPED_TRACE(shapes[i].name);
    EXPECT_EQ(mbuf_bytes(in[i]), shapes[i].spec.bytes()) << "the frame is untouched";
    EXPECT_EQ(meta(in[i]).in_port, kInPort) << "in_port is the rx port (this stage is the entry: it writes it)";
  }
  EXPECT_EQ(h.counter("slow_path"), shapes.size());
  EXPECT_EQ(h.counter("local"), 0u);
  EXPECT_EQ(h.counter("handoff"), 0u);
  EXPECT_EQ(h.counter("bad_nexthop"), 0u);
  EXPECT_EQ(h.counter("cnp_to_queue"), 0u) << "a CNP with no route is not the fast stage's to count";
  EXPECT_EQ(rig.queued(), 0u);
}

TEST(Ipv4Fastpath, SlowShapesMeetTheSameFateAsWithoutIt) {
  // Each shape alone through the whole default pipeline, with and without the fast stage: the
  // same named drop (or the same forwarded frame), and every mbuf back in the pool at the end.
  const auto shapes = slow_shapes();
  const unsigned pool_before = rte_mempool_avail_count(test_pool());
  {
    Rig fast(true), slow(false);
    for (const auto& s : shapes) {
      SCOPED_TRACE(s.name);
      const auto fd0 = fast.drops(), sd0 = slow.drops();
      const uint64_t fq0 = fast.queued(), sq0 = slow.queued();
      const auto fv = fast.run({s.spec});
      const auto sv = slow.run({s.spec});
      ASSERT_EQ(fv.size(), 1u);
      ASSERT_EQ(sv.size(), 1u);
      auto fd = fast.drops(), sd = slow.drops();
      for (std::size_t r = 0; r < kNumDropReasons; ++r) {
        fd[r] -= fd0[r];
        sd[r] -= sd0[r];
        EXPECT_EQ(fd[r], sd[r]) << "drops of " << kDropReasonNames[r];
      }
      if (s.drop) {
        EXPECT_EQ(fd[static_cast<std::size_t>(*s.drop)], 1u) << "expected drop " << drop_reason_name(*s.drop);
        EXPECT_EQ(fast.queued(), fq0);
        EXPECT_EQ(slow.queued(), sq0);
      } else {
        ASSERT_EQ(fast.queued(), fq0 + 1) << "forwarded by the general stages";
        ASSERT_EQ(slow.queued(), sq0 + 1);
        EXPECT_EQ(mbuf_bytes(fv[0]), mbuf_bytes(sv[0]));
        expect_same_meta(meta(fv[0]), meta(sv[0]));
      }
    }
    EXPECT_EQ(fast.counter("ipv4_fastpath", "slow_path"), shapes.size());
    EXPECT_EQ(fast.counter("ipv4_fastpath", "local"), 0u);
    EXPECT_EQ(fast.node_packets("parser"), shapes.size());
  }
  EXPECT_EQ(rte_mempool_avail_count(test_pool()), pool_before) << "an mbuf leaked or was freed twice";
}

TEST(Ipv4Fastpath, BadNextHopIsTheSameDropAsWithoutIt) {
  // 10.0.9.0/24's only next hop is on port 9 of a 4-port world.
  const unsigned pool_before = rte_mempool_avail_count(test_pool());
  {
    Rig fast(true), slow(false);
    fast.run({roce_to("10.0.9.1"), roce_to("10.0.9.2")});
    slow.run({roce_to("10.0.9.1"), roce_to("10.0.9.2")});
    EXPECT_EQ(fast.drops(), slow.drops());
    EXPECT_EQ(fast.drops()[static_cast<std::size_t>(DropReason::BadNextHop)], 2u);
    // With plain ECMP the fast stage leaves them to the general stages, which drop them.
    EXPECT_EQ(fast.counter("ipv4_fastpath", "bad_nexthop"), 0u);
    EXPECT_EQ(fast.counter("ipv4_fastpath", "slow_path"), 2u);
    EXPECT_EQ(fast.node_packets("nexthop_group"), 2u);
    EXPECT_EQ(fast.queued() + slow.queued(), 0u);
  }
  EXPECT_EQ(rte_mempool_avail_count(test_pool()), pool_before);
}

// --- Counters and handoff ----------------------------------------------------------------------

[[gnu::noinline]] PacketSpec to(const std::string& dst, bool cnp, uint16_t sport) {
  return Eth{} / Ipv4{.dst = dst, .dscp = cnp ? uint8_t{48} : uint8_t{26}} / Udp{.sport = sport} /
         Bth{.opcode = cnp ? uint8_t{0x81} : uint8_t{0x04}} / Payload::of_size(cnp ? 16 : 100);
}

TEST(Ipv4Fastpath, WithoutAnyIpv4RouteEveryPacketGoesSlow) {
  // No IPv4 route means no IPv4 LPM at all: the stage must not look anything up (the lookup
  // assumes the table exists) and hands the whole burst to the general path, which names the
  // drop.
  TestWorld w;
  w.route("2001:db8:2::/64", 1, nh_mac(1));
  ASSERT_EQ(w.fib->v4_view().lpm, nullptr);
  StageHarness<Ipv4Fastpath> h{env(), &w};
  std::vector<rte_mbuf*> in;
  for (uint16_t i = 0; i < 5; ++i) in.push_back(to("10.0.0.1", false, static_cast<uint16_t>(0xC000 + i)).mbuf(test_pool(), kInPort + 2));
  for (auto* m : in) ASSERT_NE(m, nullptr);
  w.ctx.rx_port = kInPort;
  auto out = h.run_mbufs(in);
  EXPECT_EQ(out[Ipv4Fastpath::Slow], in);
  for (auto* m : in) EXPECT_EQ(meta(m).in_port, kInPort);
  EXPECT_EQ(h.counter("slow_path"), in.size());
  EXPECT_EQ(h.counter("local") + h.counter("handoff"), 0u);
}

TEST(Ipv4Fastpath, ALoneDefaultRouteIsTakenFast) {
  // Fib::add_route creates the IPv4 LPM for a default route too, so the stage routes by it.
  TestWorld w;
  w.route("0.0.0.0/0", 1, nh_mac(1));
  ASSERT_NE(w.fib->v4_view().lpm, nullptr);
  EgressPort e(1, nullptr, EgressConfig{}, 0);
  EgressPort* egress[kMaxPorts] = {};
  egress[1] = &e;
  w.ctx.egress = egress;
  StageHarness<Ipv4Fastpath> h{env(), &w};
  auto out = h.run({to("10.0.0.1", false, 0xC000), to("192.0.2.7", false, 0xC001)}, kInPort);
  EXPECT_EQ(h.counter("local"), 2u);
  EXPECT_EQ(h.counter("slow_path"), 0u);
  e.publish_counters();
  EXPECT_EQ(e.queued_packets(), 2u);
  e.flush(w.ctx, DropReason::Shutdown);
}

class Ipv4FastpathCounters : public ::testing::TestWithParam<bool> {};

TEST_P(Ipv4FastpathCounters, AddUpToThePacketsOffered) {
  // Ports 0 and 1 are this worker's; port 2 belongs to worker 2, port 3 to worker 3. With a
  // per-packet policy in the FIB the member is chosen after the loop and a next hop on a
  // missing port is dropped here (bad_nexthop); with plain ECMP it is chosen inline and such a
  // packet goes on slow (nexthop_group drops it), its CNP not counted here.
  const bool per_packet = GetParam();
  Rig rig(true, Owners{0, 0, 2, 3}, per_packet);
  StageHarness<Ipv4Fastpath> h{env(), &rig.w};
  std::vector<PacketSpec> specs;
  uint16_t sport = 0xC000;
  auto add = [&](const std::string& dst, int n, int cnps) {
    for (int i = 0; i < n; ++i) specs.push_back(to(dst, i < cnps, sport++));
  };
  add("10.0.0.1", 7, 0);  // local, port 0
  add("10.0.1.1", 5, 1);  // local, port 1
  add("10.0.2.1", 6, 2);  // worker 2
  add("10.0.8.1", 4, 1);  // worker 3
  add("10.0.9.1", 3, 1);  // next hop on a port that does not exist
  const auto shapes = slow_shapes();
  for (const auto& s : shapes) specs.push_back(s.spec);
  ASSERT_LE(specs.size(), kBurst);
  auto out = h.run(specs, kInPort);
  for (auto& e : rig.egress) e->publish_counters();

  const uint64_t local = h.counter("local"), handoff = h.counter("handoff"), slow = h.counter("slow_path"),
                 bad = h.counter("bad_nexthop");
  EXPECT_EQ(local, 12u);
  EXPECT_EQ(handoff, 10u);
  // Three packets to 10.0.9.1 above, and one among the slow shapes (nexthop_on_missing_port).
  EXPECT_EQ(bad, per_packet ? 4u : 0u);
  EXPECT_EQ(slow, per_packet ? shapes.size() - 1 : shapes.size() + 3);
  EXPECT_EQ(local + handoff + slow + bad, specs.size()) << "every packet counted exactly once";
  // cnp_to_queue overlaps the others: every CNP steered to cnp_queue that this stage finished
  // or dropped.
  EXPECT_EQ(h.counter("cnp_to_queue"), per_packet ? 5u : 4u);

  // The counters say what happened to the packets.
  EXPECT_EQ(out[Ipv4Fastpath::Slow].size(), slow);
  ASSERT_EQ(out.dropped(), bad);
  for (auto* m : out[kNextDrop]) EXPECT_EQ(meta(m).drop_reason, DropReason::BadNextHop);
  EXPECT_EQ(rig.egress[0]->queued_packets(), 7u);
  EXPECT_EQ(rig.egress[1]->queued_packets(), 5u);
  EXPECT_EQ(rig.egress[1]->queue(kCnpQueue).enq_packets.get(), 1u) << "the CNP in its own queue";
  EXPECT_EQ(rig.queued(), local);
  EXPECT_EQ(rig.handoff[2].n, 6);
  EXPECT_EQ(rig.handoff[3].n, 4);
  EXPECT_EQ(static_cast<uint64_t>(rig.handoff[2].n + rig.handoff[3].n), handoff);
  for (int o : {0, 1, 4}) EXPECT_EQ(rig.handoff[o].n, 0) << "worker " << o;
}

INSTANTIATE_TEST_SUITE_P(PlainEcmpAndPerPacketPolicy, Ipv4FastpathCounters, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& i) { return i.param ? "PerPacketPolicy" : "PlainEcmp"; });

TEST(Ipv4Fastpath, AnotherWorkersPortGoesToItsHandoffBurst) {
  // Port 2's egress belongs to worker 5: finished packets land in ctx.handoff[5], in order,
  // rewritten and with the metadata the owner's egress port reads.
  Rig rig(true, Owners{0, 0, 5, 0});
  StageHarness<Ipv4Fastpath> h{env(), &rig.w};
  std::vector<PacketSpec> specs;
  for (uint16_t i = 0; i < 8; ++i) specs.push_back(to("10.0.2.9", i == 3, static_cast<uint16_t>(0xC000 + i)));
  std::vector<rte_mbuf*> in;
  for (const auto& s : specs) in.push_back(s.mbuf(test_pool(), kInPort));
  auto out = h.run_mbufs(in);
  EXPECT_TRUE(out.edge.empty()) << "every packet consumed";
  ASSERT_EQ(rig.handoff[5].n, 8);
  const uint32_t nh = rig.w.fib->group(2).members.at(0);  // 10.0.2.0/24 was the third route
  ASSERT_EQ(rig.w.fib->nexthop(nh).port, 2);
  for (uint16_t i = 0; i < 8; ++i) {
    SCOPED_TRACE(i);
    rte_mbuf* m = rig.handoff[5].pkts[i];
    EXPECT_EQ(m, in[i]) << "order kept";
    const PacketMeta& pm = meta(m);
    EXPECT_EQ(pm.out_port, 2);
    EXPECT_EQ(pm.nexthop, nh);
    EXPECT_EQ(pm.queue, expected_queue(i == 3 ? 48 : 26, i == 3));
    const auto f = mbuf_bytes(m);
    EXPECT_EQ(0, std::memcmp(&f[0], mac(nh_mac(2)).addr_bytes, 6));
    EXPECT_EQ(0, std::memcmp(&f[6], rig.w.port_mac[2].addr_bytes, 6));
    EXPECT_EQ(f[14 + 8], kTtl - 1);
    EXPECT_TRUE(ipv4_checksum_ok(f));
  }
  for (int o = 0; o < kMaxWorkers; ++o) {
    if (o == 5) continue;
    EXPECT_EQ(rig.handoff[o].n, 0) << "worker " << o;
  }
  EXPECT_EQ(rig.queued(), 0u) << "nothing queued on this worker";
  EXPECT_EQ(h.counter("handoff"), 8u);
  EXPECT_EQ(h.counter("local"), 0u);
  EXPECT_EQ(h.counter("cnp_to_queue"), 1u);
}

// --- The stage's promise to the pipeline -----------------------------------------------------

TEST(Ipv4Fastpath, PromisesTheConsumedEdgeOnlyWhenItTookEveryPacket) {
  // ctx.single_next = kNextConsumed lets the pipeline skip its scan of next[]: right only when
  // every packet was queued or handed off. One packet for the general stages (a bad next hop
  // too), and the pipeline must look at each packet's edge.
  Rig rig(true, Owners{0, 0, 2, 0});
  StageHarness<Ipv4Fastpath> h{env(), &rig.w};
  auto promise_after = [&](const std::vector<PacketSpec>& specs) {
    rig.w.ctx.single_next = WorkerContext::kNoSingleNext;  // as the pipeline resets it per stage
    auto out = h.run(specs, kInPort);
    return static_cast<int>(rig.w.ctx.single_next);
  };
  const int consumed = kNextConsumed, none = WorkerContext::kNoSingleNext;
  EXPECT_EQ(promise_after({roce_to("10.0.0.1"), roce_to("10.0.1.1"), roce_to("10.0.0.2")}), consumed) << "all local";
  EXPECT_EQ(promise_after({roce_to("10.0.2.1"), roce_to("10.0.0.1")}), consumed) << "handed off and local";
  EXPECT_EQ(promise_after({roce_to("10.0.0.1"), roce_to("10.0.0.2", 1)}), none) << "a TTL 1 goes on slow";
  EXPECT_EQ(promise_after({roce_to("10.0.1.1"), roce_to("10.0.9.1")}), none) << "a bad next hop goes on slow";
  EXPECT_EQ(promise_after({roce_to("10.0.0.2", 1)}), none) << "nothing taken";
}

TEST(Ipv4Fastpath, MixedBurstThroughThePipelineStillReachesTheGeneralStages) {
  // Through the real pipeline: the fast ones queued, the TTL-1 ones to the parser and dropped
  // there, the bad next hop to the general stages too (nexthop_group drops it): every packet
  // accounted for.
  const unsigned pool_before = rte_mempool_avail_count(test_pool());
  {
    Rig rig(true);
    rig.run({roce_to("10.0.0.1"), roce_to("10.0.1.7", 1), roce_to("10.0.1.1"), roce_to("10.0.9.1"),
             roce_to("10.0.0.9", 1), roce_to("10.0.2.2")});
    EXPECT_EQ(rig.queued(), 3u);
    EXPECT_EQ(rig.node_packets("parser"), 3u);
    EXPECT_EQ(rig.drops()[static_cast<std::size_t>(DropReason::TtlExpired)], 2u);
    EXPECT_EQ(rig.drops()[static_cast<std::size_t>(DropReason::BadNextHop)], 1u);
    // An all-fast burst next: nothing reaches the general stages.
    rig.run({roce_to("10.0.0.3"), roce_to("10.0.1.3")});
    EXPECT_EQ(rig.queued(), 5u);
    EXPECT_EQ(rig.node_packets("parser"), 3u);
  }
  EXPECT_EQ(rte_mempool_avail_count(test_pool()), pool_before) << "an mbuf leaked or was freed twice";
}

}  // namespace
}  // namespace rs::test
