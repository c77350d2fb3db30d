// MAC control stage: PFC (0x0101) and 802.3x PAUSE (0x0001) frames are link-local, so they are
// consumed (a drop with reason MacControl, never forwarded) and counted by kind; a wrong opcode
// or a runt is MalformedMacControl.
#include "dataplane/stages/mac_control.h"

#include <gtest/gtest.h>

#include <vector>

#include "dataplane/tm/buffer/shared_buffer.h"
#include "dataplane/tm/queue/egress_port.h"

#include "tests/support/stage_harness.h"
#include "tests/unit/stages/stage_test_util.h"

namespace rs::test {
namespace {

PacketSpec mac_ctl(uint16_t opcode) {
  MacCtl c{.opcode = opcode, .class_enable = 0x0018};
  c.quanta[3] = 0xFFFF;
  c.quanta[4] = 0xFFFF;
  return Eth{.dst = "01:80:c2:00:00:01"} / c;
}

// Parsed by the real l3_input stage (which sets l3_offset, where the opcode is read).
std::vector<rte_mbuf*> parsed_ctl(const std::vector<PacketSpec>& specs) { return parsed(specs, 0, L3Input::MacControl); }

TEST(MacControl, PfcIsConsumedAndCounted) {
  StageHarness<MacControl> h;
  auto out = h.run_mbufs(parsed_ctl({mac_ctl(0x0101), mac_ctl(0x0101)}));
  ASSERT_EQ(out.dropped(), 2u) << "consumed frames leave through the counted drop edge";
  for (auto* m : out[kNextDrop]) EXPECT_EQ(meta(m).drop_reason, DropReason::MacControl);
  EXPECT_EQ(h.counter("pfc"), 2u);
  EXPECT_EQ(h.counter("pause"), 0u);
  EXPECT_EQ(h.counter("malformed"), 0u);
}

TEST(MacControl, PauseIsConsumedAndCounted) {
  StageHarness<MacControl> h;
  auto out = h.run_mbufs(parsed_ctl({mac_ctl(0x0001)}));
  ASSERT_EQ(out.dropped(), 1u);
  EXPECT_EQ(meta(out[kNextDrop][0]).drop_reason, DropReason::MacControl);
  EXPECT_EQ(h.counter("pause"), 1u);
  EXPECT_EQ(h.counter("pfc"), 0u);
}

TEST(MacControl, MixedBurstCountsEachKind) {
  StageHarness<MacControl> h;
  std::vector<PacketSpec> specs;
  for (int i = 0; i < 40; ++i) specs.push_back(mac_ctl(i % 4 == 0 ? 0x0001 : i % 4 == 1 ? 0x0002 : 0x0101));
  auto out = h.run_mbufs(parsed_ctl(specs));
  EXPECT_EQ(out.dropped(), 40u);
  EXPECT_EQ(h.counter("pause"), 10u);
  EXPECT_EQ(h.counter("malformed"), 10u);
  EXPECT_EQ(h.counter("pfc"), 20u);
  // Nothing is ever forwarded: the stage has no next edges at all.
  EXPECT_EQ(out.edge.size(), 1u);
}

TEST(MacControl, WrongOpcodeIsMalformed) {
  StageHarness<MacControl> h;
  // 0x0002 GATE (EPON), 0x0000, and PFC's opcode byte-swapped.
  auto out = h.run_mbufs(parsed_ctl({mac_ctl(0x0002), mac_ctl(0x0000), mac_ctl(0x0101 ^ 0x0100), mac_ctl(0x0110)}));
  ASSERT_EQ(out.dropped(), 4u);
  // 0x0101 ^ 0x0100 is 0x0001, a valid PAUSE: three malformed, one pause.
  int malformed = 0;
  for (auto* m : out[kNextDrop]) malformed += meta(m).drop_reason == DropReason::MalformedMacControl;
  EXPECT_EQ(malformed, 3);
  EXPECT_EQ(h.counter("malformed"), 3u);
  EXPECT_EQ(h.counter("pause"), 1u);
}

TEST(MacControl, ShortFrameIsMalformed) {
  // A PFC frame is 60 bytes before FCS; anything shorter is a runt even with a good opcode.
  StageHarness<MacControl> h;
  PacketSpec s = mac_ctl(0x0101);
  ASSERT_EQ(s.bytes().size(), 60u);
  auto out = h.run_mbufs(parsed_ctl({s.truncate(59), mac_ctl(0x0001).truncate(34), mac_ctl(0x0101).truncate(16)}));
  ASSERT_EQ(out.dropped(), 3u);
  for (auto* m : out[kNextDrop]) EXPECT_EQ(meta(m).drop_reason, DropReason::MalformedMacControl);
  EXPECT_EQ(h.counter("malformed"), 3u);
  EXPECT_EQ(h.counter("pfc"), 0u);
  EXPECT_EQ(h.counter("pause"), 0u);
}

TEST(MacControl, VlanTaggedPfcReadsOpcodeAtL3Offset) {
  // A tagged MAC control frame (some NICs do this): the opcode is 4 bytes further in.
  StageHarness<MacControl> h;
  MacCtl c{.opcode = 0x0101, .class_enable = 0x0008};
  auto out = h.run_mbufs(parsed_ctl({Eth{.dst = "01:80:c2:00:00:01"} / Vlan{.pcp = 7} / c}));
  ASSERT_EQ(out.dropped(), 1u);
  EXPECT_EQ(meta(out[kNextDrop][0]).drop_reason, DropReason::MacControl);
  EXPECT_EQ(h.counter("pfc"), 1u);
}

TEST(MacControl, ValidPfcPausesTheReceivingPortsQueueMalformedChangesNothing) {
  // PFC acts where it lands: the egress of the port the frame came in on (here port 1, whose
  // priority 3 is lossless) stops the queue priority 3 maps to; a malformed frame changes nothing.
  TestWorld w;
  MmuConfig mc;
  mc.pfc_enable = 1u << 3;
  mc.pool.size = 1u << 20;
  SharedBuffer sb(mc, std::vector<PortLosslessConfig>(4), 1, 0);
  EgressPort e(1, nullptr, EgressConfig{}, 0, &sb, 0, PortLosslessConfig{}, test_pool());
  EgressPort* egress[kMaxPorts] = {};
  egress[1] = &e;
  w.ctx.egress = egress;
  w.ctx.now_ns = 1000;
  StageHarness<MacControl> h{{}, &w};
  MacCtl bad{.opcode = 0x0002, .class_enable = 0x0008};
  bad.quanta[3] = 0xFFFF;
  auto out = h.run_mbufs(parsed({Eth{.dst = "01:80:c2:00:00:01"} / bad}, 1, L3Input::MacControl));
  ASSERT_EQ(out.dropped(), 1u);
  for (int q = 0; q < 8; ++q) EXPECT_FALSE(e.paused(q)) << "queue " << q;
  MacCtl xoff{.opcode = 0x0101, .class_enable = 0x0008};
  xoff.quanta[3] = 0xFFFF;
  auto out2 = h.run_mbufs(parsed({Eth{.dst = "01:80:c2:00:00:01"} / xoff}, 1, L3Input::MacControl));
  ASSERT_EQ(out2.dropped(), 1u);
  EXPECT_EQ(meta(out2[kNextDrop][0]).drop_reason, DropReason::MacControl);
  for (int q = 0; q < 8; ++q) EXPECT_EQ(e.paused(q), q == 3) << "queue " << q;
  EXPECT_EQ(e.pfc_rx().xoff[3].get(), 1u);
  // XON (quanta 0) resumes it at once.
  MacCtl xon{.opcode = 0x0101, .class_enable = 0x0008};
  auto out3 = h.run_mbufs(parsed({Eth{.dst = "01:80:c2:00:00:01"} / xon}, 1, L3Input::MacControl));
  EXPECT_FALSE(e.paused(3));
  EXPECT_EQ(e.pfc_rx().xon[3].get(), 1u);
  EXPECT_EQ(h.counter("pfc"), 2u);
  EXPECT_EQ(h.counter("malformed"), 1u);
}

}  // namespace
}  // namespace rs::test
