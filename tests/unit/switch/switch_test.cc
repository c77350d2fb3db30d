// The whole switch, stepped from one thread with an injected clock: a 3:1 RoCE incast into a
// slower port (queue build-up, tail drops at the bottleneck only, every packet accounted, ICRC
// intact, line-rate delivery), the same over two workers and their handoff rings, bit-for-bit
// determinism, an RCU FIB swap, and constructors that fail cleanly on bad configs.
#include "dataplane/switch/switch.h"

#include <fmt/core.h>
#include <gtest/gtest.h>
#include <rte_byteorder.h>
#include <rte_ip.h>
#include <rte_malloc.h>
#include <rte_memzone.h>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "app/stats_json.h"
#include "dataplane/emu/emulated_host.h"
#include "dataplane/switch/worker.h"
#include "tests/support/constants.h"
#include "tests/support/eal_env.h"
#include "tests/support/host_net.h"

namespace rs::test {
namespace {

constexpr uint32_t kQueueLimit = 512;

// One emulated host per port, host h at 10.0.h.2 behind switch port h, one route per host.
struct Topology {
  SwitchConfig cfg;

  explicit Topology(uint16_t workers) {
    cfg.workers = workers;
    cfg.seed = 7;
    // RoCE's DSCP 26 on the lossless class, as NVIDIA's SONiC profile does.
    cfg.qos.dscp_to_tc[kRoceDscp] = kRoceQueue;
  }
  uint8_t add_host(double gbps) {
    add_host_port(cfg, gbps, {.packets = kQueueLimit, .bytes = 4u << 20});
    return static_cast<uint8_t>(cfg.ports.size() - 1);
  }
  void add_flow(uint8_t from, uint8_t to, double gbps, uint32_t qp) { add_host_flow(cfg, from, to, gbps, qp, kPayload); }
};

// 3:1 incast: h1..h3 on 25 Gb/s links each send 10 Gb/s of RoCE to h0, whose port runs at
// 10 Gb/s, so 30 Gb/s meets a 10 Gb/s egress. h0 answers h1 with 1 Gb/s, so one non-congested
// path carries traffic too and must see no drops.
Topology incast(uint16_t workers) {
  Topology t(workers);
  t.add_host(10);
  for (int i = 0; i < 3; ++i) t.add_host(25);
  for (uint8_t h = 1; h <= 3; ++h) t.add_flow(h, 0, 10, 0x100 + h);
  t.add_flow(0, 1, 1, 0x200);
  return t;
}

EmulatedHost& host(Switch& sw, std::size_t p) { return dynamic_cast<EmulatedHost&>(sw.port(p)); }

uint64_t all_drops(const Switch& sw, std::size_t port) {
  uint64_t s = 0;
  for (std::size_t r = 0; r < kNumDropReasons; ++r) s += sw.drops(port, static_cast<DropReason>(r));
  return s;
}

// Steps every worker every microsecond from `from` to `to`; the books must balance after each.
void run(Switch& sw, uint64_t from, uint64_t to) {
  for (uint64_t t = from; t < to; t += kUs) {
    sw.poll_all(t);
    const SwitchTotals s = sw.totals();
    ASSERT_TRUE(s.balanced()) << "at t=" << (t - kT0) << " ns: received " << s.received << " sent " << s.sent
                              << " queued " << s.queued << " in flight " << s.in_flight << " dropped " << s.dropped;
  }
}

struct IncastResult {
  uint64_t delivered = 0;  // packets h0 received
  uint64_t dropped = 0;
  uint64_t received = 0;
  double gbps = 0;  // h0's delivered wire rate over the steady window
  std::string stats;
};

// Runs the incast for 50 ms of emulated time and checks every invariant; returns the figures
// so 1- and 2-worker runs can be compared.
IncastResult run_incast(uint16_t workers) {
  IncastResult res;
  Switch sw(incast(workers).cfg, kT0);
  EXPECT_EQ(sw.num_workers(), workers);

  // The queue fills within a fraction of a millisecond (20 Gb/s of excess); measure the
  // bottleneck's delivered rate from 5 ms on, when it is steadily backlogged.
  run(sw, kT0, kT0 + 5 * kMs);
  const uint64_t pk0 = sw.tx_packets(0), by0 = sw.tx_bytes(0);
  run(sw, kT0 + 5 * kMs, kT0 + 50 * kMs);
  if (::testing::Test::HasFatalFailure()) return res;
  const uint64_t pk = sw.tx_packets(0) - pk0, by = sw.tx_bytes(0) - by0;
  // Every frame here is above the 60-byte minimum: wire = bytes + (FCS + preamble + IFG).
  res.gbps = static_cast<double>(by + pk * (kEthFcs + kEthPreambleIfg)) * 8.0 / static_cast<double>(45 * kMs);

  const EgressPort& bottleneck = sw.egress(0);
  // The queue built up to its limit...
  EXPECT_GE(bottleneck.queue(kRoceQueue).peak_packets.get(), kQueueLimit - 1);
  EXPECT_LE(bottleneck.queue(kRoceQueue).peak_packets.get(), kQueueLimit);
  // ...and the excess was tail-dropped there, counted per queue and per port alike.
  const uint64_t tail = sw.drops(0, DropReason::TailDropPackets);
  EXPECT_GT(tail, 0u);
  EXPECT_EQ(bottleneck.queue(kRoceQueue).drops[static_cast<std::size_t>(DropReason::TailDropPackets)].get(), tail);
  EXPECT_EQ(all_drops(sw, 0), tail) << "the bottleneck drops only by tail drop";
  for (std::size_t p = 1; p < sw.num_ports(); ++p) EXPECT_EQ(all_drops(sw, p), 0u) << "port " << p;
  EXPECT_GT(host(sw, 1).received_packets(), 0u) << "the reverse flow reached h1";

  // Two thirds of the offered load cannot fit: the drop share is close to 2/3.
  const SwitchTotals before = sw.totals();
  EXPECT_NEAR(static_cast<double>(tail) / static_cast<double>(before.received - sw.rx_packets(0)), 2.0 / 3.0, 0.02);

  // The switch never corrupts what the ICRC protects (TTL and MACs are rewritten, not payload).
  for (std::size_t p = 0; p < sw.num_ports(); ++p) EXPECT_EQ(host(sw, p).icrc_bad(), 0u) << "port " << p;

  // Host-side books agree with the switch's: what hosts sent is what the switch received, what
  // the switch sent is what hosts received.
  uint64_t host_sent = 0, host_recv = 0;
  for (std::size_t p = 0; p < sw.num_ports(); ++p) {
    host_sent += host(sw, p).sent_packets();
    host_recv += host(sw, p).received_packets();
    // What the switch sent and is still on the host's wire (its last bit not there yet) too.
    host_recv += host(sw, p).on_wire_to_host();
    EXPECT_EQ(host(sw, p).received_packets() + host(sw, p).on_wire_to_host(), sw.tx_packets(p)) << "port " << p;
  }
  EXPECT_EQ(host_sent, before.received);
  EXPECT_EQ(host_recv, before.sent);

  // Shutdown: what is still queued or in a ring is counted as a shutdown drop; books balance.
  EXPECT_GT(before.queued, 0u);
  sw.shutdown(kT0 + 50 * kMs);
  const SwitchTotals after = sw.totals();
  EXPECT_TRUE(after.balanced());
  EXPECT_EQ(after.queued, 0u);
  EXPECT_EQ(after.in_flight, 0u);
  // Ring packets are queued first, so one meeting a full queue is a tail drop, not a shutdown
  // drop; either way every packet still inside the switch becomes exactly one drop.
  EXPECT_EQ(after.dropped, before.dropped + before.queued + before.in_flight);
  EXPECT_GE(sw.drops(DropReason::Shutdown), before.queued);
  EXPECT_LE(sw.drops(DropReason::Shutdown), before.queued + before.in_flight);
  EXPECT_EQ(after.received, before.received);
  EXPECT_EQ(after.sent, before.sent);

  res.delivered = host(sw, 0).received_packets();
  res.dropped = after.dropped;
  res.received = after.received;
  res.stats = stats_json(sw).dump();
  return res;
}

TEST(Switch, IncastBuildsQueueAndDropsOnlyAtBottleneck) {
  const IncastResult r = run_incast(1);
  // The bottleneck port delivers its link rate: 10 Gb/s within 2 %.
  EXPECT_NEAR(r.gbps, 10.0, 10.0 * 0.02);
  // 50 ms at 10 Gb/s of 1082-byte frames (1106 bytes of line time) is ~56,500 packets.
  EXPECT_NEAR(static_cast<double>(r.delivered), 10e9 / 8 / (kFrame + 24) * 0.05, 600);
  RecordProperty("bottleneck_gbps", std::to_string(r.gbps));
}

TEST(Switch, IncastOverTwoWorkersMatchesOneWorker) {
  const IncastResult one = run_incast(1);
  const IncastResult two = run_incast(2);
  // Ports 0 and 2 belong to worker 0, ports 1 and 3 to worker 1: h1 and h3's packets to h0
  // cross the handoff rings.
  const auto stats = nlohmann::json::parse(two.stats);
  // A stage's counter, or the same counter inside a chain node ("<stage>.handoff").
  uint64_t handoff = 0;
  for (auto& st : stats["stages"])
    for (auto& [name, value] : st["counters"].items())
      if (name == "handoff" || name.ends_with(".handoff")) handoff += value.get<uint64_t>();
  EXPECT_GT(handoff, 0u) << "no packet crossed workers: the test would not test the rings";
  EXPECT_EQ(stats["drops"].value("handoff_ring_full", 0u), 0u);

  EXPECT_NEAR(two.gbps, 10.0, 10.0 * 0.02);
  // Same link rates, same offered load: the same result up to the one-poll handoff delay.
  EXPECT_NEAR(static_cast<double>(two.delivered), static_cast<double>(one.delivered), one.delivered * 0.005);
  EXPECT_NEAR(static_cast<double>(two.received), static_cast<double>(one.received), one.received * 0.005);
  EXPECT_NEAR(static_cast<double>(two.dropped), static_cast<double>(one.dropped), one.dropped * 0.01);
  RecordProperty("delivered_1w_2w", fmt::format("{} {}", one.delivered, two.delivered));
  RecordProperty("dropped_1w_2w", fmt::format("{} {}", one.dropped, two.dropped));
  RecordProperty("handoff", std::to_string(handoff));
}

// One input, one output, both fast: every loop reads several rx bursts for the one egress
// port, so that port must send as many in the loop (one burst a loop would carry a fraction of
// the input and tail-drop the rest on a link with room to spare).
TEST(Switch, FastEgressSendsEveryBurstItsLinkAllows) {
  Topology t(1);
  t.add_host(400);
  t.add_host(400);
  t.add_flow(1, 0, 400, 0x300);
  Switch sw(t.cfg, kT0);
  constexpr uint64_t kStep = 20 * kUs;  // 1 MB of 400 Gb/s: more than one burst a loop
  constexpr int kLoops = 100;
  uint64_t now = kT0;
  for (int i = 0; i < kLoops; ++i, now += kStep) sw.poll_all(now);
  const SwitchTotals tot = sw.totals();
  EXPECT_EQ(tot.dropped, 0u) << stats_json(sw)["drops"].dump();
  EXPECT_TRUE(tot.balanced());
  EXPECT_GT(tot.received, uint64_t{kBurst} * 2 * kLoops) << "the input must bring several bursts a loop";
  EXPECT_EQ(host(sw, 0).received_packets() + host(sw, 0).on_wire_to_host(), tot.sent);
  EXPECT_GE(tot.sent + 2 * kBurst * Worker::kRxBurstsPerPoll, tot.received) << "the egress fell behind its input";
  sw.shutdown(now);
}

TEST(Switch, SameConfigSameClockSameStats) {
  // Time is an argument and nothing reads a real clock or a random source: two switches built
  // from one config and stepped with one clock agree on every counter.
  const SwitchConfig cfg = incast(2).cfg;
  std::string a, b;
  {
    Switch sw(cfg, kT0);
    run(sw, kT0, kT0 + 10 * kMs);
    a = stats_json(sw).dump(1);
  }
  {
    Switch sw(cfg, kT0);
    run(sw, kT0, kT0 + 10 * kMs);
    b = stats_json(sw).dump(1);
  }
  EXPECT_EQ(a, b);
  EXPECT_NE(a.find("\"tail_drop_packets\""), std::string::npos) << "the run should be congested";
}

// Heap bytes in use, all sockets: the FIB's LPM tables live there, so a freed FIB shows.
uint64_t heap_in_use() {
  uint64_t s = 0;
  for (unsigned i = 0; i < rte_socket_count(); ++i) {
    rte_malloc_socket_stats st{};
    if (rte_malloc_get_socket_stats(rte_socket_id_by_idx(i), &st) == 0) s += st.heap_allocsz_bytes;
  }
  return s;
}

// The control plane's route change (switch/fib_writer.h): one prefix to another group.
std::optional<FibWriter::Failure> move_route(Switch& sw, const RouteSpec& r, uint32_t to, uint64_t now) {
  FibWriter::RouteChange c{r, false, r.group, 0};
  c.route.group = to;
  return sw.fib_writer().commit({c}, nullptr, [&] { sw.poll_all(now); });
}

TEST(Switch, CommittedRouteIsUsedAndSpareBankWaitsForTheGracePeriod) {
  // h1 sends 1 Gb/s to 10.0.0.2; the route first points at h0, then at h2.
  Topology t(2);
  t.add_host(10);
  t.add_host(10);
  t.add_host(10);
  t.add_flow(1, 0, 1, 0x300);
  Switch sw(t.cfg, kT0);
  uint64_t now = kT0;
  run(sw, now, now + kMs);
  now += kMs;
  ASSERT_GT(host(sw, 0).received_packets(), 0u);
  ASSERT_EQ(host(sw, 2).received_packets(), 0u);

  const uint64_t heap_before = heap_in_use();
  const Fib* before = &sw.fib();
  ASSERT_FALSE(move_route(sw, t.cfg.routes[0], 2, now));  // 10.0.0.0/24 -> h2's group
  EXPECT_NE(&sw.fib(), before) << "a commit publishes a new snapshot";
  EXPECT_EQ(heap_in_use(), heap_before) << "a route change copies no route table";

  // No worker has passed a quiescent state since the swap: the old bank is still read.
  EXPECT_FALSE(sw.fib_writer().catch_up());
  // Worker 0 alone is not enough: worker 1 may still hold the old snapshot.
  sw.poll(0, now);
  EXPECT_FALSE(sw.fib_writer().catch_up()) << "spare reused before every worker reported quiescence";
  sw.poll(1, now);
  now += kUs;
  EXPECT_TRUE(sw.fib_writer().catch_up()) << "spare not free after the grace period";
  sw.reclaim();

  // Traffic follows the new route; once h0's queue has drained it receives nothing new.
  run(sw, now, now + 100 * kUs);
  now += 100 * kUs;
  const uint64_t h0_after_swap = host(sw, 0).received_packets();
  const uint64_t h2_after_swap = host(sw, 2).received_packets();
  run(sw, now, now + 2 * kMs);
  now += 2 * kMs;
  EXPECT_EQ(host(sw, 0).received_packets(), h0_after_swap);
  // 2 ms at 1 Gb/s of 1082-byte frames is ~226 packets.
  EXPECT_NEAR(static_cast<double>(host(sw, 2).received_packets() - h2_after_swap), 226.0, 5.0);
  EXPECT_EQ(host(sw, 2).icrc_bad(), 0u);
  EXPECT_EQ(sw.drops(DropReason::NoRoute), 0u);
  sw.shutdown(now);
  EXPECT_TRUE(sw.totals().balanced());
}

TEST(Switch, RepeatedCommitsReclaimEverything) {
  // Many changes with polls in between (the second bank catching up each time): every old
  // snapshot is freed once its grace period has passed, so the DPDK heap does not grow with the
  // number of updates, and traffic ends on the last route.
  Topology t(2);
  t.add_host(10);
  t.add_host(10);
  t.add_host(10);
  t.add_flow(1, 0, 1, 0x400);
  Switch sw(t.cfg, kT0);
  uint64_t now = kT0;
  run(sw, now, now + 100 * kUs);
  now += 100 * kUs;
  const uint64_t heap0 = heap_in_use();
  for (int i = 0; i < 51; ++i) {
    ASSERT_FALSE(move_route(sw, t.cfg.routes[0], i % 2 ? 0 : 2, now));
    sw.poll_all(now);
    now += kUs;
    sw.reclaim();
  }
  EXPECT_EQ(heap_in_use(), heap0);
  const uint64_t h2 = host(sw, 2).received_packets();
  run(sw, now, now + kMs);
  EXPECT_GT(host(sw, 2).received_packets(), h2);
}

// Counts the DPDK objects a Switch creates, to show a failed constructor leaves none behind.
struct DpdkFootprint {
  unsigned mempools = 0;
  unsigned memzones = 0;
  uint64_t heap = 0;
  unsigned test_pool_avail = 0;

  static DpdkFootprint now() {
    DpdkFootprint f;
    rte_mempool_walk([](rte_mempool*, void* arg) { ++*static_cast<unsigned*>(arg); }, &f.mempools);
    rte_memzone_walk([](const rte_memzone*, void* arg) { ++*static_cast<unsigned*>(arg); }, &f.memzones);
    f.heap = heap_in_use();
    f.test_pool_avail = rte_mempool_avail_count(test_pool());
    return f;
  }
};

void expect_same(const DpdkFootprint& a, const DpdkFootprint& b, const std::string& what) {
  EXPECT_EQ(a.mempools, b.mempools) << what;
  EXPECT_EQ(a.memzones, b.memzones) << what;
  EXPECT_EQ(a.heap, b.heap) << what;
  EXPECT_EQ(a.test_pool_avail, b.test_pool_avail) << what;
}

TEST(Switch, BadConfigThrowsAndLeavesNothingBehind) {
  struct Case {
    const char* what;
    void (*spoil)(SwitchConfig&);
  };
  const Case cases[] = {
      {"route to a group index out of range", [](SwitchConfig& c) { c.routes[1].group = 99; }},
      {"unknown routing policy", [](SwitchConfig& c) { c.groups[2].policy.name = "no_such_policy"; }},
      {"zero workers", [](SwitchConfig& c) { c.workers = 0; }},
      {"ethdev that cannot be probed, after an emulated host was built",
       [](SwitchConfig& c) {
         c.ports[2].kind = PortKind::Ethdev;
         c.ports[2].devargs = "net_no_such_driver0";
       }},
  };
  // Warm up once: the first Switch in a process may set up lazily created DPDK state
  // (tailq heads, log types) that is not a leak.
  { Switch warm(incast(2).cfg, kT0); }
  for (const Case& c : cases) {
    SwitchConfig cfg = incast(2).cfg;
    c.spoil(cfg);
    const DpdkFootprint before = DpdkFootprint::now();
    EXPECT_THROW({ Switch sw(cfg, kT0); }, std::runtime_error) << c.what;
    expect_same(before, DpdkFootprint::now(), c.what);
  }
  // A good switch still builds and forwards afterwards, and leaves nothing when destroyed.
  const DpdkFootprint before = DpdkFootprint::now();
  {
    Switch sw(incast(2).cfg, kT0);
    run(sw, kT0, kT0 + kMs);
    EXPECT_GT(sw.totals().sent, 0u);
    EXPECT_EQ(host(sw, 0).icrc_bad(), 0u);
  }
  expect_same(before, DpdkFootprint::now(), "good switch destroyed");
}

TEST(Switch, GroupWithNoUsableMemberThrows) {
  // SwitchConfig is public API (tests and tools build it without the YAML loader), so the
  // Switch must reject a group that has no member, or whose members all weigh 0, with an
  // exception. Run in a child process: if build_fib divides by the empty member list
  // instead, the SIGFPE fails this test without taking the rest of the suite down.
  struct Case {
    const char* what;
    void (*spoil)(SwitchConfig&);
  };
  const Case cases[] = {
      {"group without members", [](SwitchConfig& c) { c.groups[0].members.clear(); }},
      {"every member weight 0", [](SwitchConfig& c) { c.groups[0].members[0].weight = 0; }},
  };
  for (const Case& c : cases) {
    SwitchConfig cfg = incast(1).cfg;
    c.spoil(cfg);
    EXPECT_EXIT(
        {
          try {
            Switch sw(cfg, kT0);
          } catch (const std::runtime_error& e) {
            std::fprintf(stderr, "threw: %s\n", e.what());
            std::_Exit(0);
          }
          std::_Exit(1);  // built a switch with a group that cannot forward
        },
        ::testing::ExitedWithCode(0), "threw")
        << c.what;
  }
}

}  // namespace
}  // namespace rs::test
