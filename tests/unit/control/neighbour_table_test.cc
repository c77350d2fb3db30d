// The neighbour table's NUD state machine, time stepped by hand: each call's actions are
// compared whole, as text ("send 1/10.0.0.1 m1 p2": kind, key, MAC, packet, drop reason).
#include "control/local/neighbour_table.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

namespace rs {
namespace {

using V = std::vector<std::string>;
using Learn = NeighbourTable::Learn;

constexpr uint64_t kS = 1'000'000'000;
constexpr uint64_t kMs = 1'000'000;
// Well away from zero, so that no subtraction in the table could hide behind a clamp.
constexpr uint64_t T0 = 1000 * kS;

rte_ether_addr mac(uint8_t n) { return rte_ether_addr{{0x02, 0, 0, 0, 0, n}}; }
NeighbourKey key(uint16_t port, const char* ip) { return NeighbourKey{port, parse_ip(ip).value()}; }

// Held packets are addresses in this array; the text names them by index.
char g_pkts[64];
void* pkt(int i) { return &g_pkts[i]; }

std::string text(const NudAction& a) {
  static const char* const kinds[] = {"probe-mcast", "probe-ucast", "resolved", "unresolved", "send", "drop"};
  std::string s = std::string(kinds[a.kind]) + " " + std::to_string(a.key.iface) + "/" + format_ip(a.key.ip);
  if (a.kind != NudAction::ProbeMulticast && a.kind != NudAction::Drop) {
    const auto& b = a.mac.addr_bytes;
    const bool ours = b[0] == 0x02 && b[1] == 0 && b[2] == 0 && b[3] == 0 && b[4] == 0;
    s += ours ? " m" + std::to_string(b[5]) : " ?mac";
  } else if (!rte_is_zero_ether_addr(&a.mac)) {
    s += " !mac";  // these kinds carry none
  }
  if (a.pkt) s += " p" + std::to_string(static_cast<char*>(a.pkt) - g_pkts);
  if (a.why != DropWhy::None) s += std::string(" ") + drop_why_name(a.why);
  return s;
}

V text(const NudActions& v) {
  V out;
  for (const auto& a : v) out.push_back(text(a));
  return out;
}

NudState state(const NeighbourTable& t, const NeighbourKey& k) { return t.find(k)->state; }

const NeighbourKey A = key(1, "10.0.0.1");
const NeighbourKey B = key(1, "10.0.0.2");
const NeighbourKey C = key(2, "fe80::1");

TEST(NeighbourTable, AddressesAndNames) {
  auto v4 = parse_ip("192.0.2.7");
  ASSERT_TRUE(v4);
  EXPECT_FALSE(v4->v6);
  EXPECT_EQ(v4->b[0], 192);
  EXPECT_EQ(v4->b[3], 7);
  EXPECT_EQ(v4->b[4], 0);
  EXPECT_EQ(format_ip(*v4), "192.0.2.7");
  auto v6 = parse_ip("2001:db8::1");
  ASSERT_TRUE(v6);
  EXPECT_TRUE(v6->v6);
  EXPECT_EQ(format_ip(*v6), "2001:db8::1");
  EXPECT_FALSE(parse_ip("10.0.0.256"));
  EXPECT_FALSE(parse_ip("2001:db8::g"));
  EXPECT_FALSE(parse_ip(""));
  EXPECT_STREQ(nud_state_name(NudState::Incomplete), "incomplete");
  EXPECT_STREQ(nud_state_name(NudState::Reachable), "reachable");
  EXPECT_STREQ(nud_state_name(NudState::Stale), "stale");
  EXPECT_STREQ(nud_state_name(NudState::Delay), "delay");
  EXPECT_STREQ(nud_state_name(NudState::Probe), "probe");
  EXPECT_STREQ(nud_state_name(NudState::Failed), "failed");
  EXPECT_LT(A, B);  // by port, then address
  EXPECT_LT(B, C);
}

TEST(NeighbourTable, GleanProbeReplySendsHeldInArrivalOrder) {
  NeighbourTable t;
  EXPECT_EQ(text(t.resolve(A, pkt(1), T0)), V{"probe-mcast 1/10.0.0.1"});
  EXPECT_EQ(state(t, A), NudState::Incomplete);
  EXPECT_EQ(t.next_timer(), T0 + kS);
  EXPECT_EQ(text(t.resolve(A, pkt(2), T0 + 100 * kMs)), V{});
  EXPECT_EQ(text(t.resolve(A, pkt(3), T0 + 200 * kMs)), V{});
  EXPECT_EQ(t.held_packets(), 3u);
  EXPECT_EQ(text(t.learn(A, mac(1), Learn::SolicitedReply, true, false, T0 + 300 * kMs)),
            (V{"resolved 1/10.0.0.1 m1", "send 1/10.0.0.1 m1 p1", "send 1/10.0.0.1 m1 p2", "send 1/10.0.0.1 m1 p3"}));
  const Neighbour* n = t.find(A);
  EXPECT_EQ(n->state, NudState::Reachable);
  EXPECT_TRUE(n->has_mac);
  EXPECT_EQ(n->confirmed_ns, T0 + 300 * kMs);
  EXPECT_EQ(n->timer_ns, n->confirmed_ns + n->reachable_ns);
  EXPECT_EQ(t.held_packets(), 0u);
  EXPECT_EQ(text(t.resolve(A, pkt(4), T0 + kS)), V{"send 1/10.0.0.1 m1 p4"});
  const NudCounters& c = t.counters();
  EXPECT_EQ(c.probes_multicast, 1u);
  EXPECT_EQ(c.resolved, 1u);
  EXPECT_EQ(c.held, 3u);
  EXPECT_EQ(c.hold_dropped, 0u);
  // A second reply with the same MAC only confirms again: nothing to program.
  EXPECT_EQ(text(t.learn(A, mac(1), Learn::SolicitedReply, true, false, T0 + 2 * kS)), V{});
  EXPECT_EQ(t.find(A)->timer_ns, T0 + 2 * kS + t.find(A)->reachable_ns);
}

TEST(NeighbourTable, HoldQueueDropsTheOldest) {
  NeighbourTable t;  // hold_packets 3
  EXPECT_EQ(text(t.resolve(A, pkt(1), T0)), V{"probe-mcast 1/10.0.0.1"});
  EXPECT_EQ(text(t.resolve(A, pkt(2), T0)), V{});
  EXPECT_EQ(text(t.resolve(A, pkt(3), T0)), V{});
  EXPECT_EQ(text(t.resolve(A, pkt(4), T0)), V{"drop 1/10.0.0.1 p1 hold_queue_full"});
  EXPECT_EQ(text(t.resolve(A, pkt(5), T0)), V{"drop 1/10.0.0.1 p2 hold_queue_full"});
  EXPECT_EQ(text(t.resolve(A, nullptr, T0)), V{});
  EXPECT_EQ(t.held_packets(), 3u);
  EXPECT_EQ(text(t.learn(A, mac(1), Learn::SolicitedReply, true, false, T0)),
            (V{"resolved 1/10.0.0.1 m1", "send 1/10.0.0.1 m1 p3", "send 1/10.0.0.1 m1 p4", "send 1/10.0.0.1 m1 p5"}));
  EXPECT_EQ(t.counters().held, 5u);
  EXPECT_EQ(t.counters().hold_dropped, 2u);

  NudParams p;
  p.hold_packets = 0;
  NeighbourTable none(p);
  EXPECT_EQ(text(none.resolve(A, pkt(1), T0)), (V{"probe-mcast 1/10.0.0.1", "drop 1/10.0.0.1 p1 hold_queue_full"}));
}

TEST(NeighbourTable, MulticastProbesEveryRetransThenFailed) {
  NeighbourTable t;  // 3 multicast probes, 1 s apart
  EXPECT_EQ(text(t.resolve(A, pkt(1), T0)), V{"probe-mcast 1/10.0.0.1"});
  EXPECT_EQ(text(t.tick(T0 + kS - 1)), V{});
  EXPECT_EQ(text(t.tick(T0 + kS)), V{"probe-mcast 1/10.0.0.1"});
  EXPECT_EQ(t.next_timer(), T0 + 2 * kS);
  EXPECT_EQ(text(t.tick(T0 + 2 * kS)), V{"probe-mcast 1/10.0.0.1"});
  EXPECT_EQ(t.find(A)->probes, 3u);
  EXPECT_EQ(text(t.resolve(A, pkt(2), T0 + 2500 * kMs)), V{});
  EXPECT_EQ(text(t.tick(T0 + 3 * kS - 1)), V{});
  EXPECT_EQ(text(t.tick(T0 + 3 * kS)), (V{"drop 1/10.0.0.1 p1 failed", "drop 1/10.0.0.1 p2 failed"}));
  EXPECT_EQ(state(t, A), NudState::Failed);
  EXPECT_FALSE(t.find(A)->has_mac);
  EXPECT_EQ(t.held_packets(), 0u);
  EXPECT_EQ(t.counters().probes_multicast, 3u);
  EXPECT_EQ(t.counters().failed, 1u);
  EXPECT_EQ(t.counters().hold_dropped, 2u);
  // Kept failed_ns, then removed; never programmed, so nothing to unprogram.
  EXPECT_EQ(t.next_timer(), T0 + 4 * kS);
  EXPECT_EQ(text(t.tick(T0 + 4 * kS)), V{});
  EXPECT_EQ(t.size(), 0u);
  EXPECT_EQ(t.counters().removed, 1u);
  EXPECT_EQ(t.next_timer(), kNudNever);
}

TEST(NeighbourTable, PacketToFailedEntryRestartsResolution) {
  NeighbourTable t;
  t.resolve(A, nullptr, T0);
  for (uint64_t s = 1; s <= 3; ++s) t.tick(T0 + s * kS);
  ASSERT_EQ(state(t, A), NudState::Failed);
  EXPECT_EQ(text(t.resolve(A, pkt(1), T0 + 3500 * kMs)), V{"probe-mcast 1/10.0.0.1"});
  EXPECT_EQ(state(t, A), NudState::Incomplete);
  EXPECT_EQ(t.find(A)->probes, 1u);
  EXPECT_EQ(t.held_packets(), 1u);
  EXPECT_EQ(t.next_timer(), T0 + 4500 * kMs);
  EXPECT_EQ(text(t.learn(A, mac(1), Learn::Unsolicited, true, false, T0 + 4 * kS)),
            (V{"resolved 1/10.0.0.1 m1", "send 1/10.0.0.1 m1 p1"}));
  EXPECT_EQ(state(t, A), NudState::Stale);

  NudParams p;
  p.mcast_probes = 0;  // Linux: no probes to send, the packet fails at once
  NeighbourTable none(p);
  EXPECT_EQ(text(none.resolve(A, pkt(1), T0)), V{"drop 1/10.0.0.1 p1 failed"});
  EXPECT_EQ(state(none, A), NudState::Failed);
}

TEST(NeighbourTable, ReachableTimeIsRandomisedWithinBounds) {
  std::set<uint64_t> seen;
  for (uint64_t seed = 1; seed <= 32; ++seed) {
    NeighbourTable t({}, seed);
    t.resolve(A, nullptr, T0);
    t.learn(A, mac(1), Learn::SolicitedReply, true, false, T0);
    const uint64_t r = t.find(A)->reachable_ns;
    EXPECT_GE(r, 15 * kS);
    EXPECT_LT(r, 45 * kS);
    seen.insert(r);
    EXPECT_EQ(t.next_timer(), T0 + r);
    EXPECT_EQ(text(t.tick(T0 + r - 1)), V{});
    EXPECT_EQ(state(t, A), NudState::Reachable);
    // Unused since it was created: STALE, which keeps the MAC programmed.
    EXPECT_EQ(text(t.tick(T0 + r)), V{});
    EXPECT_EQ(state(t, A), NudState::Stale);
    EXPECT_TRUE(t.find(A)->has_mac);
    EXPECT_EQ(t.next_timer(), T0 + 60 * kS);  // its gc deadline: last use plus gc_stale
  }
  EXPECT_GT(seen.size(), 16u);
}

TEST(NeighbourTable, ReachableInUseGoesStraightToDelay) {
  NeighbourTable t;
  t.learn(A, mac(1), Learn::SolicitedReply, true, true, T0);
  const uint64_t r = t.find(A)->reachable_ns;
  EXPECT_EQ(text(t.used(A, T0 + r - kS)), V{});
  EXPECT_EQ(text(t.tick(T0 + r)), V{});
  EXPECT_EQ(state(t, A), NudState::Delay);
  EXPECT_EQ(t.next_timer(), T0 + r + 5 * kS);
}

TEST(NeighbourTable, StaleUsedDelayProbeThenSolicitedReply) {
  NeighbourTable t;
  EXPECT_EQ(text(t.learn(A, mac(1), Learn::Unsolicited, true, true, T0)), V{"resolved 1/10.0.0.1 m1"});
  EXPECT_EQ(state(t, A), NudState::Stale);
  EXPECT_EQ(text(t.used(A, T0 + 10 * kS)), V{});
  EXPECT_EQ(state(t, A), NudState::Delay);
  EXPECT_EQ(t.next_timer(), T0 + 15 * kS);
  EXPECT_EQ(text(t.tick(T0 + 15 * kS - 1)), V{});
  EXPECT_EQ(text(t.tick(T0 + 15 * kS)), V{"probe-ucast 1/10.0.0.1 m1"});
  EXPECT_EQ(state(t, A), NudState::Probe);
  EXPECT_EQ(t.next_timer(), T0 + 16 * kS);
  EXPECT_EQ(text(t.tick(T0 + 16 * kS)), V{"probe-ucast 1/10.0.0.1 m1"});
  // Still programmed all along; the reply confirms the same MAC: nothing to program.
  EXPECT_EQ(text(t.resolve(A, pkt(1), T0 + 16 * kS)), V{"send 1/10.0.0.1 m1 p1"});
  EXPECT_EQ(text(t.learn(A, mac(1), Learn::SolicitedReply, true, false, T0 + 16500 * kMs)), V{});
  const Neighbour* n = t.find(A);
  EXPECT_EQ(n->state, NudState::Reachable);
  EXPECT_EQ(n->probes, 0u);
  EXPECT_EQ(n->timer_ns, T0 + 16500 * kMs + n->reachable_ns);
  EXPECT_EQ(t.counters().probes_unicast, 2u);

  // A packet, not only the counters, moves STALE to DELAY, and goes at once.
  NeighbourTable u;
  u.learn(A, mac(1), Learn::Unsolicited, true, true, T0);
  EXPECT_EQ(text(u.resolve(A, pkt(2), T0 + kS)), V{"send 1/10.0.0.1 m1 p2"});
  EXPECT_EQ(state(u, A), NudState::Delay);
}

TEST(NeighbourTable, ProbeWithoutReplyFailsAndUnprograms) {
  NeighbourTable t;
  t.learn(A, mac(1), Learn::Unsolicited, true, true, T0);
  t.used(A, T0);
  EXPECT_EQ(text(t.tick(T0 + 5 * kS)), V{"probe-ucast 1/10.0.0.1 m1"});
  EXPECT_EQ(text(t.tick(T0 + 6 * kS)), V{"probe-ucast 1/10.0.0.1 m1"});
  EXPECT_EQ(text(t.tick(T0 + 7 * kS)), V{"probe-ucast 1/10.0.0.1 m1"});
  EXPECT_EQ(text(t.tick(T0 + 8 * kS - 1)), V{});
  EXPECT_EQ(text(t.tick(T0 + 8 * kS)), V{"unresolved 1/10.0.0.1 m1"});
  EXPECT_EQ(state(t, A), NudState::Failed);
  EXPECT_FALSE(t.find(A)->has_mac);
  EXPECT_EQ(t.counters().failed, 1u);
  EXPECT_EQ(text(t.tick(T0 + 9 * kS)), V{});  // already unprogrammed
  EXPECT_EQ(t.size(), 0u);

  // A late tick takes every step owed at once, with the time it runs at.
  NeighbourTable late;
  late.learn(A, mac(1), Learn::Unsolicited, true, true, T0);
  late.used(A, T0);
  EXPECT_EQ(text(late.tick(T0 + 100 * kS)), V{"probe-ucast 1/10.0.0.1 m1"});
  EXPECT_EQ(late.next_timer(), T0 + 101 * kS);
}

TEST(NeighbourTable, UnsolicitedMacChangeGoesStale) {
  NeighbourTable t;
  t.resolve(A, nullptr, T0);
  t.learn(A, mac(1), Learn::SolicitedReply, true, false, T0);
  // Same MAC, unsolicited: asserts nothing.
  EXPECT_EQ(text(t.learn(A, mac(1), Learn::Unsolicited, true, false, T0 + kS)), V{});
  EXPECT_EQ(state(t, A), NudState::Reachable);
  // Gratuitous ARP with a new MAC: STALE, reprogrammed, and no longer confirmed.
  EXPECT_EQ(text(t.learn(A, mac(2), Learn::Unsolicited, true, false, T0 + 2 * kS)), V{"resolved 1/10.0.0.1 m2"});
  const Neighbour* n = t.find(A);
  EXPECT_EQ(n->state, NudState::Stale);
  EXPECT_EQ(n->confirmed_ns, kNudNever);
  t.used(A, T0 + 3 * kS);
  EXPECT_EQ(text(t.tick(T0 + 8 * kS)), V{"probe-ucast 1/10.0.0.1 m2"});
  // A solicited reply with yet another MAC overrides: REACHABLE with it.
  EXPECT_EQ(text(t.learn(A, mac(3), Learn::SolicitedReply, true, false, T0 + 9 * kS)), V{"resolved 1/10.0.0.1 m3"});
  EXPECT_EQ(state(t, A), NudState::Reachable);
  EXPECT_EQ(t.counters().resolved, 3u);

  // Absent: created only when asked (an ARP request for one of our addresses).
  EXPECT_EQ(text(t.learn(B, mac(4), Learn::Unsolicited, true, false, T0)), V{});
  EXPECT_EQ(t.find(B), nullptr);
  EXPECT_EQ(text(t.learn(B, mac(4), Learn::Unsolicited, true, true, T0)), V{"resolved 1/10.0.0.2 m4"});
  EXPECT_EQ(state(t, B), NudState::Stale);
  EXPECT_EQ(text(t.learn(C, mac(5), Learn::SolicitedReply, true, true, T0)), V{"resolved 2/fe80::1 m5"});
  EXPECT_EQ(state(t, C), NudState::Reachable);
}

TEST(NeighbourTable, NeighbourAdvertisementWithoutOverrideKeepsTheMac) {
  NeighbourTable t;
  t.learn(C, mac(1), Learn::SolicitedReply, true, true, T0);
  // RFC 4861 7.2.5: REACHABLE goes STALE, the MAC stays.
  EXPECT_EQ(text(t.learn(C, mac(2), Learn::SolicitedReply, false, false, T0 + kS)), V{});
  EXPECT_EQ(state(t, C), NudState::Stale);
  EXPECT_EQ(t.find(C)->mac.addr_bytes[5], 1);
  // Any other state: the advertisement is ignored.
  EXPECT_EQ(text(t.learn(C, mac(2), Learn::SolicitedReply, false, false, T0 + 2 * kS)), V{});
  EXPECT_EQ(state(t, C), NudState::Stale);
  EXPECT_EQ(t.find(C)->mac.addr_bytes[5], 1);
  // The same MAC without O is still a confirmation.
  EXPECT_EQ(text(t.learn(C, mac(1), Learn::SolicitedReply, false, false, T0 + 3 * kS)), V{});
  EXPECT_EQ(state(t, C), NudState::Reachable);
  // With O it overrides.
  EXPECT_EQ(text(t.learn(C, mac(2), Learn::Unsolicited, true, false, T0 + 4 * kS)), V{"resolved 2/fe80::1 m2"});
  // An INCOMPLETE entry has no MAC to keep: it takes the advertised one.
  t.resolve(key(2, "fe80::2"), pkt(1), T0);
  EXPECT_EQ(text(t.learn(key(2, "fe80::2"), mac(3), Learn::SolicitedReply, false, false, T0 + kS)),
            (V{"resolved 2/fe80::2 m3", "send 2/fe80::2 m3 p1"}));
}

TEST(NeighbourTable, StaticEntriesAreImmune) {
  NeighbourTable t;
  EXPECT_EQ(text(t.add_static(A, mac(1))), V{"resolved 1/10.0.0.1 m1"});
  const Neighbour* n = t.find(A);
  EXPECT_TRUE(n->is_static);
  EXPECT_EQ(n->state, NudState::Reachable);
  EXPECT_EQ(t.next_timer(), kNudNever);
  EXPECT_EQ(text(t.learn(A, mac(2), Learn::Unsolicited, true, true, T0)), V{});
  EXPECT_EQ(text(t.learn(A, mac(2), Learn::SolicitedReply, true, true, T0)), V{});
  EXPECT_EQ(text(t.used(A, T0)), V{});
  EXPECT_EQ(text(t.resolve(A, pkt(1), T0)), V{"send 1/10.0.0.1 m1 p1"});
  EXPECT_EQ(text(t.tick(T0 + 100000 * kS)), V{});
  EXPECT_EQ(state(t, A), NudState::Reachable);
  EXPECT_EQ(t.find(A)->mac.addr_bytes[5], 1);
  EXPECT_EQ(text(t.add_static(A, mac(1))), V{});
  EXPECT_EQ(text(t.add_static(A, mac(2))), V{"resolved 1/10.0.0.1 m2"});
  EXPECT_EQ(text(t.remove(A)), V{"unresolved 1/10.0.0.1 m2"});
  EXPECT_EQ(t.size(), 0u);

  // Configured while a packet waits for it: the packet goes.
  t.resolve(B, pkt(2), T0);
  EXPECT_EQ(text(t.add_static(B, mac(3))), (V{"resolved 1/10.0.0.2 m3", "send 1/10.0.0.2 m3 p2"}));
  EXPECT_EQ(t.next_timer(), kNudNever);
  EXPECT_EQ(text(t.tick(T0 + 100 * kS)), V{});
}

TEST(NeighbourTable, UnusedStaleEntriesAreCollected) {
  NeighbourTable t;
  t.learn(A, mac(1), Learn::Unsolicited, true, true, T0);
  EXPECT_EQ(t.next_timer(), T0 + 60 * kS);
  EXPECT_EQ(text(t.tick(T0 + 60 * kS - 1)), V{});
  EXPECT_EQ(text(t.tick(T0 + 60 * kS)), V{"unresolved 1/10.0.0.1 m1"});
  EXPECT_EQ(t.size(), 0u);
  EXPECT_EQ(t.counters().removed, 1u);

  // Kept REACHABLE by replies but never used: on expiry it is already past its gc deadline,
  // and goes in the same tick.
  t.resolve(B, nullptr, T0);
  for (uint64_t s = 0; s <= 100; s += 10) t.learn(B, mac(2), Learn::SolicitedReply, true, false, T0 + s * kS);
  const uint64_t expiry = T0 + 100 * kS + t.find(B)->reachable_ns;
  EXPECT_EQ(text(t.tick(expiry - 1)), V{});
  EXPECT_EQ(text(t.tick(expiry)), V{"unresolved 1/10.0.0.2 m2"});
  EXPECT_EQ(t.size(), 0u);
}

TEST(NeighbourTable, RemoveDropsHeldPackets) {
  NeighbourTable t;
  t.resolve(A, pkt(1), T0);
  t.resolve(A, pkt(2), T0);
  EXPECT_EQ(text(t.remove(A)), (V{"drop 1/10.0.0.1 p1 failed", "drop 1/10.0.0.1 p2 failed"}));
  EXPECT_EQ(t.held_packets(), 0u);
  EXPECT_EQ(text(t.remove(A)), V{});
  EXPECT_EQ(t.next_timer(), kNudNever);
}

TEST(NeighbourTable, NextTimerIsTheEarliest) {
  NeighbourTable t;
  EXPECT_EQ(t.next_timer(), kNudNever);
  t.learn(A, mac(1), Learn::Unsolicited, true, true, T0);  // gc at +60 s
  EXPECT_EQ(t.next_timer(), T0 + 60 * kS);
  t.learn(C, mac(2), Learn::SolicitedReply, true, true, T0 + 2 * kS);  // expires within +17..47 s
  EXPECT_EQ(t.next_timer(), T0 + 2 * kS + t.find(C)->reachable_ns);
  t.resolve(B, nullptr, T0 + 3 * kS);  // retransmits at +4 s
  EXPECT_EQ(t.next_timer(), T0 + 4 * kS);
  t.used(A, T0 + 3500 * kMs);  // DELAY until +8.5 s
  EXPECT_EQ(t.next_timer(), T0 + 4 * kS);
  auto all = t.entries();
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0]->key, A);
  EXPECT_EQ(all[1]->key, B);
  EXPECT_EQ(all[2]->key, C);
  // Ticking at each next_timer() reaches every event in time order.
  V log;
  for (int i = 0; i < 20 && t.next_timer() != kNudNever; ++i) {
    const uint64_t at = t.next_timer();
    for (auto& s : text(t.tick(at))) log.push_back(std::to_string((at - T0) / kMs) + " " + s);
  }
  // B fails silently (it never had a MAC); A is probed from DELAY and fails; C expires to
  // STALE, unused since its creation, and is collected a minute after it.
  EXPECT_EQ(log, (V{"4000 probe-mcast 1/10.0.0.2", "5000 probe-mcast 1/10.0.0.2", "8500 probe-ucast 1/10.0.0.1 m1",
                    "9500 probe-ucast 1/10.0.0.1 m1", "10500 probe-ucast 1/10.0.0.1 m1", "11500 unresolved 1/10.0.0.1 m1",
                    "62000 unresolved 2/fe80::1 m2"}));
  EXPECT_EQ(t.size(), 0u);
}

// The same seed and calls give the same actions and times; other seeds other times.
TEST(NeighbourTable, DeterministicForASeed) {
  auto run = [](uint64_t seed) {
    NeighbourTable t({}, seed);
    V log;
    auto note = [&](uint64_t at, const NudActions& v) {
      for (auto& s : text(v)) log.push_back(std::to_string(at / kMs) + " " + s);
    };
    for (int i = 0; i < 8; ++i) {
      const NeighbourKey k = key(1, ("10.0.1." + std::to_string(i)).c_str());
      note(T0, t.resolve(k, pkt(i), T0 + i * kMs));
      if (i % 2 == 0) note(T0, t.learn(k, mac(static_cast<uint8_t>(i)), Learn::SolicitedReply, true, false, T0 + i * kMs + 10 * kMs));
    }
    for (int step = 0; step < 40 && t.next_timer() != kNudNever; ++step) {
      const uint64_t at = t.next_timer();
      for (auto* n : t.entries())
        if (n->state == NudState::Stale && n->key.ip.b[3] % 4 == 0) t.used(n->key, at);
      note(at, t.tick(at));
      for (auto* n : t.entries()) {
        EXPECT_EQ(n->has_mac, nud_valid(n->state));
        EXPECT_TRUE(n->held.empty() || n->state == NudState::Incomplete);
      }
    }
    for (auto* n : t.entries()) log.push_back(format_ip(n->key.ip) + " " + nud_state_name(n->state));
    return log;
  };
  const V a = run(7);
  EXPECT_EQ(a, run(7));
  EXPECT_NE(a, run(8));
  EXPECT_GT(a.size(), 20u);
}

TEST(NeighbourTable, FullTableRefusesNewEntries) {
  NudParams p;
  p.max_entries = 2;
  NeighbourTable t(p);
  t.resolve(A, nullptr, T0);
  t.learn(B, mac(2), Learn::Unsolicited, true, true, T0);
  EXPECT_EQ(text(t.resolve(C, pkt(1), T0)), V{"drop 2/fe80::1 p1 table_full"});
  EXPECT_EQ(text(t.resolve(C, nullptr, T0)), V{});
  EXPECT_EQ(text(t.learn(C, mac(3), Learn::Unsolicited, true, true, T0)), V{});
  EXPECT_EQ(t.size(), 2u);
  EXPECT_EQ(t.find(C), nullptr);
  EXPECT_EQ(t.counters().table_full, 1u);
  // Entries already there still work.
  EXPECT_EQ(text(t.resolve(B, pkt(2), T0)), V{"send 1/10.0.0.2 m2 p2"});
  // Once A has failed and gone, there is room again.
  for (uint64_t s = 1; s <= 4; ++s) t.tick(T0 + s * kS);
  EXPECT_EQ(t.find(A), nullptr);
  EXPECT_EQ(text(t.resolve(C, pkt(3), T0 + 5 * kS)), V{"probe-mcast 2/fe80::1"});
  EXPECT_EQ(t.size(), 2u);
}

}  // namespace
}  // namespace rs
