// The pipeline loader: the built-in graph loads, every malformed graph is refused with the file
// and the reason, and running a burst moves each packet along the edge its stage chose, with
// or without the stage's promise (ctx.single_next) that the whole burst takes one edge.
#include "dataplane/core/pipeline.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "pipelines_embedded.h"
#include "tests/support/stage_harness.h"

namespace rs::test {
namespace {

TEST(Pipeline, BuiltInGraphLoadsInOrder) {
  PipelineSpec s = parse_pipeline(kPipelineL3Roce, "l3_roce.yaml");
  EXPECT_EQ(s.name, "l3_roce");
  ASSERT_FALSE(s.nodes.empty());
  // The straight-through path first; what it cannot finish goes to the general stages.
  EXPECT_EQ(s.nodes[0].name, "ipv4_fastpath");
  Pipeline p(s, StageEnv{});
  // Topological order: every edge points forward.
  const auto& nodes = p.nodes();
  for (std::size_t i = 0; i < nodes.size(); ++i)
    for (auto t : nodes[i].target) EXPECT_GT(t, i) << nodes[i].name;
  EXPECT_EQ(nodes.back().name.empty(), false);
}

TEST(Pipeline, DotNamesEveryEdge) {
  const std::string dot = pipeline_to_dot(parse_pipeline(kPipelineL3Roce, "l3_roce.yaml"));
  EXPECT_NE(dot.find("\"ipv4_fastpath\" -> \"parser\" [label=\"slow\"]"), std::string::npos) << dot;
  EXPECT_NE(dot.find("\"parser\" -> \"qos_classify\" [label=\"ip\"]"), std::string::npos) << dot;
  EXPECT_NE(dot.find("\"egress_rewrite\" -> \"tm_enqueue\""), std::string::npos);
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
        BadGraph{"unwired_edge", "nodes: [{name: parser, next: {ip: mac_control}}, {name: mac_control}]",
                 "edge 'mac_control' of stage 'parser' is not wired"},
        BadGraph{"undeclared_edge",
                 "nodes: [{name: parser, next: {ip: mac_control, mac_control: mac_control, teleport: mac_control}}, {name: mac_control}]",
                 "has no edge 'teleport'"},
        BadGraph{"unknown_target", "nodes: [{name: parser, next: {ip: nowhere, mac_control: nowhere}}]", "unknown node 'nowhere'"},
        BadGraph{"cycle",
                 "nodes: [{name: parser, next: {ip: a, mac_control: mac_control}}, {name: a, stage: ipv4_lpm, next: {group: b}},"
                 " {name: b, stage: ipv4_lpm, next: {group: a}}, {name: mac_control}]",
                 "cycle"},
        BadGraph{"unreachable", "nodes: [{name: mac_control}, {name: tm_enqueue}]", "unreachable"},
        BadGraph{"duplicate", "nodes: [{name: mac_control}, {name: mac_control}]", "duplicate node"},
        BadGraph{"unknown_key", "pipeline: x\ncolour: red\nnodes: [{name: mac_control}]", "unknown key"},
        BadGraph{"empty", "pipeline: x\nnodes: []", "non-empty list"},
        BadGraph{"syntax", "nodes: [", ""}),
    [](const ::testing::TestParamInfo<BadGraph>& i) { return std::string(i.param.name); });

TEST(Pipeline, RunMovesEachPacketAlongItsEdge) {
  // A minimal graph: parser; IP goes to tm_enqueue would need egress, so route MAC control only.
  PipelineSpec s = parse_pipeline(
      "nodes: [{name: parser, next: {ip: qos_classify, mac_control: mac_control}}, {name: mac_control},"
      " {name: qos_classify, next: {ipv4: v4, ipv6: v6}}, {name: v4, stage: ipv4_lpm, next: {group: nh}},"
      " {name: v6, stage: ipv6_lpm, next: {group: nh}}, {name: nh, stage: nexthop_group, next: {rewrite: mac_control2}},"
      " {name: mac_control2, stage: mac_control}]",
      "t.yaml");
  // The last node is a mac_control: routed packets end there and are dropped as malformed MAC
  // control, which is enough to see that they travelled the whole graph.
  Pipeline p(s, StageEnv{});
  TestWorld w;
  w.route("10.0.2.0/24", 1, "02:00:00:00:00:21");
  w.ctx.fib = w.fib.get();
  Burst b;
  b.push((Eth{} / Ipv4{.dst = "10.0.2.9"} / Udp{} / Bth{}).mbuf(test_pool()));
  b.push((Eth{} / Ipv4{.dst = "10.9.9.9"} / Udp{} / Bth{}).mbuf(test_pool()));
  b.push((Eth{.dst = "01:80:c2:00:00:01"} / MacCtl{.class_enable = 8}).mbuf(test_pool()));
  const unsigned before = rte_mempool_avail_count(test_pool());
  p.run(b, w.ctx);
  EXPECT_EQ(rte_mempool_avail_count(test_pool()), before + 3) << "every packet must be freed once";
  auto drops = [&](DropReason r) { return w.counters.port_drops[0][static_cast<std::size_t>(r)].get(); };
  EXPECT_EQ(drops(DropReason::NoRoute), 1u);
  EXPECT_EQ(drops(DropReason::MacControl), 1u);
  EXPECT_EQ(drops(DropReason::MalformedMacControl), 1u);  // the routed one, at the end of the graph
  for (auto& n : p.nodes())
    if (n.name == "nh") {
      EXPECT_EQ(n.packets.get(), 1u);
    }
}

// --- ctx.single_next: a stage's promise that its whole burst takes one edge ------------------
//
// Test stages, registered in this binary only. Each takes its orders from the test through a
// global (stages are built by the registry from a StageEnv) and each sink records the packets
// it received, in order, before freeing them.

uint8_t g_promise_edge = 0;           // t_promise: the edge every packet takes, and is promised
std::vector<uint8_t> g_mixed_plan;    // t_mixed: next[i] for packet i (0 beyond the plan)
std::vector<int> g_single_seen;       // single_next as each t_mixed call found it (before writing)

// Every packet takes g_promise_edge, and the stage says so.
class TPromise final : public StageBase<TPromise> {
 public:
  static constexpr std::string_view kName = "t_promise";
  static constexpr std::array<std::string_view, 2> kNext = {"a", "b"};
  static constexpr std::array<std::string_view, 0> kCounters = {};
  explicit TPromise(const StageEnv&) {}
  void process(Burst& in, uint8_t* next, WorkerContext& ctx) override {
    for (uint16_t i = 0; i < in.n; ++i) next[i] = g_promise_edge;
    ctx.single_next = g_promise_edge;
  }
};
REGISTER_STAGE(TPromise);

// Packet i takes g_mixed_plan[i] (a, b or kNextDrop); no promise.
class TMixed final : public StageBase<TMixed> {
 public:
  static constexpr std::string_view kName = "t_mixed";
  static constexpr std::array<std::string_view, 2> kNext = {"a", "b"};
  static constexpr std::array<std::string_view, 0> kCounters = {};
  explicit TMixed(const StageEnv&) {}
  void process(Burst& in, uint8_t* next, WorkerContext& ctx) override {
    g_single_seen.push_back(ctx.single_next);
    for (uint16_t i = 0; i < in.n; ++i) {
      next[i] = i < g_mixed_plan.size() ? g_mixed_plan[i] : 0;
      if (next[i] == kNextDrop) meta(in.pkts[i]).drop_reason = DropReason::NoRoute;
    }
  }
};
REGISTER_STAGE(TMixed);

// Records and frees what it gets: consumed, and promised as consumed when `kPromise`.
template <bool kPromise>
class TSinkBase : public StageBase<TSinkBase<kPromise>> {
 public:
  static constexpr std::string_view kName = kPromise ? "t_consume" : "t_sink";
  static constexpr std::array<std::string_view, 0> kNext = {};
  static constexpr std::array<std::string_view, 0> kCounters = {};
  explicit TSinkBase(const StageEnv&) {}
  void process(Burst& in, uint8_t* next, WorkerContext& ctx) override {
    for (uint16_t i = 0; i < in.n; ++i) {
      got.push_back(in.pkts[i]);  // the pointer only: compared, never read after the free
      rte_pktmbuf_free(in.pkts[i]);
      next[i] = kNextConsumed;
    }
    if (kPromise) ctx.single_next = kNextConsumed;
  }
  std::vector<rte_mbuf*> got;
};
using TSink = TSinkBase<false>;
using TConsume = TSinkBase<true>;
REGISTER_STAGE(TSink);
REGISTER_STAGE(TConsume);

class PipelineSingleNext : public ::testing::Test {
 protected:
  void SetUp() override {
    g_promise_edge = 0;
    g_mixed_plan.clear();
    g_single_seen.clear();
    w.ctx.counters = &w.counters;
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

constexpr const char* kPromiseToSinks =
    "nodes: [{name: split, stage: t_promise, next: {a: sa, b: sb}}, {name: sa, stage: t_sink}, {name: sb, stage: t_sink}]";

TEST_F(PipelineSingleNext, PromisedEdgeGetsTheWholeBurstInOrder) {
  load(kPromiseToSinks);
  g_promise_edge = 1;  // b
  run(7);
  EXPECT_EQ(sink("sb"), pick({0, 1, 2, 3, 4, 5, 6}));
  EXPECT_TRUE(sink("sa").empty());
  EXPECT_EQ(node("sb").packets.get(), 7u);
  EXPECT_EQ(node("sa").packets.get(), 0u);
  // The other edge, on the next burst: the pipeline's bursts are whole again between runs.
  g_promise_edge = 0;
  run(kBurst);
  EXPECT_EQ(sink("sa").size(), kBurst);
  EXPECT_EQ(sink("sa").front(), sent[7]);
  EXPECT_EQ(sink("sa").back(), sent.back());
  EXPECT_EQ(sink("sb").size(), 7u);
  EXPECT_EQ(node("split").calls.get(), 2u);
}

TEST_F(PipelineSingleNext, PromisedEdgeAppendsToATargetThatAlreadyHasPackets) {
  // mix sends 1 and 3 straight to sb, the rest to split; split then promises b, and its four
  // packets must follow the two already waiting at sb (appended, not swapped over them).
  load("nodes: [{name: mix, stage: t_mixed, next: {a: split, b: sb}},"
       " {name: split, stage: t_promise, next: {a: sa, b: sb}}, {name: sa, stage: t_sink}, {name: sb, stage: t_sink}]");
  g_mixed_plan = {0, 1, 0, 1, 0, 0};
  g_promise_edge = 1;
  run(6);
  EXPECT_EQ(sink("sb"), pick({1, 3, 0, 2, 4, 5}));
  EXPECT_TRUE(sink("sa").empty());
  EXPECT_EQ(node("split").packets.get(), 4u);
  EXPECT_EQ(node("sb").packets.get(), 6u);
  EXPECT_EQ(node("sb").calls.get(), 1u) << "one call with all six";
}

TEST_F(PipelineSingleNext, ConsumedPromiseLeavesThePacketsToTheStage) {
  // The stage freed every packet itself: the pipeline must neither free nor forward any.
  load("nodes: [{name: take, stage: t_consume}]");
  run(9);
  EXPECT_EQ(got<TConsume>("take"), pick({0, 1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(drops(DropReason::NoRoute), 0u);
}

TEST_F(PipelineSingleNext, StageWithoutAPromiseStillHasItsMixedEdgesHonoured) {
  // split promises a and hands its whole burst to mix; mix makes no promise and sends its
  // packets three ways. The promise of the stage before it must not carry over: the pipeline
  // resets single_next before each stage and scans mix's next[].
  load("nodes: [{name: split, stage: t_promise, next: {a: mix, b: sb}},"
       " {name: mix, stage: t_mixed, next: {a: sa, b: sb}}, {name: sa, stage: t_sink}, {name: sb, stage: t_sink}]");
  g_promise_edge = 0;
  g_mixed_plan = {0, 1, 1, kNextDrop, 0, 1, kNextDrop, 0};
  run(8);
  ASSERT_EQ(g_single_seen.size(), 1u);
  EXPECT_EQ(g_single_seen[0], WorkerContext::kNoSingleNext) << "the promise was not reset before the next stage";
  EXPECT_EQ(sink("sa"), pick({0, 4, 7}));
  EXPECT_EQ(sink("sb"), pick({1, 2, 5}));
  EXPECT_EQ(drops(DropReason::NoRoute), 2u);
  EXPECT_EQ(node("mix").packets.get(), 8u);
}

TEST_F(PipelineSingleNext, NoPromiseAndOneEdgeStillMovesTheBurst) {
  // Without a promise the pipeline's own scan finds the single edge (or not) as before.
  load("nodes: [{name: mix, stage: t_mixed, next: {a: sa, b: sb}}, {name: sa, stage: t_sink}, {name: sb, stage: t_sink}]");
  g_mixed_plan = std::vector<uint8_t>(5, 1);
  run(5);
  EXPECT_EQ(sink("sb"), pick({0, 1, 2, 3, 4}));
  // Only the last packet differs: the scan must look at every one.
  g_mixed_plan = {1, 1, 1, 1, 0};
  run(5);
  EXPECT_EQ(sink("sa"), pick({9}));
  EXPECT_EQ(sink("sb"), pick({0, 1, 2, 3, 4, 5, 6, 7, 8}));
  // All dropped.
  g_mixed_plan = std::vector<uint8_t>(4, kNextDrop);
  run(4);
  EXPECT_EQ(drops(DropReason::NoRoute), 4u);
  EXPECT_EQ(sink("sb").size(), 9u);
  EXPECT_EQ(g_single_seen, (std::vector<int>(3, WorkerContext::kNoSingleNext)));
}

}  // namespace
}  // namespace rs::test
