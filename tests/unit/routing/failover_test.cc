// Fast failover (issue 18): a member whose link goes down is left on the next burst, with no
// table rebuilt and no control-plane trip. ECMP moves exactly the dead member's flows, counts
// them (its steered_away, ipv4_route's member_down) and brings every flow back when the link
// returns; every registered policy leaves a dead member, even with flow state pinned to it; a
// group with no live member drops as no_live_member. Through a whole Switch stepped in time:
// scheduled link events and `admin: down` reach the load view, a down port flushes its queue
// as link_down, sends nothing and loses what it receives, a multi-member group moves its
// traffic to the live member, and the books balance; an ethdev's own carrier counts too. The
// config's `link_events` and `admin`.
#include <fmt/core.h>
#include <gtest/gtest.h>
#include <rte_ethdev.h>

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "control/config/config_loader.h"
#include "dataplane/routing/policy_set.h"
#include "dataplane/stages/ip_route.h"
#include "dataplane/stages/l3_input.h"
#include "dataplane/stages/nexthop_select.h"
#include "dataplane/switch/switch.h"
#include "tests/support/constants.h"
#include "tests/support/fake_port.h"
#include "tests/support/host_net.h"
#include "tests/support/stage_harness.h"

namespace rs {
inline void PrintTo(DropReason r, std::ostream* os) { *os << drop_reason_name(r); }
}  // namespace rs

namespace rs::test {
namespace {

constexpr int kFlows = 1000;
constexpr uint16_t kDead = 4;  // member 3 of ports 1..8

std::vector<std::string> suite_policies() {
  std::vector<std::string> v;
  for (auto& e : RoutingPolicyRegistry::all())
    if (!e.name.starts_with("test_")) v.emplace_back(e.name);
  return v;
}

// One packet of each of `n` flows (distinct UDP source ports and destinations).
std::vector<PacketSpec> flows(int n, uint32_t psn = 0) {
  std::vector<PacketSpec> v;
  for (int i = 0; i < n; ++i)
    v.push_back(Eth{} / Ipv4{.dst = fmt::format("10.0.2.{}", 1 + i % 250)} / Udp{.sport = static_cast<uint16_t>(0xC000 + i)} /
                Bth{.psn = psn + static_cast<uint32_t>(i)});
  return v;
}

// A world of ports 0..8 with 10.0.2.0/24 on a group of ports 1..8 under `policy`, and the
// route step R (the default inline form or the general one) then nexthop_select over it.
template <typename R>
struct Path {
  explicit Path(const std::string& policy) {
    std::vector<std::pair<uint16_t, std::string>> members;
    for (uint16_t p = 1; p <= 8; ++p) members.push_back({p, fmt::format("02:00:00:00:cc:{:02x}", p)});
    gid = w.route_group("10.0.2.0/24", members, PolicySpec{policy, {}});
  }
  // Each packet's egress port (kInvalidPort when dropped), and its drop reasons.
  std::vector<uint16_t> send(const std::vector<PacketSpec>& specs) {
    L3Input parse{StageEnv{}};
    std::vector<uint16_t> port;
    for (std::size_t at = 0; at < specs.size(); at += kBurst) {
      std::vector<rte_mbuf*> v;
      for (std::size_t i = at; i < std::min(specs.size(), at + kBurst); ++i) {
        v.push_back(specs[i].mbuf(test_pool()));
        EXPECT_EQ(parse.process_one(v.back()), L3Input::Ipv4);
        meta(v.back()).out_port = kInvalidPort;
      }
      auto routed = route.run_mbufs(v);
      auto chosen = select.run_mbufs(routed.edge[R::Select]);
      routed.edge.erase(R::Select);
      for (auto* m : routed[kNextDrop]) ++reasons[meta(m).drop_reason];
      for (auto* m : chosen[kNextDrop]) ++reasons[meta(m).drop_reason];
      for (auto* m : v)
        port.push_back(meta(m).drop_reason == DropReason::None ? meta(m).out_port : kInvalidPort);
    }
    return port;
  }
  uint64_t steered() { return w.fib->policies(0).at(gid, 0)->counters[0].get(); }

  TestWorld w{9};
  uint32_t gid = 0;
  StageHarness<R> route{{}, &w};
  StageHarness<NexthopSelect> select{{}, &w};
  std::map<DropReason, int> reasons;
};

template <typename R>
void ecmp_moves_only_the_dead_members_flows() {
  Path<R> path("ecmp");
  const auto specs = flows(kFlows);
  const auto before = path.send(specs);
  ASSERT_EQ(std::set<uint16_t>(before.begin(), before.end()).size(), 8u) << "every member carries flows";
  const int on_dead = static_cast<int>(std::count(before.begin(), before.end(), kDead));
  ASSERT_GT(on_dead, 50);
  EXPECT_EQ(path.steered(), 0u);

  path.w.load.set_link(kDead, false);  // as Switch::poll_links publishes it
  const uint64_t member_down0 = path.route.counter("member_down"), steered0 = path.steered();
  const auto after = path.send(specs);
  int moved = 0, kept = 0;
  std::set<uint16_t> moved_to;
  for (int f = 0; f < kFlows; ++f) {
    ASSERT_NE(after[f], kInvalidPort) << "flow " << f << " dropped";
    ASSERT_NE(after[f], kDead) << "flow " << f << " sent to the dead member";
    if (before[f] == kDead) ++moved, moved_to.insert(after[f]);
    else kept += after[f] == before[f];
  }
  EXPECT_EQ(moved, on_dead);
  EXPECT_EQ(kept, kFlows - on_dead) << "a flow of a live member moved";
  EXPECT_GE(moved_to.size(), 3u) << "the dead member's flows spread over the live ones";
  EXPECT_EQ(path.steered() - steered0, static_cast<uint64_t>(on_dead)) << "ecmp steered_away";
  const bool inline_form = R::kName == Ipv4Route::kName;
  EXPECT_EQ(path.route.counter("member_down") - member_down0, inline_form ? static_cast<uint64_t>(on_dead) : 0u);
  if (inline_form) {
    EXPECT_EQ(path.select.counter("selected"), static_cast<uint64_t>(on_dead)) << "only those went to the policy";
  }

  path.w.load.set_link(kDead, true);
  const uint64_t steered1 = path.steered();
  EXPECT_EQ(path.send(specs), before) << "every flow back on its own member";
  EXPECT_EQ(path.steered(), steered1);
  EXPECT_TRUE(path.reasons.empty());
}

TEST(FastFailover, EcmpMovesOnlyTheDeadMembersFlowsAndBringsThemBack) { ecmp_moves_only_the_dead_members_flows<Ipv4Route>(); }
TEST(FastFailover, EcmpMovesOnlyTheDeadMembersFlowsGeneralForm) { ecmp_moves_only_the_dead_members_flows<Ipv4RouteGeneral>(); }

template <typename R>
void no_packet_to_a_dead_member(const std::string& policy) {
  SCOPED_TRACE(fmt::format("{} through {}", policy, R::kName));
  Path<R> path(policy);
  const auto specs = flows(kFlows);
  path.send(specs);  // flow state (flowlets, last choices) now points at every member
  path.w.load.set_link(kDead, false);
  for (uint16_t p : path.send(flows(kFlows, kFlows))) ASSERT_TRUE(p != kDead && p != kInvalidPort) << "port " << p;
  path.w.load.set_link(7, false);  // two down
  for (uint16_t p : path.send(flows(kFlows, 2 * kFlows))) ASSERT_TRUE(p != kDead && p != 7 && p != kInvalidPort) << "port " << p;
  path.w.load.set_link(kDead, true);
  path.w.load.set_link(7, true);
  const auto back = path.send(flows(kFlows, 3 * kFlows));
  EXPECT_EQ(std::count(back.begin(), back.end(), kInvalidPort), 0);
  EXPECT_TRUE(path.reasons.empty()) << drop_reason_name(path.reasons.begin()->first);
}

TEST(FastFailover, NoRegisteredPolicySendsToADeadMember) {
  for (const auto& p : suite_policies()) {
    no_packet_to_a_dead_member<Ipv4Route>(p);
    no_packet_to_a_dead_member<Ipv4RouteGeneral>(p);
  }
}

template <typename R>
void all_down_drops_every_packet(const std::string& policy) {
  SCOPED_TRACE(fmt::format("{} through {}", policy, R::kName));
  Path<R> path(policy);
  for (uint16_t p = 1; p <= 8; ++p) path.w.load.set_link(p, false);
  const auto out = path.send(flows(200));
  EXPECT_EQ(std::count(out.begin(), out.end(), kInvalidPort), 200);
  EXPECT_EQ(path.reasons[DropReason::NoLiveMember], 200);
  EXPECT_EQ(path.reasons.size(), 1u);
  EXPECT_EQ(path.select.counter("no_live_member"), 200u);
  EXPECT_EQ(path.select.counter("selected"), 0u);
  EXPECT_EQ(path.select.counter("policy_calls"), 0u) << "a policy is never asked with no live member";
  if (path.w.fib->group(path.gid).inline_member && R::kName == Ipv4Route::kName) {
    EXPECT_EQ(path.route.counter("member_down"), 200u);
  }
}

TEST(FastFailover, NoLiveMemberDropsEveryPacket) {
  for (const auto& p : suite_policies()) {
    all_down_drops_every_packet<Ipv4Route>(p);
    all_down_drops_every_packet<Ipv4RouteGeneral>(p);
  }
}

// --- A whole switch, stepped in time ------------------------------------------------------------

EmulatedHost& host(Switch& sw, std::size_t p) { return dynamic_cast<EmulatedHost&>(sw.port(p)); }

// Steps every microsecond over [from, to); the books must balance after every poll.
void run(Switch& sw, uint64_t from, uint64_t to) {
  for (uint64_t t = from; t < to; t += kUs) {
    sw.poll_all(t);
    const SwitchTotals s = sw.totals();
    ASSERT_TRUE(s.balanced()) << "at t=" << (t - kT0) << " ns: received " << s.received << " sent " << s.sent << " queued "
                              << s.queued << " in flight " << s.in_flight << " dropped " << s.dropped;
  }
}

TEST(SwitchLinks, ScheduledLinkDownFlushesSendsNothingAndComesBack) {
  // h1 and h2 send 8 Gb/s each into h0's 10 Gb/s port, whose link is down over [2 ms, 4 ms);
  // h3 is admin down: what it sends is lost, nothing is sent to it.
  SwitchConfig cfg;
  cfg.seed = 3;
  add_host_port(cfg, 10, {.packets = 512, .bytes = 4u << 20});
  for (int i = 0; i < 3; ++i) add_host_port(cfg, 25, {.packets = 512, .bytes = 4u << 20});
  cfg.ports[3].admin_up = false;
  add_host_flow(cfg, 1, 0, 8, 0x101, kPayload);
  add_host_flow(cfg, 2, 0, 8, 0x102, kPayload);
  add_host_flow(cfg, 3, 1, 1, 0x301, kPayload);
  add_host_flow(cfg, 1, 3, 1, 0x103, kPayload);
  cfg.link_events = {{.port = 0, .at_ns = 2 * kMs, .up = false}, {.port = 0, .at_ns = 4 * kMs, .up = true}};
  Switch sw(cfg, kT0);

  run(sw, kT0, kT0 + 2 * kMs);
  ASSERT_FALSE(::testing::Test::HasFatalFailure());
  EXPECT_TRUE(sw.load().link_up(0));
  EXPECT_FALSE(sw.load().link_up(3));
  const uint64_t queued = sw.egress(0).queued_packets(), sent0 = sw.tx_packets(0);
  EXPECT_GT(queued, 100u) << "h0's queue built up";
  EXPECT_GT(sent0, 0u);
  EXPECT_GT(sw.drops(1, DropReason::NoLiveMember), 0u) << "h1 -> h3: its only member is down";
  EXPECT_EQ(sw.link_down_events(0), 0u);

  run(sw, kT0 + 2 * kMs, kT0 + 2 * kMs + kUs);  // the poll the event is due at
  EXPECT_FALSE(sw.load().link_up(0));
  EXPECT_EQ(sw.link_down_events(0), 1u);
  EXPECT_EQ(sw.egress(0).queued_packets(), 0u) << "a down port's queue is flushed";
  EXPECT_EQ(sw.drops(0, DropReason::LinkDown), queued);
  const uint64_t no_live = sw.drops(DropReason::NoLiveMember);
  run(sw, kT0 + 2 * kMs + kUs, kT0 + 4 * kMs);
  EXPECT_EQ(sw.tx_packets(0), sent0) << "a down port sends nothing";
  EXPECT_EQ(sw.egress(0).queued_packets(), 0u) << "nothing is queued for it";
  EXPECT_EQ(sw.drops(0, DropReason::LinkDown), queued);
  EXPECT_GT(sw.drops(DropReason::NoLiveMember), no_live + 1000) << "h1 and h2's packets to h0";

  run(sw, kT0 + 4 * kMs, kT0 + 5 * kMs);
  EXPECT_TRUE(sw.load().link_up(0));
  EXPECT_EQ(sw.link_down_events(0), 1u);
  EXPECT_GT(sw.tx_packets(0), sent0 + 500) << "back up, h0 receives again";
  EXPECT_EQ(host(sw, 0).received_packets() + host(sw, 0).on_wire_to_host(), sw.tx_packets(0));

  // The admin-down port, all along: everything h3 sent was received and lost as link_down.
  EXPECT_FALSE(sw.load().link_up(3));
  EXPECT_GT(sw.rx_packets(3), 0u);
  EXPECT_EQ(sw.drops(3, DropReason::LinkDown), sw.rx_packets(3));
  EXPECT_EQ(sw.tx_packets(3), 0u);
  EXPECT_EQ(host(sw, 3).received_packets(), 0u);
  EXPECT_EQ(host(sw, 1).received_packets(), sw.tx_packets(1));
  sw.shutdown(kT0 + 5 * kMs);
  EXPECT_TRUE(sw.totals().balanced());
}

TEST(SwitchLinks, AGroupMovesItsTrafficToTheLiveMemberAndBack) {
  // h0 sends 8 QPs to 10.9.0.0/24, an ecmp group over h1 and h2; h1's link is down over
  // [1 ms, 2 ms).
  SwitchConfig cfg;
  cfg.seed = 5;
  for (int i = 0; i < 3; ++i) add_host_port(cfg, 25, {.packets = 512, .bytes = 4u << 20});
  GroupSpec g;
  g.name = "pair";
  for (uint16_t p : {1, 2}) g.members.push_back({.port = p, .mac = mac_of(static_cast<uint8_t>(p), false)});
  cfg.groups.push_back(g);
  RouteSpec r;
  r.addr[0] = 10, r.addr[1] = 9, r.depth = 16, r.group = static_cast<uint32_t>(cfg.groups.size() - 1);
  cfg.routes.push_back(r);
  for (uint32_t qp = 0; qp < 8; ++qp) {
    add_host_flow(cfg, 0, 0, 1, 0x500 + qp, kPayload).dst_ip = rte_cpu_to_be_32(RTE_IPV4(10, 9, 0, 1 + qp));
  }
  cfg.link_events = {{.port = 1, .at_ns = 1 * kMs, .up = false}, {.port = 1, .at_ns = 2 * kMs, .up = true}};
  Switch sw(cfg, kT0);
  const uint32_t gid = r.group;
  const uint32_t nh1 = sw.fib().group(gid).members[0], nh2 = sw.fib().group(gid).members[1];

  run(sw, kT0, kT0 + 1 * kMs);
  const uint64_t a1 = sw.nexthop_packets(nh1), a2 = sw.nexthop_packets(nh2), tx1 = sw.tx_packets(1);
  ASSERT_GT(a1, 0u) << "both members carry QPs";
  ASSERT_GT(a2, 0u);
  EXPECT_EQ(sw.policy_counter(gid, 0, 0), 0u);

  run(sw, kT0 + 1 * kMs, kT0 + 2 * kMs);
  ASSERT_FALSE(::testing::Test::HasFatalFailure());
  EXPECT_EQ(sw.nexthop_packets(nh1), a1) << "nothing chosen for the dead member";
  EXPECT_EQ(sw.tx_packets(1), tx1) << "a down port sends nothing";
  const uint64_t moved = sw.policy_counter(gid, 0, 0);
  EXPECT_GT(moved, 100u) << "ecmp steered_away";
  EXPECT_GE(sw.nexthop_packets(nh2) - a2, moved) << "the moved packets went to the live member";
  EXPECT_EQ(sw.drops(DropReason::NoLiveMember), 0u);

  run(sw, kT0 + 2 * kMs, kT0 + 3 * kMs);
  EXPECT_GT(sw.nexthop_packets(nh1), a1 + 100) << "the member back in use";
  EXPECT_EQ(sw.policy_counter(gid, 0, 0), moved) << "nothing steered once every member is up";
  EXPECT_EQ(sw.link_down_events(1), 1u);
  sw.shutdown(kT0 + 3 * kMs);
  EXPECT_TRUE(sw.totals().balanced());
}

TEST(SwitchLinks, AnEthdevsOwnLinkStateReachesTheLoadView) {
  // A DPDK port's carrier: the ring PMD lets a test take its link down and up
  // (rte_eth_dev_set_link_down/up), as a cable pulled from a NIC would.
  RingPeer peer("failover_lsc");
  ASSERT_TRUE(peer.ok());
  SwitchConfig cfg;
  add_host_port(cfg, 25, {.packets = 64, .bytes = 1u << 20});
  PortSpec ring;
  ring.name = "ring";
  ring.kind = PortKind::Ethdev;
  ring.devargs = peer.devname();
  cfg.ports.push_back(ring);
  Switch sw(cfg, kT0);
  const auto id = static_cast<uint16_t>(peer.port_id());
  sw.poll_links(kT0);
  EXPECT_TRUE(sw.load().link_up(1));
  ASSERT_EQ(rte_eth_dev_set_link_down(id), 0);
  sw.poll_links(kT0 + kMs);
  EXPECT_FALSE(sw.load().link_up(1)) << "carrier lost: the port is out of every group";
  EXPECT_TRUE(sw.load().link_up(0));
  EXPECT_EQ(sw.link_down_events(1), 1u);
  ASSERT_EQ(rte_eth_dev_set_link_up(id), 0);
  sw.poll_links(kT0 + 2 * kMs);
  EXPECT_TRUE(sw.load().link_up(1));
  EXPECT_EQ(sw.link_down_events(1), 1u);
}

TEST(SwitchLinks, ALinkEventOnAPortTheSwitchDoesNotHaveIsRefused) {
  // A SwitchConfig is also built without the loader (which checks the port name), and
  // build_fib checks what it needs; poll_links indexes its per-port state (admin_up_[64]) with
  // the event's port, so a port the switch lacks must be refused when it is built.
  SwitchConfig cfg;
  add_host_port(cfg, 25, {.packets = 64, .bytes = 1u << 20});
  cfg.link_events = {{.port = 1, .at_ns = kMs, .up = false}};
  EXPECT_THROW({ Switch sw(cfg, kT0); }, std::runtime_error);
}

// --- The config: link_events and admin ----------------------------------------------------------

const std::string kPorts =
    "ports:\n  - {name: a, host: {ip: 10.0.0.2, mac: \"02:00:00:00:00:aa\"}}\n"
    "  - {name: b, host: {ip: 10.0.1.2, mac: \"02:00:00:00:00:bb\"}, admin: down}\n"
    "  - {name: c, devargs: x, admin: up}\n";

TEST(LinkConfig, LinkEventsAndAdminParseAndDriveTheSwitch) {
  const SwitchConfig cfg = load_config_text(kPorts +
                                                "link_events:\n  - {port: a, at_s: 0.002, state: down}\n"
                                                "  - {port: b, at_s: 0.001, state: up}\n  - {port: a, at_s: 0.003, state: up}\n",
                                            "links.yaml");
  EXPECT_TRUE(cfg.ports[0].admin_up);
  EXPECT_FALSE(cfg.ports[1].admin_up);
  EXPECT_TRUE(cfg.ports[2].admin_up);
  ASSERT_EQ(cfg.link_events.size(), 3u);  // in time order
  EXPECT_EQ(cfg.link_events[0].port, 1);
  EXPECT_EQ(cfg.link_events[0].at_ns, 1 * kMs);
  EXPECT_TRUE(cfg.link_events[0].up);
  EXPECT_EQ(cfg.link_events[1].port, 0);
  EXPECT_EQ(cfg.link_events[1].at_ns, 2 * kMs);
  EXPECT_FALSE(cfg.link_events[1].up);
  EXPECT_EQ(cfg.link_events[2].at_ns, 3 * kMs);

  SwitchConfig hosts = cfg;
  hosts.ports.pop_back();  // no ethdev in a unit test
  Switch sw(hosts, kT0);
  auto links = [&] { return std::pair{sw.load().link_up(0), sw.load().link_up(1)}; };
  sw.poll_all(kT0);
  EXPECT_EQ(links(), std::pair(true, false));
  sw.poll_all(kT0 + 1 * kMs);
  EXPECT_EQ(links(), std::pair(true, true));
  sw.poll_all(kT0 + 2 * kMs - 1);
  EXPECT_EQ(links(), std::pair(true, true));
  sw.poll_all(kT0 + 2 * kMs);
  EXPECT_EQ(links(), std::pair(false, true));
  EXPECT_EQ(sw.link_down_events(0), 1u);
  sw.poll_all(kT0 + 3 * kMs);
  EXPECT_EQ(links(), std::pair(true, true));
  EXPECT_EQ(sw.link_down_events(0), 1u);
}

TEST(LinkConfig, BadLinkEventsAndAdminAreRejectedWithTheirPath) {
  struct Bad {
    std::string yaml, path, reason;
  };
  const std::string ev = "link_events:\n  - {port: a, at_s: 1, state: down}\n";
  const std::vector<Bad> bad = {
      {kPorts + "link_events:\n  - {port: zz, at_s: 1, state: down}\n", "link_events[0].port", "referenced but not defined"},
      {kPorts + ev + "  - {port: a, at_s: 2, state: sideways}\n", "link_events[1].state", "expected 'up' or 'down'"},
      {kPorts + "link_events:\n  - {port: a, state: down}\n", "link_events[0].at_s", "missing"},
      {kPorts + "link_events:\n  - {at_s: 1, state: down}\n", "link_events[0].port", "missing"},
      {kPorts + "link_events:\n  - {port: a, at_s: 1}\n", "link_events[0].state", "missing"},
      {kPorts + "link_events:\n  - {port: a, at_s: -1, state: down}\n", "link_events[0].at_s", "out of range"},
      {kPorts + "link_events:\n  - {port: a, at_s: soon, state: down}\n", "link_events[0].at_s", "expected a number"},
      {kPorts + "link_events:\n  - {port: a, at_s: 1, state: down, why: cut}\n", "link_events[0].why", "unknown key"},
      {kPorts + "link_events: {port: a}\n", "link_events", ""},
      {"ports:\n  - {name: a, devargs: x, admin: sideways}\n", "ports[0].admin", "expected 'up' or 'down'"},
  };
  for (const Bad& b : bad) {
    try {
      load_config_text(b.yaml, "bad.yaml");
      ADD_FAILURE() << "accepted: " << b.yaml;
    } catch (const ConfigError& e) {
      EXPECT_EQ(e.path, b.path) << e.what();
      EXPECT_NE(std::string(e.what()).find(b.reason), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("bad.yaml"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace rs::test
