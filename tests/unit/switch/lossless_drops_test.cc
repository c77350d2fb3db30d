// lossless_drops counts every packet of a lossless (pfc_enable) priority the switch loses, not
// only what a lossless queue drops: a group black-holed by a down link (no_live_member) loses
// lossless packets before any queue, and they count, once. Lossy packets lost there do not, nor
// do frames with no class: PFC frames (mac_control_consumed), frames the parse refuses (a bad
// IPv4 header sum) and what a down link delivers (never parsed), even when the class the parse
// leaves them with (0) is a lossless one. Through a whole Switch stepped in time, and the stats
// JSON.
#include <gtest/gtest.h>

#include "app/stats_json.h"
#include "tests/unit/switch/lossless_net.h"

namespace rs::test {
namespace {

void run(Switch& sw, uint64_t from, uint64_t to) {
  for (uint64_t t = from; t < to; t += kUs) sw.poll_all(t);
}

uint64_t queue_drops(const Switch& sw) {
  uint64_t s = 0;
  for (std::size_t p = 0; p < sw.num_ports(); ++p)
    for (int q = 0; q < 8; ++q) s += qdrops_all(sw, p, q);
  return s;
}

// h0 sends h2 on the lossless priority, h1 sends h2 on a lossy one, and h2's port is admin down:
// the group to h2 has no live member, so both flows are black-holed at their ingress port. h0
// also sends h1 (delivered, across the two workers), and h2 sends h0 into its down link.
TEST(LosslessDrops, ABlackHoledLosslessFlowCountsEveryPacketOnceALossyOneNot) {
  Net n;
  n.cfg.workers = 2;
  for (int h = 0; h < 3; ++h) n.add_host(10);
  n.cfg.ports[2].admin_up = false;
  n.add_flow(0, 2, 1, 0x102);
  n.add_flow(1, 2, 1, 0x112, kLossyDscp);
  n.add_flow(0, 1, 1, 0x101);
  n.add_flow(2, 0, 1, 0x120);
  Switch sw(n.cfg, kT0);
  run(sw, kT0, kT0 + 2 * kMs);

  const uint64_t black_holed = sw.drops(0, DropReason::NoLiveMember);
  ASSERT_GT(black_holed, 100u) << "h0 -> h2: the group's only member is down";
  EXPECT_GT(sw.drops(1, DropReason::NoLiveMember), 100u) << "h1 -> h2, lossy, black-holed as well";
  EXPECT_GT(sw.drops(2, DropReason::LinkDown), 100u) << "what h2 sends into its down link";
  EXPECT_GT(host(sw, 1).received_packets(), 100u) << "h0 -> h1 is delivered";
  EXPECT_EQ(queue_drops(sw), 0u) << "no queue dropped anything: each drop above happened once, before a queue";

  EXPECT_EQ(sw.lossless_drops(), black_holed) << "every lossless packet black-holed, and nothing else";
  EXPECT_EQ(sw.lossless_drops_before_queue(), black_holed);
  EXPECT_EQ(sw.lossless_drops_before_queue(0), black_holed) << "charged to the ingress port, as the drop is";
  EXPECT_EQ(sw.lossless_drops_before_queue(1), 0u) << "the lossy flow's drops";
  EXPECT_EQ(sw.lossless_drops_before_queue(2), 0u) << "a down link's frames are never parsed: no class";
  const nlohmann::json j = stats_json(sw);
  EXPECT_EQ(j["lossless_drops"].get<uint64_t>(), black_holed);
  EXPECT_EQ(j["lossless_drops_before_queue"].get<uint64_t>(), black_holed);
  EXPECT_EQ(j["ports"][0]["lossless_drops_before_queue"].get<uint64_t>(), black_holed);
  EXPECT_EQ(j["ports"][1]["lossless_drops_before_queue"].get<uint64_t>(), 0u);

  sw.shutdown(kT0 + 2 * kMs);
  EXPECT_EQ(sw.lossless_drops(), black_holed) << "a shutdown flush is not a lossless drop";
  EXPECT_TRUE(sw.totals().balanced());
}

// Priorities 0 and 3 lossless: the class the parse leaves a frame it refuses with (tc 0) is a
// lossless one, yet such a frame has no class. h1's RoCE packets (lossless DSCP) reach the
// switch with a bad IPv4 header sum; h0 storms PFC frames at the switch.
TEST(LosslessDrops, FramesWithNoClassAreNotLosslessDropsEvenWhenClassZeroIsLossless) {
  Net n;
  n.cfg.mmu.pfc_enable |= 1u;
  n.add_host(10);
  n.add_host(10);
  for (auto& p : n.cfg.ports) p.lossless.pg[0] = n.pg;
  n.cfg.ports[0].host.storm = {.priority = kLossless, .start_ns = kT0, .quanta = 100};
  n.cfg.ports[1].faults = {.direction = FaultSpec::kRx, .corrupt = 1, .corrupt_offset = 14 + 10};  // the IPv4 header sum
  n.add_flow(1, 0, 1, 0x101);
  Switch sw(n.cfg, kT0);
  run(sw, kT0, kT0 + 1 * kMs);

  EXPECT_GT(sw.drops(1, DropReason::BadIpv4Checksum), 50u);
  EXPECT_GT(sw.drops(0, DropReason::MacControl), 5u) << "the storm's PFC frames";
  EXPECT_EQ(host(sw, 0).received_packets(), 0u);
  EXPECT_EQ(sw.lossless_drops_before_queue(), 0u);
  EXPECT_EQ(sw.lossless_drops(), 0u);
  sw.shutdown(kT0 + 1 * kMs);
  EXPECT_TRUE(sw.totals().balanced());
}

}  // namespace
}  // namespace rs::test
