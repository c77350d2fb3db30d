// Mirror sessions on the whole switch, stepped with an injected clock: rx and tx copies reach
// the destination port whole or truncated, on one worker and across two (the handoff ring),
// the books count every copy, a copy is never mirrored again, copies of lossless traffic never
// pause anything, and a bad session is refused before the switch is built.
#include <gtest/gtest.h>

#include <stdexcept>

#include "dataplane/switch/mirror_sessions.h"
#include "dataplane/switch/switch.h"
#include "tests/unit/switch/lossless_net.h"

namespace rs::test {
namespace {

void run(Switch& sw, uint64_t from, uint64_t to) {
  for (uint64_t t = from; t < to; t += kUs) {
    sw.poll_all(t);
    const SwitchTotals s = sw.totals();
    ASSERT_TRUE(s.balanced()) << "at t=" << (t - kT0) << " ns: received " << s.received << " mirrored " << s.mirrored
                              << " sent " << s.sent << " queued " << s.queued << " in flight " << s.in_flight
                              << " dropped " << s.dropped;
  }
}

// h0 -> h1 at 1 Gb/s; h2 and h3 idle, h3 is the analyser port.
SwitchConfig base(uint16_t workers) {
  SwitchConfig cfg;
  cfg.workers = workers;
  cfg.seed = 7;
  for (int h = 0; h < 4; ++h) add_host_port(cfg, 25, {.packets = 1024, .bytes = 4u << 20}).worker = h % workers;
  add_host_flow(cfg, 0, 1, 1, 0x100, kPayload);
  return cfg;
}

TEST(Mirror, RxCopiesReachTheDestinationTruncated) {
  SwitchConfig cfg = base(1);
  cfg.mirror_sessions.push_back({.name = "span", .dst_port = 3, .queue = 0, .truncate = 128, .rx_ports = {0}});
  Switch sw(cfg, kT0);
  run(sw, kT0, kT0 + 2 * kMs);
  sw.poll_all(kT0 + 3 * kMs);  // what was queued leaves
  const uint64_t rx0 = sw.rx_packets(0);
  ASSERT_GT(rx0, 100u);
  EXPECT_EQ(sw.mirror().copies(0, PortMirror::kRx), rx0);
  EXPECT_EQ(sw.tx_packets(3), rx0) << "every frame h0 sent, once, at h3";
  EXPECT_EQ(sw.tx_bytes(3), rx0 * 128) << "cut to the session's 128 bytes";
  EXPECT_EQ(sw.tx_packets(2), 0u);
  EXPECT_EQ(sw.tx_packets(1), rx0) << "the originals still go where they are routed";
  EXPECT_EQ(sw.mirror().lost(0, PortMirror::kRx), 0u);
}

TEST(Mirror, TxCopiesCrossWorkersWholeAndAreNotMirroredAgain) {
  SwitchConfig cfg = base(2);  // h1 on worker 1, h2 on worker 0
  cfg.ports[0].host.flows[0].stop_ns = kT0 + 1500 * kUs;  // so that every copy has left by the end
  cfg.mirror_sessions.push_back({.name = "out", .dst_port = 2, .tx_ports = {1}});
  // h2's own tx is watched too: the copies it sends must not come back as copies of copies.
  cfg.mirror_sessions.push_back({.name = "echo", .dst_port = 3, .tx_ports = {2}});
  Switch sw(cfg, kT0);
  run(sw, kT0, kT0 + 2 * kMs);
  for (int i = 0; i < 10; ++i) sw.poll_all(kT0 + 3 * kMs + i * kUs);
  const uint64_t tx1 = sw.tx_packets(1);
  ASSERT_GT(tx1, 100u);
  EXPECT_EQ(sw.mirror().copies(1, PortMirror::kTx), tx1);
  EXPECT_EQ(sw.tx_packets(2), tx1);
  EXPECT_EQ(sw.tx_bytes(2), sw.tx_bytes(1)) << "whole frames";
  EXPECT_EQ(sw.mirror().copies(2, PortMirror::kTx), 0u) << "a copy is never mirrored";
  EXPECT_EQ(sw.tx_packets(3), 0u);
  EXPECT_TRUE(sw.totals().balanced());
}

// The analyser port is served before the watched one in the worker's loop: a tx copy lands in
// a queue that already published its depth this poll. The books must still hold after every
// poll (found by fuzz_control, which checks them after each request).
TEST(Mirror, TxCopiesIntoAPortServedEarlierAreCountedAtOnce) {
  SwitchConfig cfg = base(1);
  cfg.mirror_sessions.push_back({.name = "back", .dst_port = 0, .truncate = 64, .tx_ports = {1}});
  Switch sw(cfg, kT0);
  run(sw, kT0, kT0 + kMs);
  EXPECT_GT(sw.mirror().copies(1, PortMirror::kTx), 10u);
}

TEST(Mirror, SetAtRunTimeStartsAndStopsCopies) {
  Switch sw(base(1), kT0);
  run(sw, kT0, kT0 + kMs);
  EXPECT_EQ(sw.tx_packets(3), 0u);
  apply_mirror_sessions(sw.mirror(), {{.name = "s", .dst_port = 3, .rx_ports = {0}}}, sw.num_ports());
  const uint64_t before = sw.rx_packets(0);
  run(sw, kT0 + kMs, kT0 + 2 * kMs);
  apply_mirror_sessions(sw.mirror(), {}, sw.num_ports());
  const uint64_t during = sw.rx_packets(0) - before;
  run(sw, kT0 + 2 * kMs, kT0 + 3 * kMs);
  EXPECT_EQ(sw.mirror().copies(0, PortMirror::kRx), during);
  EXPECT_EQ(sw.tx_packets(3), during);
}

// A lossless flow mirrored onto a port too slow for it: the copies are tail-dropped at the
// analyser port, and neither a PAUSE nor a lossless drop follows.
TEST(Mirror, CopiesOfLosslessTrafficNeverPause) {
  Net n;
  const uint8_t a = n.add_host(25), b = n.add_host(25), slow = n.add_host(1);
  n.add_flow(a, b, 10, 0x300);
  n.cfg.mirror_sessions.push_back({.name = "span", .dst_port = slow, .queue = kLossyQueue, .rx_ports = {a}});
  Switch sw(n.cfg, kT0);
  run(sw, kT0, kT0 + 3 * kMs);
  EXPECT_GT(sw.mirror().copies(a, PortMirror::kRx), 1000u);
  EXPECT_GT(qdrops_all(sw, slow, kLossyQueue), 0u) << "the analyser port cannot carry 10 Gb/s of copies";
  EXPECT_EQ(pfc_frames_sent(sw), 0u);
  EXPECT_EQ(sw.lossless_drops(), 0u);
  EXPECT_EQ(sw.tx_packets(b), sw.rx_packets(a) - sw.egress(b).queued_packets()) << "the original flow loses nothing";
}

TEST(Mirror, BadSessionsAreRefusedWithTheirField) {
  struct Case {
    MirrorSessionSpec s;
    const char* says;
  } cases[] = {
      {{.name = "x", .dst_port = 9, .rx_ports = {0}}, "mirror_sessions[0].dst_port: no port 9"},
      {{.name = "x", .dst_port = 3, .rx_ports = {0, 3}}, "mirror_sessions[0].rx_ports[1]: the destination port"},
      {{.name = "x", .dst_port = 3, .truncate = 10, .rx_ports = {0}}, "mirror_sessions[0].truncate"},
      {{.name = "x", .dst_port = 3, .queue = kLossless, .rx_ports = {0}}, "mirror_sessions[0].queue: queue 3 is lossless"},
  };
  for (auto& c : cases) {
    Net n;
    for (int h = 0; h < 4; ++h) n.add_host(25);
    n.cfg.mirror_sessions.push_back(c.s);
    try {
      Switch sw(n.cfg, kT0);
      ADD_FAILURE() << "accepted: " << c.says;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(c.says), std::string::npos) << e.what();
    }
  }
  // One port side, two sessions.
  Net n;
  for (int h = 0; h < 4; ++h) n.add_host(25);
  n.cfg.mirror_sessions.push_back({.name = "a", .dst_port = 3, .rx_ports = {0}});
  n.cfg.mirror_sessions.push_back({.name = "b", .dst_port = 2, .rx_ports = {0}});
  const auto bad = check_mirror_sessions(n.cfg.mirror_sessions, 4, n.cfg.mmu);
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->session, 1u);
  EXPECT_EQ(bad->field, "rx_ports[0]");
  EXPECT_NE(bad->reason.find("already watched by session 'a'"), std::string::npos) << bad->reason;
}

}  // namespace
}  // namespace rs::test
