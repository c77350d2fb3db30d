// The pipeline loader: the built-in graph loads, every malformed graph is refused with the file
// and the reason, and running a burst moves each packet along the edge its stage chose.
#include "dataplane/core/pipeline.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace rs::test
