// Completion times over a fabric with nothing else on it: one NIC sends messages one at a time
// to a host on another leaf (4 links: two host cables, two fabric cables). Whatever the clock's
// step, no message can complete before the physics allows: every packet serialised on the
// sender's link, the last one stored and forwarded at each further link, the ACK back, each
// cable's propagation both ways. With hosts whose own cables take each frame's serialisation
// time (emulated_host.h) every message takes at least that, and the slowdown against the
// loader's unloaded model stays within a step's rounding of 1.
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include "app/stats_json.h"
#include "control/fabric/fabric_config.h"
#include "dataplane/fabric/fabric.h"
#include "dataplane/nic/roce_wire.h"
#include "dataplane/tm/queue/shaper.h"
#include "tests/support/constants.h"

namespace rs::test {
namespace {

constexpr double kGbps = 25;      // every link
constexpr uint64_t kDelay = 500;  // 100 m cables
constexpr uint32_t kMtu = 1024;
constexpr unsigned kLinks = 4, kCables = 2;

double ser(uint32_t frame_len) { return wire_bytes(frame_len) * 8 / kGbps; }

// The least a message of `bytes` (RDMA WRITE: the RETH in its first packet) can take, post to ACK.
double physical_ns(uint32_t bytes) {
  double all = 0, last = 0;
  for (uint32_t off = 0; off < bytes; off += kMtu) {
    last = ser(nic::kHeaders + (off == 0 ? nic::kRethLen : 0) + std::min(kMtu, bytes - off));
    all += last;
  }
  return all + (kLinks - 1) * last + kLinks * ser(nic::kHeaders + nic::kAethLen) + 2.0 * kCables * kDelay;
}

// The sender's fct_by_size rows after `messages` of `bytes`, one outstanding, leaf1.h1 to leaf2.h1.
nlohmann::json unloaded(uint32_t bytes, uint32_t messages) {
  const FabricRunSpec r = load_fabric_text(
      fmt::format("fabric:\n  leaf_spine: {{spines: 1, leaves: 2, hosts_per_leaf: 1, host_gbps: {0}, uplink_gbps: {0},"
                  " cable_m: {1}}}\n"
                  "hosts: {{nic: {{cc: none, mtu: {2}}}}}\n"
                  "traffic: [{{pattern: incast, hosts: [leaf1], receiver: leaf2.h1, message_bytes: {3}, messages: {4},"
                  " depth: 1}}]\n",
                  kGbps, kDelay / 5, kMtu, bytes, messages),
      "unloaded.yaml");
  Fabric fab(r.fabric, kT0);
  fab.run_until(kT0 + 2 * kMs);
  const auto [sw, pt] = r.hosts[0];
  const nlohmann::json totals = stats_json(fab.at(sw))["ports"][pt]["host"]["nic"]["totals"];
  EXPECT_EQ(totals["messages_done"], messages) << totals.dump();
  EXPECT_TRUE(fab.totals().balanced());
  fab.shutdown();
  EXPECT_TRUE(fab.totals().balanced());
  return totals["fct_by_size"];
}

TEST(HostLinkFct, NoUnloadedMessageCompletesFasterThanItsLinksCarryIt) {
  constexpr uint32_t kMessages = 40;
  for (const uint32_t bytes : {256u, 1024u, 4096u, 65536u}) {
    const nlohmann::json rows = unloaded(bytes, kMessages);
    ASSERT_EQ(rows.size(), 1u) << rows.dump();
    const nlohmann::json& fct = rows[0]["fct_us"];
    const nlohmann::json& sl = rows[0]["slowdown"];
    std::printf("%6u bytes: FCT mean %.3f us max %.3f us (physics: %.3f us), slowdown mean %.3f max %.3f\n", bytes,
                fct["mean"].get<double>(), fct["max"].get<double>(), physical_ns(bytes) / 1000, sl["mean"].get<double>(),
                sl["max"].get<double>());
    // The histogram's mean and maximum are exact; the messages took the same time to a step or
    // so (they start on a step), so the mean is each one's.
    EXPECT_LE(fct["max"].get<double>() - fct["mean"].get<double>(), 0.2) << bytes << " bytes: " << fct.dump();
    EXPECT_GE(1000 * fct["mean"].get<double>(), physical_ns(bytes)) << bytes << " bytes: " << fct.dump();
    // The model allows each link's round trip two steps, the most that arrivals falling on the
    // next step can add; they add about one, so the slowdown sits just under 1, never far.
    EXPECT_GE(sl["mean"].get<double>(), 0.9) << bytes << " bytes: " << sl.dump();
    EXPECT_LE(sl["max"].get<double>(), 1.2) << bytes << " bytes: no queue anywhere, the model holds";
  }
}

}  // namespace
}  // namespace rs::test
