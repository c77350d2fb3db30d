// Parser stage: which edge each header stack takes, the metadata it fills, and a named drop for
// every malformed shape.
#include "dataplane/stages/parse/parser.h"

#include <gtest/gtest.h>

#include "tests/support/stage_harness.h"

namespace rs::test {
namespace {

TEST(Parser, RoceOverIpv4FillsMeta) {
  StageHarness<Parser> h;
  auto out = h.run({Eth{} / Ipv4{.dscp = 26, .ecn = 2} / Udp{.sport = 0xC123} / Bth{.opcode = 0x0a, .dest_qp = 0x11, .psn = 7} / Payload::of_size(64)});
  ASSERT_EQ(out[Parser::Ip].size(), 1u);
  const PacketMeta& m = meta(out[Parser::Ip][0]);
  EXPECT_EQ(m.l3, L3Type::Ipv4);
  EXPECT_EQ(m.dscp, 26);
  EXPECT_EQ(m.ecn, 2);
  EXPECT_TRUE(m.flags & meta_flag::kRoce);
  EXPECT_EQ(m.bth_opcode, 0x0a);
  EXPECT_EQ(m.dest_qp, 0x11u);
  EXPECT_EQ(m.psn, 7u);
  EXPECT_EQ(h.counter("roce"), 1u);
}

TEST(Parser, StackedVlanIsCountedDrop) {
  StageHarness<Parser> h;
  auto out = h.run({Eth{} / Vlan{} / Vlan{} / Ipv4{} / Udp{} / Payload::of_size(20)});
  ASSERT_EQ(out.dropped(), 1u);
  EXPECT_EQ(meta(out[kNextDrop][0]).drop_reason, DropReason::StackedVlan);
}

}  // namespace
}  // namespace rs::test
