// libFuzzer target: frames through a switch that bridges 802.1Q VLANs and routes between them
// and a plain port, with its control plane (LocalAgent) answering ARP / ND / ping, resolving
// neighbours and holding the packets that wait for them. Four ethdev ports on DPDK rings:
//   p0 routed  02:00:00:00:00:10  10.0.1.1/24  2001:db8:1::1/64  (icmp_unreachable)
//   p1 access VLAN 10, p2 tagged [10, 20], p3 access VLAN 20
//   VLAN 10's interface (SVI) 02:00:00:00:01:0a  10.0.10.1/24  2001:db8:10::1/64; VLAN 20 plain
//   routes 10.7.0.0/16 and 2001:db8:7::/48 via 10.0.10.9 / 2001:db8:10::9 (on the SVI),
//   10.8.0.0/16 via 10.0.1.9 (on p0); neighbour timers of milliseconds, two held packets each;
//   FDB ageing 1 s, floods limited to 20000/s a port (burst 32); two workers
// One input is a sequence of records [port byte][length: 2 bytes, big endian][frame]: the frame
// is received on port (byte & 3), after (byte >> 2) steps of 250 us of the injected clock (so
// the fuzzer places answers before, between or after the switch's probes). Every step polls
// the two workers, the agent, the workers again. After the records the switch runs until every
// frame was received and nothing is queued or in flight (packets may still be held then: the
// pools are checked with them), then 8 ms more (probes retransmit and fail, held packets go)
// and until drained again.
// The switch, its running state and agent are built once (a switch's build and teardown cost
// some 18 ms, mostly its LPM tables, far more than an input's run): after each input the
// clock runs 3.2 s with no frame, in which every neighbour fails or goes stale and is removed
// and every FDB entry ages out (both checked), so each input starts from (nearly) the same
// state, the one the next hops by IP leave after their first probes fail.
// Checked, with an abort naming what broke:
//   - the books balance (received + mirrored + originated + replicated = sent + queued +
//     in flight + dropped + held) each time it is drained;
//   - no mbuf is leaked: after the input the switch's pool is back to its start and the
//     peers' holds its start plus what the agent holds (packets waiting for a neighbour,
//     `held`; they are received mbufs); after the quiet time nothing is held (an unresolved
//     neighbour fails within 3 ms and drops what it held) and both pools are back to their start;
//   - every frame sent is, but for the switch's own PFC (0x8808), one of:
//       p1, p3 (access): untagged (no 0x8100 / 0x88a8 at offset 12);
//       p2 (trunk): tagged 0x8100 with VID 10 or 20, and no second tag under it;
//       p0 (routed): from p0's MAC; tagged only with a VID that a frame received tagged on p0
//         in this input had (the parser takes one tag on a routed port and nothing pops it: a
//         packet routed or held and released out of p0 keeps it, while one routed from a VLAN
//         lost its tag at the bridge, and what the agent makes on p0 is untagged);
//   - VLAN isolation: a frame leaving a bridged port in VLAN v (its access VLAN, or the tag's
//     VID on p2) comes from VLAN 10's interface (its MAC as the source, VLAN 10 only), or it
//     was bridged: a frame with the same MAC addresses was received in VLAN v on the VLAN's
//     other member port (VLAN 10: p1 <-> p2, VLAN 20: p2 <-> p3; the bridge never rewrites
//     MACs); and a bridged frame in VLAN 10 is never to the interface's MAC (that is routed).
#include <fmt/core.h>
#include <rte_ether.h>
#include <rte_mempool.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "control/config/config_loader.h"
#include "control/local/local_agent.h"
#include "control/runtime/running_state.h"
#include "dataplane/switch/switch.h"
#include "tests/support/eal_env.h"
#include "tests/support/fake_port.h"

namespace {

using namespace rs;

constexpr int kPorts = 4;
constexpr uint64_t kUs = 1000, kMs = 1000 * kUs;
constexpr uint64_t kStep = 250 * kUs;
constexpr uint8_t kP0Mac[6] = {0x02, 0, 0, 0, 0, 0x10};
constexpr uint8_t kSviMac[6] = {0x02, 0, 0, 0, 0x01, 0x0a};

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "fuzz_bridge_frames: %s\n", what.c_str());
  std::abort();
}

uint16_t be16(const uint8_t* p) { return static_cast<uint16_t>(p[0] << 8 | p[1]); }
bool is_tag(uint16_t et) { return et == RTE_ETHER_TYPE_VLAN || et == RTE_ETHER_TYPE_QINQ; }

std::string yaml(const std::vector<std::unique_ptr<test::RingPeer>>& peers) {
  const char* const keys[kPorts] = {R"(, ipv4: 10.0.1.1/24, ipv6: "2001:db8:1::1/64", icmp_unreachable: true)",
                                    ", vlan: {access: 10}", ", vlan: {tagged: [10, 20]}", ", vlan: {access: 20}"};
  std::string y = "switch: {workers: 2, seed: 7, mbufs: 1024}\nports:\n";
  for (int p = 0; p < kPorts; ++p)
    y += fmt::format("  - {{name: p{}, kind: ethdev, devargs: \"{}\", mac: \"02:00:00:00:00:{:02x}\"{}}}\n", p, peers[p]->devname(),
                     0x10 + p, keys[p]);
  y += "vlans: [{id: 10, ipv4: 10.0.10.1/24, ipv6: \"2001:db8:10::1/64\", mac: \"02:00:00:00:01:0a\"}, 20]\n"
       "routes:\n"
       "  - {prefix: 10.7.0.0/16, via: 10.0.10.9}\n"
       "  - {prefix: \"2001:db8:7::/48\", via: \"2001:db8:10::9\"}\n"
       "  - {prefix: 10.8.0.0/16, via: 10.0.1.9}\n"
       "neighbours: {base_reachable_s: 0.01, delay_first_probe_s: 0.002, retrans_s: 0.001, ucast_probes: 2,\n"
       "             mcast_probes: 2, hold_packets: 2, gc_stale_s: 0.01, max_entries: 16}\n"
       "bridge: {ageing_s: 1, flood_pps: 20000, flood_burst: 32, fdb_size: 256}\n";
  return y;
}

// What the input sent in each VLAN: (VLAN, port it came in on, its MAC addresses).
using Macs = std::array<uint8_t, 12>;
using Seen = std::set<std::tuple<uint16_t, int, Macs>>;

Macs macs_of(const uint8_t* f) {
  Macs m;
  std::memcpy(m.data(), f, 12);
  return m;
}

// The VLAN a frame received on `port` is bridged in (as VlanTable::ingress_vlan), 0 for none.
uint16_t ingress_vlan(int port, const uint8_t* f, std::size_t len) {
  if (len < 14) return 0;
  const bool tagged = be16(f + 12) == RTE_ETHER_TYPE_VLAN;
  const uint16_t vid = tagged && len >= 18 ? be16(f + 14) & 0x0FFF : 0;
  switch (port) {
    case 1:
      return vid == 0 || vid == 10 ? 10 : 0;
    case 2:
      return vid == 10 || vid == 20 ? vid : 0;
    case 3:
      return vid == 0 || vid == 20 ? 20 : 0;
    default:
      return 0;
  }
}

struct World {
  std::vector<std::unique_ptr<test::RingPeer>> peers;
  SwitchConfig cfg;
  std::unique_ptr<Switch> sw;
  std::unique_ptr<RunningState> state;
  std::unique_ptr<LocalAgent> agent;
  uint64_t now = 1000 * kMs;
  unsigned base_test = 0, base_switch = 0;
  uint64_t injected = 0;  // frames written into the ports' rx rings, ever
  // This input's frames, for the checks of what leaves.
  Seen seen;
  std::set<uint16_t> p0_vids;
};
World* g_world = nullptr;

// The VLAN's other member port, for a frame leaving `port` in `vlan`.
int other_member(uint16_t vlan, int port) {
  if (vlan == 10) return port == 1 ? 2 : 1;
  return port == 2 ? 3 : 2;
}

void check_frame(const World& w, int p, const std::vector<uint8_t>& f) {
  if (f.size() < 14) fail(fmt::format("a {}-byte frame left port {}", f.size(), p));
  const uint16_t et = be16(f.data() + 12);
  if (et == 0x8808) return;  // the switch's PFC
  const bool tagged = is_tag(et);
  if (p == 0) {
    if (std::memcmp(f.data() + 6, kP0Mac, 6) != 0) fail("a frame left p0 from another MAC than p0's");
    if (tagged) {
      const uint16_t vid = f.size() >= 16 ? be16(f.data() + 14) & 0x0FFF : 0xFFFF;
      if (et != RTE_ETHER_TYPE_VLAN || !w.p0_vids.count(vid))
        fail(fmt::format("a frame left p0 tagged {:#06x} VID {}, a tag no frame received on p0 had", et, vid));
    }
    return;
  }
  uint16_t vlan;
  if (p == 2) {
    if (et != RTE_ETHER_TYPE_VLAN || f.size() < 18) fail(fmt::format("a frame left trunk p2 untagged (EtherType {:#06x})", et));
    vlan = be16(f.data() + 14) & 0x0FFF;
    if (vlan != 10 && vlan != 20) fail(fmt::format("a frame left trunk p2 tagged VID {}", vlan));
    if (is_tag(be16(f.data() + 16))) fail("a frame left trunk p2 with two tags");
  } else {
    if (tagged)
      fail(fmt::format("a frame left access port p{} tagged ({:#06x}, TCI {:#06x})", p, et, f.size() >= 16 ? be16(f.data() + 14) : 0));
    vlan = p == 1 ? 10 : 20;
  }
  const bool from_svi = std::memcmp(f.data() + 6, kSviMac, 6) == 0;
  if (from_svi && vlan == 10) return;
  if (!w.seen.count({vlan, other_member(vlan, p), macs_of(f.data())}))
    fail(fmt::format("a frame left p{} in VLAN {} that no member of the VLAN sent (src {:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x})", p, vlan,
                     f[6], f[7], f[8], f[9], f[10], f[11]));
  if (vlan == 10 && std::memcmp(f.data(), kSviMac, 6) == 0) fail(fmt::format("a frame to VLAN 10's interface was bridged out of p{}", p));
}

// Checks and frees what each port sent.
void check_tx(World& w) {
  for (int p = 0; p < kPorts; ++p)
    for (const std::vector<uint8_t>& f : w.peers[p]->take_tx_frames()) {
      check_frame(w, p, f);
    }
}

// One step of the clock: workers, agent, workers (what the agent sent leaves), reclaim.
void step(World& w, uint64_t dt = kStep) {
  w.sw->poll_all(w.now);
  if (w.agent) w.agent->poll(w.now);
  w.sw->poll_all(w.now);
  w.sw->reclaim();
  check_tx(w);
  w.now += dt;
}

void books(const World& w, const char* when) {
  const SwitchTotals t = w.sw->totals();
  if (!t.balanced())
    fail(fmt::format("books {}: received {} + mirrored {} + originated {} + replicated {} != sent {} + queued {} + in flight {} + "
                     "dropped {} + held {}",
                     when, t.received, t.mirrored, t.originated, t.replicated, t.sent, t.queued, t.in_flight, t.dropped, t.held));
}

// Steps until every frame injected was received and nothing is queued or in flight (pauses
// last at most 3.4 ms; the watchdog ends storms).
void drain(World& w, const char* when) {
  for (int i = 0; i < 4; ++i) step(w, 10 * kUs);
  for (int i = 0; i < 64; ++i) {
    const SwitchTotals t = w.sw->totals();
    if (t.received == w.injected && t.queued == 0 && t.in_flight == 0) break;
    step(w, kMs);
  }
  const SwitchTotals t = w.sw->totals();
  if (t.received != w.injected) fail(fmt::format("{}: {} frames injected, {} received", when, w.injected, t.received));
  if (t.queued || t.in_flight) fail(fmt::format("{}: queues never drained: {} queued, {} in flight", when, t.queued, t.in_flight));
  books(w, when);
}

// The pools as they should be: the switch's back to its start, the peers' holding what the
// agent holds (received packets waiting for a neighbour) and no more.
void pools(const World& w, const char* when) {
  const uint64_t held = w.sw->totals().held;
  const unsigned t = rte_mempool_in_use_count(test::test_pool()), s = rte_mempool_in_use_count(w.sw->pool());
  if (t != w.base_test + held || s != w.base_switch)
    fail(fmt::format("mbufs leaked {}: the peers' pool has {} in use ({} at the start, {} held), the switch's {} ({} at the start)", when, t,
                     w.base_test, held, s, w.base_switch));
}

// Quiet: with nothing received for seconds every neighbour fails or goes stale and is removed,
// and every FDB entry ages out (checked); what was held has been sent or dropped long before.
void quiet(World& w) {
  for (int i = 0; i < 40; ++i) step(w, 5 * kMs);
  for (int i = 0; i < 6; ++i) step(w, 500 * kMs);
  drain(w, "after a quiet time");
  if (const uint64_t held = w.sw->totals().held) fail(fmt::format("{} packets held after seconds without a frame", held));
  pools(w, "after a quiet time");
  if (const uint32_t n = w.sw->fdb()->size()) fail(fmt::format("{} FDB entries left after seconds without a frame (ageing 1 s)", n));
  if (const std::size_t n = w.agent->neighbours().size()) fail(fmt::format("{} neighbours left after seconds without a frame", n));
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  test::init_test_eal();
  World& w = *(g_world = new World);
  for (int p = 0; p < kPorts; ++p) w.peers.push_back(std::make_unique<test::RingPeer>(fmt::format("fb{}", p), 4096));
  w.cfg = load_config_text(yaml(w.peers), "fuzz_bridge_frames.yaml");
  w.base_test = rte_mempool_in_use_count(test::test_pool());
  w.sw = std::make_unique<Switch>(w.cfg, w.now);
  w.base_switch = rte_mempool_in_use_count(w.sw->pool());
  w.state = std::make_unique<RunningState>(*w.sw);
  if (!w.sw->local()) fail("the switch has no local path: no agent");
  w.agent = std::make_unique<LocalAgent>(*w.sw, *w.state, [&w] {  // a commit waits for the workers' polls
    w.sw->poll_all(w.now);
    w.now += kUs;
  });
  quiet(w);  // the next hops by IP are probed at the start, and fail
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  World& w = *g_world;
  w.seen.clear();
  w.p0_vids.clear();
  std::size_t at = 0;
  int frames = 0;
  while (at + 3 <= size && frames < 256) {
    const int port = data[at] & 3;
    const int delay = data[at] >> 2;
    std::size_t len = static_cast<std::size_t>(data[at + 1] << 8 | data[at + 2]);
    at += 3;
    len = std::min(len, size - at);
    std::vector<uint8_t> f(data + at, data + at + len);
    at += len;
    if (f.size() > 9000) f.resize(9000);  // a jumbo frame, at most
    for (int i = 0; i < delay; ++i) step(w);
    if (const uint16_t v = ingress_vlan(port, f.data(), f.size())) w.seen.insert({v, port, macs_of(f.data())});
    if (port == 0 && f.size() >= 18 && be16(f.data() + 12) == RTE_ETHER_TYPE_VLAN) w.p0_vids.insert(be16(f.data() + 14) & 0x0FFF);
    w.peers[port]->inject(f);
    ++w.injected;
    // A poll now and then, as frames arrive on a wire: queues build, floods hit the storm limit.
    if (++frames % 16 == 0) step(w, 10 * kUs);
  }
  drain(w, "after the input");  // some packets still held, most likely
  pools(w, "after the input");
  for (uint64_t t = 0; t < 8 * kMs; t += kStep) step(w);
  drain(w, "8 ms after the input");
  pools(w, "8 ms after the input");
  quiet(w);
  return 0;
}
