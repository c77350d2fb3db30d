// Route churn under traffic, stepped in virtual time: 1 000 control-plane updates a second for
// 10 s while packets flow to churned and untouched prefixes. Nothing sent to an untouched prefix
// is lost or reordered, and no packet reaches a next hop its prefix never had.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "control/runtime/control_api.h"
#include "dataplane/emu/emulated_host.h"
#include "tests/support/host_net.h"

namespace rs::test {
namespace {

using nlohmann::json;

constexpr uint32_t kQpA = 0x100;  // h0 -> h1, 10.0.1.0/24: never touched
constexpr uint32_t kQpB = 0x200;  // h0 -> 10.0.5.2: its /24 moves between h2 and h3

TEST(RouteChurn, UntouchedPrefixesLoseNothingAndChurnedOnesStayOnTheirNextHops) {
  SwitchConfig cfg;
  for (int h = 0; h < 4; ++h) add_host_port(cfg, 10, QueueLimits{});
  constexpr uint64_t kRun = 10'000 * kMs;
  add_host_flow(cfg, 0, 1, 0.2, kQpA, 512).stop_ns = kT0 + kRun;
  HostFlowSpec& b = add_host_flow(cfg, 0, 1, 0.2, kQpB, 512);
  b.dst_ip = rte_cpu_to_be_32(RTE_IPV4(10, 0, 5, 2));
  b.stop_ns = kT0 + kRun;
  // A one-member group for the churned prefix at the start: h2.
  cfg.routes.push_back(cfg.routes[2]);
  cfg.routes.back().addr[2] = 5;

  Switch sw(cfg, kT0);
  RunningState state(sw);
  uint64_t now = kT0;
  constexpr uint64_t kStep = 10 * kUs;
  ControlApi api(state, [&] {
    sw.poll_all(now);
    now += kStep;
  });
  std::mt19937 rng(11);
  std::vector<std::string> extra;  // unrelated prefixes added and removed
  uint64_t updates = 0, next_update = kT0 + kMs;
  while (now < kT0 + kRun + 20 * kMs) {
    sw.poll_all(now);
    now += kStep;
    if (now < next_update || now >= kT0 + kRun) continue;
    next_update += kMs;
    ++updates;
    json req;
    const int kind = static_cast<int>(updates % 4);
    if (kind == 0) {
      req = {{"op", "route.add"}, {"prefix", "10.0.5.0/24"}, {"group", updates % 8 ? "to_h3" : "to_h2"}, {"replace", true}};
    } else if (kind == 1 || extra.empty()) {
      // One draw a statement: the order a call's arguments are evaluated in is the compiler's.
      std::string p;
      do {
        const auto b = 1 + rng() % 200;
        const auto c = rng() % 256;
        p = fmt::format("10.{}.{}.0/24", b, c);
      } while (std::find(extra.begin(), extra.end(), p) != extra.end());  // each is deleted once
      extra.push_back(p);
      req = {{"op", "route.add"}, {"prefix", extra.back()}, {"group", rng() % 2 ? "to_h2" : "to_h3"}, {"replace", true}};
    } else {
      // A batch: remove one unrelated prefix and add a host route inside it.
      const std::string p = extra.back();
      extra.pop_back();
      const auto c = rng() % 256;
      const auto d = rng() % 256;
      req = {{"ops", json::array({{{"op", "route.del"}, {"prefix", p}},
                                  {{"op", "route.add"}, {"prefix", fmt::format("10.201.{}.{}/32", c, d)},
                                   {"group", "to_h2"}, {"replace", true}}})}};
    }
    const json resp = api.handle(req);
    ASSERT_TRUE(resp["ok"].get<bool>()) << req.dump() << " -> " << resp.dump();
    sw.reclaim();
  }
  EXPECT_GE(updates, 9'900u);
  auto& h0 = dynamic_cast<EmulatedHost&>(sw.port(0));
  auto rx = [&](std::size_t at, uint32_t qp) {
    RxFlowStats s;
    return dynamic_cast<EmulatedHost&>(sw.port(at)).rx_tracker().find(host_ip(0), qp, s) ? s : RxFlowStats{};
  };
  const RxFlowStats a = rx(1, kQpA);
  EXPECT_GT(a.packets, 100'000u);
  EXPECT_EQ(a.out_of_order, 0u);
  EXPECT_EQ(a.missing, 0u);
  EXPECT_EQ(rx(1, kQpB).packets, 0u) << "the churned prefix reached a next hop it never had";
  EXPECT_EQ(rx(2, kQpA).packets + rx(3, kQpA).packets, 0u) << "the untouched prefix moved";
  EXPECT_GT(rx(2, kQpB).packets, 0u);
  EXPECT_GT(rx(3, kQpB).packets, 0u);
  EXPECT_EQ(a.packets + rx(2, kQpB).packets + rx(3, kQpB).packets, h0.sent_packets()) << "packets lost";
  const SwitchTotals t = sw.totals();
  EXPECT_EQ(t.dropped, 0u);
  EXPECT_TRUE(t.balanced());
}

}  // namespace
}  // namespace rs::test
