// The pipeline loader: the built-in graphs load, every malformed graph is refused with the file
// and the reason, and running a burst moves each packet along the edge its stage chose, whether
// the stage returns the one edge its whole burst took (and the pipeline moves the burst whole)
// or kNextMixed (and the pipeline reads next[] packet by packet).
#include "dataplane/core/pipeline.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "pipelines_embedded.h"
#include "tests/support/constants.h"
#include "tests/support/stage_harness.h"
#include "tests/support/worker_rig.h"

namespace rs::test {
namespace {

TEST(Pipeline, BuiltInGraphLoadsInOrder) {
  for (const auto& [text, name] : {std::pair{kPipelineL3Roce, "l3_roce"}, std::pair{kPipelineL3RoceGeneral, "l3_roce_general"}}) {
    SCOPED_TRACE(name);
    PipelineSpec s = parse_pipeline(text, std::string(name) + ".yaml");
    EXPECT_EQ(s.name, name);
    ASSERT_FALSE(s.nodes.empty());
    Pipeline p(s, StageEnv{});
    // Topological order: the entry first, every edge points forward.
    const auto& nodes = p.nodes();
    EXPECT_EQ(nodes.front().name, s.nodes.front().name);
    for (std::size_t i = 0; i < nodes.size(); ++i)
      for (auto t : nodes[i].target) EXPECT_GT(t, i) << nodes[i].name;
    EXPECT_EQ(nodes.back().name.empty(), false);
  }
}

TEST(Pipeline, GeneralGraphUsesEveryStageInItsGeneralForm) {
  // A stage with a specialised form registers its general sibling as <name>_general: the
  // general graph must use the sibling wherever there is one.
  const PipelineSpec general = parse_pipeline(kPipelineL3RoceGeneral, "l3_roce_general.yaml");
  bool any_general = false;
  for (const auto& n : general.nodes) {
    EXPECT_EQ(StageRegistry::find(n.stage + "_general"), nullptr) << n.name << " uses " << n.stage;
    any_general |= n.stage.ends_with("_general");
  }
  EXPECT_TRUE(any_general);
}

TEST(Pipeline, DotNamesEveryEdge) {
  const PipelineSpec s = parse_pipeline(kPipelineL3Roce, "l3_roce.yaml");
  const std::string dot = pipeline_to_dot(s);
  std::size_t edges = 0;
  for (const auto& n : s.nodes) {
    EXPECT_NE(dot.find("\"" + n.name + "\" [shape=box label=\"" + n.name + "\\n(" + n.stage + ")\"]"), std::string::npos)
        << n.name << "\n" << dot;
    for (const auto& [edge, target] : n.next) {
      ++edges;
      EXPECT_NE(dot.find("\"" + n.name + "\" -> \"" + target + "\" [label=\"" + edge + "\"]"), std::string::npos)
          << n.name << " " << edge << "\n" << dot;
    }
  }
  EXPECT_GE(edges, 4u);
}

struct BadGraph {
  const char* name;
  const char* yaml;
  const char* reason;
};

class PipelineBad : public ::testing::TestWithParam<BadGraph> {};

TEST_P(PipelineBad, Refused) {
  try {
    parse_pipeline(GetParam().yaml, "bad.yaml");
    FAIL() << "accepted";
  } catch (const std::runtime_error& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind("bad.yaml: ", 0), 0u) << msg;
    EXPECT_NE(msg.find(GetParam().reason), std::string::npos) << msg;
  }
}

INSTANTIATE_TEST_SUITE_P(
    All, PipelineBad,
    ::testing::Values(
        BadGraph{"unknown_stage", "nodes: [{name: x, stage: warp_drive}]", "unknown stage 'warp_drive'"},
        BadGraph{"unwired_edge", "nodes: [{name: l3_input, next: {ipv4: mac_control, ipv6: mac_control}}, {name: mac_control}]",
                 "edge 'mac_control' of stage 'l3_input' is not wired"},
        BadGraph{"undeclared_edge",
                 "nodes: [{name: l3_input, next: {ipv4: mac_control, ipv6: mac_control, mac_control: mac_control, local: mac_control, bridge: mac_control,"
                 " teleport: mac_control}}, {name: mac_control}]",
                 "has no edge 'teleport'"},
        BadGraph{"unknown_target", "nodes: [{name: l3_input, next: {ipv4: nowhere, ipv6: nowhere, mac_control: nowhere, local: nowhere, bridge: nowhere}}]",
                 "unknown node 'nowhere'"},
        BadGraph{"cycle",
                 "nodes: [{name: l3_input, next: {ipv4: a, ipv6: a, mac_control: mac_control, local: mac_control, bridge: mac_control}},"
                 " {name: a, stage: nexthop_select, next: {rewrite: b}}, {name: b, stage: nexthop_select, next: {rewrite: a}},"
                 " {name: mac_control}]",
                 "cycle"},
        BadGraph{"unreachable", "nodes: [{name: mac_control}, {name: rewrite_enqueue}]", "unreachable"},
        BadGraph{"duplicate", "nodes: [{name: mac_control}, {name: mac_control}]", "duplicate node"},
        BadGraph{"unknown_key", "pipeline: x\ncolour: red\nnodes: [{name: mac_control}]", "unknown key"},
        BadGraph{"empty", "pipeline: x\nnodes: []", "non-empty list"},
        BadGraph{"syntax", "nodes: [", ""}),
    [](const ::testing::TestParamInfo<BadGraph>& i) { return std::string(i.param.name); });

// The built-in graphs on one worker's wiring: a routed packet ends in its egress queue, one
// without a route and a MAC control frame end dropped with their reasons, and the nodes saw
// the packets that took an edge to them. The general graph sends the routed one through
// nexthop_select; the default one chooses its ECMP member in the route step.
class PipelineBuiltIn : public ::testing::TestWithParam<bool> {};

TEST_P(PipelineBuiltIn, RunMovesEachPacketAlongItsEdge) {
  const bool general = GetParam();
  WorkerRig w;
  w.route("10.0.2.0/24", 1, "02:00:00:00:00:21");
  w.load_pipeline(general ? kPipelineL3RoceGeneral : kPipelineL3Roce);
  const unsigned before = rte_mempool_avail_count(test_pool());
  w.run({Eth{} / Ipv4{.dst = "10.0.2.9"} / Udp{} / Bth{}, Eth{} / Ipv4{.dst = "10.9.9.9"} / Udp{} / Bth{},
         Eth{.dst = "01:80:c2:00:00:01"} / MacCtl{.class_enable = 8}});
  EXPECT_EQ(rte_mempool_avail_count(test_pool()), before - 1) << "three in, two dropped and freed once, one queued";
  auto drops = [&](DropReason r) { return w.counters.port_drops[0][static_cast<std::size_t>(r)].get(); };
  EXPECT_EQ(drops(DropReason::NoRoute), 1u);
  EXPECT_EQ(drops(DropReason::MacControl), 1u);
  w.publish();
  EXPECT_EQ(w.egress(1).queued_packets(), 1u) << "the routed one, queued on its egress port";
  for (uint16_t p : {0, 2, 3}) EXPECT_EQ(w.egress(p).queued_packets(), 0u) << p;
  std::map<std::string, uint64_t> seen;
  for (auto& n : w.pipeline->nodes()) seen[n.name] = n.packets.get();
  EXPECT_EQ(w.pipeline->nodes().front().packets.get(), 3u);
  EXPECT_EQ(seen["mac_control"], 1u);
  EXPECT_EQ(seen["nexthop_select"], general ? 1u : 0u);
  EXPECT_EQ(seen["ipv6_route"], 0u);
}

INSTANTIATE_TEST_SUITE_P(Graphs, PipelineBuiltIn, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& i) { return i.param ? "l3_roce_general" : "l3_roce"; });

// --- process()'s return value: the one edge the whole burst took, or kNextMixed -------------
//
// Test stages, registered in this binary only. Each takes its orders from the test through a
// global (stages are built by the registry from a StageEnv) and each sink records the packets
// it received, in order, before freeing them.

uint8_t g_single_edge = 0;         // t_single: the edge every packet takes, and process() returns
std::vector<uint8_t> g_mixed_plan;  // t_mixed: next[i] for packet i (0 beyond the plan)

// Every packet takes g_single_edge, and process() returns it.
class TSingle final : public StageBase<TSingle> {
 public:
  static constexpr std::string_view kName = "t_single";
  static constexpr std::array<std::string_view, 2> kNext = {"a", "b"};
  static constexpr std::array<std::string_view, 0> kCounters = {};
  explicit TSingle(const StageEnv&) {}
  uint8_t process(Burst& in, uint8_t* next, WorkerContext&) override {
    for (uint16_t i = 0; i < in.n; ++i) {
      next[i] = g_single_edge;
      if (g_single_edge == kNextDrop) meta(in.pkts[i]).drop_reason = DropReason::NoRoute;
    }
    return g_single_edge;
  }
};
REGISTER_STAGE(TSingle);

// Packet i takes g_mixed_plan[i] (a, b or kNextDrop); process() returns kNextMixed, even when
// the plan happens to send every packet one way.
class TMixed final : public StageBase<TMixed> {
 public:
  static constexpr std::string_view kName = "t_mixed";
  static constexpr std::array<std::string_view, 2> kNext = {"a", "b"};
  static constexpr std::array<std::string_view, 0> kCounters = {};
  explicit TMixed(const StageEnv&) {}
  uint8_t process(Burst& in, uint8_t* next, WorkerContext&) override {
    for (uint16_t i = 0; i < in.n; ++i) {
      next[i] = i < g_mixed_plan.size() ? g_mixed_plan[i] : 0;
      if (next[i] == kNextDrop) meta(in.pkts[i]).drop_reason = DropReason::NoRoute;
    }
    return kNextMixed;
  }
};
REGISTER_STAGE(TMixed);

// Records and frees what it gets: every packet consumed, and process() says so when
// `kSingle`, else returns kNextMixed (the pipeline then reads next[]).
template <bool kSingle>
class TSinkBase : public StageBase<TSinkBase<kSingle>> {
 public:
  static constexpr std::string_view kName = kSingle ? "t_consume" : "t_sink";
  static constexpr std::array<std::string_view, 0> kNext = {};
  static constexpr std::array<std::string_view, 0> kCounters = {};
  explicit TSinkBase(const StageEnv&) {}
  uint8_t process(Burst& in, uint8_t* next, WorkerContext&) override {
    for (uint16_t i = 0; i < in.n; ++i) {
      got.push_back(in.pkts[i]);  // the pointer only: compared, never read after the free
      rte_pktmbuf_free(in.pkts[i]);
      next[i] = kNextConsumed;
    }
    return kSingle ? kNextConsumed : kNextMixed;
  }
  std::vector<rte_mbuf*> got;
};
using TSink = TSinkBase<false>;
using TConsume = TSinkBase<true>;
REGISTER_STAGE(TSink);
REGISTER_STAGE(TConsume);

class PipelineEdges : public ::testing::Test {
 protected:
  void SetUp() override {
    g_single_edge = 0;
    g_mixed_plan.clear();
  }
  void load(const char* yaml) { p = std::make_unique<Pipeline>(parse_pipeline(yaml, "t.yaml"), StageEnv{}); }
  // A burst of `n` empty packets from port 0; remembers them in `sent`.
  Burst burst(uint16_t n) {
    Burst b;
    for (uint16_t i = 0; i < n; ++i) {
      rte_mbuf* m = rte_pktmbuf_alloc(test_pool());
      EXPECT_NE(m, nullptr);
      meta(m) = PacketMeta{};
      b.push(m);
      sent.push_back(m);
    }
    return b;
  }
  // Runs `n` packets through the pipeline; every one must be freed exactly once.
  void run(uint16_t n) {
    Burst b = burst(n);
    const unsigned before = rte_mempool_avail_count(test_pool());
    p->run(b, w.ctx);
    EXPECT_EQ(rte_mempool_avail_count(test_pool()), before + n) << "every packet must be freed once";
    EXPECT_EQ(b.n, 0u);
  }
  const Pipeline::Node& node(const std::string& name) const {
    for (auto& n : p->nodes())
      if (n.name == name) return n;
    ADD_FAILURE() << "no node " << name;
    return p->nodes().front();
  }
  template <typename T>
  const std::vector<rte_mbuf*>& got(const std::string& name) const {
    return dynamic_cast<const T&>(*node(name).stage).got;
  }
  const std::vector<rte_mbuf*>& sink(const std::string& name) const { return got<TSink>(name); }
  // The packets sent, by index.
  std::vector<rte_mbuf*> pick(std::initializer_list<int> idx) const {
    std::vector<rte_mbuf*> v;
    for (int i : idx) v.push_back(sent[static_cast<std::size_t>(i)]);
    return v;
  }
  uint64_t drops(DropReason r) const { return w.counters.port_drops[0][static_cast<std::size_t>(r)].get(); }

  TestWorld w;
  std::unique_ptr<Pipeline> p;
  std::vector<rte_mbuf*> sent;
};

constexpr const char* kSingleToSinks =
    "nodes: [{name: split, stage: t_single, next: {a: sa, b: sb}}, {name: sa, stage: t_sink}, {name: sb, stage: t_sink}]";

TEST_F(PipelineEdges, ReturnedEdgeGetsTheWholeBurstInOrder) {
  load(kSingleToSinks);
  g_single_edge = 1;  // b
  run(7);
  EXPECT_EQ(sink("sb"), pick({0, 1, 2, 3, 4, 5, 6}));
  EXPECT_TRUE(sink("sa").empty());
  EXPECT_EQ(node("sb").packets.get(), 7u);
  EXPECT_EQ(node("sa").packets.get(), 0u);
  // The other edge, on the next burst: the pipeline's bursts are whole again between runs.
  g_single_edge = 0;
  run(kBurst);
  EXPECT_EQ(sink("sa").size(), kBurst);
  EXPECT_EQ(sink("sa").front(), sent[7]);
  EXPECT_EQ(sink("sa").back(), sent.back());
  EXPECT_EQ(sink("sb").size(), 7u);
  EXPECT_EQ(node("split").calls.get(), 2u);
}

TEST_F(PipelineEdges, ReturnedEdgeAppendsToATargetThatAlreadyHasPackets) {
  // mix sends 1 and 3 straight to sb, the rest to split; split then returns b, and its four
  // packets must follow the two already waiting at sb (appended, not swapped over them).
  load("nodes: [{name: mix, stage: t_mixed, next: {a: split, b: sb}},"
       " {name: split, stage: t_single, next: {a: sa, b: sb}}, {name: sa, stage: t_sink}, {name: sb, stage: t_sink}]");
  g_mixed_plan = {0, 1, 0, 1, 0, 0};
  g_single_edge = 1;
  run(6);
  EXPECT_EQ(sink("sb"), pick({1, 3, 0, 2, 4, 5}));
  EXPECT_TRUE(sink("sa").empty());
  EXPECT_EQ(node("split").packets.get(), 4u);
  EXPECT_EQ(node("sb").packets.get(), 6u);
  EXPECT_EQ(node("sb").calls.get(), 1u) << "one call with all six";
}

TEST_F(PipelineEdges, ReturnedConsumedLeavesThePacketsToTheStage) {
  // The stage freed every packet itself: the pipeline must neither free nor forward any.
  load("nodes: [{name: take, stage: t_consume}]");
  run(9);
  EXPECT_EQ(got<TConsume>("take"), pick({0, 1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(drops(DropReason::NoRoute), 0u);
}

TEST_F(PipelineEdges, ReturnedDropDropsTheWholeBurstWithItsReasons) {
  load(kSingleToSinks);
  g_single_edge = kNextDrop;
  run(5);
  EXPECT_EQ(drops(DropReason::NoRoute), 5u);
  EXPECT_TRUE(sink("sa").empty());
  EXPECT_TRUE(sink("sb").empty());
}

TEST_F(PipelineEdges, MixedStageAfterASingleEdgeOneHasItsEdgesHonoured) {
  // split returns a and hands its whole burst to mix; mix returns kNextMixed and sends its
  // packets three ways: the pipeline must read mix's next[] packet by packet.
  load("nodes: [{name: split, stage: t_single, next: {a: mix, b: sb}},"
       " {name: mix, stage: t_mixed, next: {a: sa, b: sb}}, {name: sa, stage: t_sink}, {name: sb, stage: t_sink}]");
  g_single_edge = 0;
  g_mixed_plan = {0, 1, 1, kNextDrop, 0, 1, kNextDrop, 0};
  run(8);
  EXPECT_EQ(sink("sa"), pick({0, 4, 7}));
  EXPECT_EQ(sink("sb"), pick({1, 2, 5}));
  EXPECT_EQ(drops(DropReason::NoRoute), 2u);
  EXPECT_EQ(node("mix").packets.get(), 8u);
}

TEST_F(PipelineEdges, MixedStageWhosePacketsTookOneEdgeStillDeliversThemAll) {
  // kNextMixed is always allowed, even when every packet happens to take one edge.
  load("nodes: [{name: mix, stage: t_mixed, next: {a: sa, b: sb}}, {name: sa, stage: t_sink}, {name: sb, stage: t_sink}]");
  g_mixed_plan = std::vector<uint8_t>(5, 1);
  run(5);
  EXPECT_EQ(sink("sb"), pick({0, 1, 2, 3, 4}));
  // Only the last packet differs: the pipeline must look at every one.
  g_mixed_plan = {1, 1, 1, 1, 0};
  run(5);
  EXPECT_EQ(sink("sa"), pick({9}));
  EXPECT_EQ(sink("sb"), pick({0, 1, 2, 3, 4, 5, 6, 7, 8}));
  // All dropped.
  g_mixed_plan = std::vector<uint8_t>(4, kNextDrop);
  run(4);
  EXPECT_EQ(drops(DropReason::NoRoute), 4u);
  EXPECT_EQ(sink("sb").size(), 9u);
}

// What the harness does with process()'s return value: a stage that returns its one edge
// has every packet on that edge, a kNextMixed one has each on its own.
TEST(StageHarness, UsesTheEdgeProcessReturns) {
  StageHarness<TSingle> single;
  g_single_edge = 1;
  auto out = single.run({Eth{} / Ipv4{} / Udp{}, Eth{} / Ipv4{} / Udp{}});
  EXPECT_EQ(out[1].size(), 2u);
  EXPECT_TRUE(out[0].empty());
  StageHarness<TMixed> mixed;
  g_mixed_plan = {1, 0, kNextDrop};
  auto out2 = mixed.run({Eth{} / Ipv4{} / Udp{}, Eth{} / Ipv4{} / Udp{}, Eth{} / Ipv4{} / Udp{}});
  EXPECT_EQ(out2[0].size(), 1u);
  EXPECT_EQ(out2[1].size(), 1u);
  EXPECT_EQ(out2.dropped(), 1u);
  g_single_edge = 0;
  g_mixed_plan.clear();
}

}  // namespace
}  // namespace rs::test
