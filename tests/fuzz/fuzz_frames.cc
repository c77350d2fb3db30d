// libFuzzer target: frames from the wire through a whole switch. One input is a sequence of
// records [port][length: 2 bytes, big endian][frame], each frame received on port % 4 of a
// switch with four ethdev ports on DPDK rings (net_ring), lossless priorities 3 and 4 (PFC,
// headroom, WRED/ECN), two workers and an injected clock. RoCE frames the input holds get a
// valid ICRC first, so that the switch must keep it valid. After each input the switch is run
// until its queues are empty, and then:
//   - the books balance: received = sent + queued + in flight + every drop;
//   - no mbuf is leaked: both pools (the peers' and the switch's) are back to their start;
//   - every RoCE frame sent still has a valid ICRC;
//   - every IP frame left by the port its route names (10.0.P.0/24, 2001:db8:0:P::/64 -> P;
//     the rest of IPv4 -> port 3 by the default route; no route for the rest of IPv6);
//   - whatever else left is the switch's own PFC (EtherType 0x8808).
// A violation aborts with what broke.
#include <arpa/inet.h>
#include <fmt/core.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mempool.h>
#include <rte_udp.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "dataplane/proto/icrc.h"
#include "dataplane/switch/switch.h"
#include "tests/support/eal_env.h"
#include "tests/support/fake_port.h"
#include "tests/support/host_net.h"

namespace {

using namespace rs;

constexpr int kPorts = 4;
constexpr uint64_t kUs = 1000, kMs = 1000 * kUs;

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "fuzz_frames: %s\n", what.c_str());
  std::abort();
}

// Where a frame's IP header starts and which family, or 0 (not IP; VLAN tags skipped).
struct L3 {
  std::size_t off = 0;
  bool v6 = false;
};
L3 find_l3(const uint8_t* f, std::size_t len) {
  std::size_t off = 12;
  for (int tags = 0; tags < 2 && off + 2 <= len; ++tags) {
    const uint16_t et = static_cast<uint16_t>(f[off] << 8 | f[off + 1]);
    if (et == RTE_ETHER_TYPE_VLAN || et == RTE_ETHER_TYPE_QINQ) {
      off += 4;
      continue;
    }
    if (et == RTE_ETHER_TYPE_IPV4) return {off + 2, false};
    if (et == RTE_ETHER_TYPE_IPV6) return {off + 2, true};
    return {};
  }
  return {};
}

// The IP packet's length by its own header, when the header is whole and the packet fits the
// frame and carries UDP to 4791 with room for a BTH and an ICRC: a RoCEv2 packet. Else 0.
std::size_t roce_len(const uint8_t* f, std::size_t len, const L3& l3) {
  if (!l3.off) return 0;
  const uint8_t* ip = f + l3.off;
  const std::size_t room = len - l3.off;
  std::size_t iplen, udp;
  if (!l3.v6) {
    if (room < 20 || (ip[0] >> 4) != 4) return 0;
    const std::size_t ihl = (ip[0] & 15u) * 4u;
    iplen = static_cast<std::size_t>(ip[2] << 8 | ip[3]);
    if (ihl < 20 || ip[9] != IPPROTO_UDP || iplen > room || iplen < ihl) return 0;
    udp = ihl;
  } else {
    if (room < 40 || (ip[0] >> 4) != 6 || ip[6] != IPPROTO_UDP) return 0;
    iplen = 40u + static_cast<std::size_t>(ip[4] << 8 | ip[5]);
    if (iplen > room) return 0;
    udp = 40;
  }
  if (iplen < udp + 8 + 12 + 4) return 0;
  if ((ip[udp + 2] << 8 | ip[udp + 3]) != 4791) return 0;
  return iplen;
}

void set_icrc(uint8_t* f, std::size_t len) {
  const L3 l3 = find_l3(f, len);
  if (const std::size_t n = roce_len(f, len, l3)) {
    const uint32_t c = roce_icrc(f + l3.off, n, l3.v6);
    std::memcpy(f + l3.off + n - 4, &c, 4);  // as roce_icrc_ok reads it
    if (!roce_icrc_ok(f + l3.off, n, l3.v6)) fail("the harness cannot write an ICRC the checker accepts");
  }
}

// The port an IP frame must leave by, or -1 when it has no route.
int routed_port(const uint8_t* f, const L3& l3) {
  const uint8_t* ip = f + l3.off;
  if (!l3.v6) {
    const uint8_t* dst = ip + 16;
    return dst[0] == 10 && dst[1] == 0 && dst[2] < kPorts ? dst[2] : 3;
  }
  static const uint8_t kNet[6] = {0x20, 0x01, 0x0d, 0xb8, 0, 0};
  const uint8_t* dst = ip + 24;
  return std::memcmp(dst, kNet, 6) == 0 && dst[6] == 0 && dst[7] < kPorts ? dst[7] : -1;
}

SwitchConfig config(const std::vector<std::unique_ptr<test::RingPeer>>& peers) {
  SwitchConfig cfg;
  cfg.workers = 2;
  cfg.seed = 1;
  cfg.mbufs = 8192;
  cfg.qos.dscp_to_tc[26] = 3;
  cfg.qos.cnp_queue = 6;
  cfg.mmu.pfc_enable = (1u << 3) | (1u << 4);
  cfg.mmu.pfcwd.enabled = true;
  for (int p = 0; p < kPorts; ++p) {
    PortSpec ps;
    ps.name = fmt::format("p{}", p);
    ps.kind = PortKind::Ethdev;
    ps.devargs = peers[p]->devname();
    ps.mac = rte_ether_addr{{0x02, 0, 0, 0, 0, static_cast<uint8_t>(0x10 + p)}};
    ps.egress.speed_gbps = p == 0 ? 100 : 10;
    for (auto& l : ps.egress.limits) l = {.packets = 64, .bytes = 64u << 10};
    ps.lossless.pg[3] = ps.lossless.pg[4] = PgSettings{.lossless = true, .xoff = 8 * 1280, .xon = 4 * 1280, .headroom = 8 * 1280};
    ps.lossless.wred[3] = {.enabled = true, .wred_drop = false, .ecn_mark = true, .kmin = 2048, .kmax = 8192, .pmax_percent = 100};
    ps.lossless.wred[1] = {.enabled = true, .wred_drop = true, .ecn_mark = true, .kmin = 2048, .kmax = 8192, .pmax_percent = 50};
    ps.lossless.pfc_quanta = 1000;
    cfg.ports.push_back(ps);
    GroupSpec g;
    g.name = ps.name;
    g.members.push_back({.port = static_cast<uint16_t>(p), .mac = rte_ether_addr{{0x02, 0xaa, 0, 0, 0, static_cast<uint8_t>(p)}}});
    const uint32_t id = test::add_group_route(cfg, g, fmt::format("10.0.{}.0/24", p));
    test::add_route(cfg, fmt::format("2001:db8:0:{}::/64", p), id);
  }
  test::add_route(cfg, "0.0.0.0/0", 3);
  // A group that spreads 10.9.0.0/16 over p1 and p2 (a policy at work).
  GroupSpec spread;
  spread.name = "spread";
  spread.policy.name = "flowlet_quality";
  for (uint16_t p = 1; p <= 2; ++p) spread.members.push_back({.port = p, .mac = rte_ether_addr{{0x02, 0xbb, 0, 0, 0, static_cast<uint8_t>(p)}}});
  test::add_group_route(cfg, spread, "10.9.0.0/16");
  return cfg;
}

struct World {
  std::vector<std::unique_ptr<test::RingPeer>> peers;
  std::unique_ptr<Switch> sw;
  uint64_t now = 1000 * kMs;
  unsigned base_test = 0, base_switch = 0;
};
World* g_world = nullptr;

bool spread_port(const uint8_t* f, const L3& l3, int port) {  // 10.9.0.0/16 goes to p1 or p2
  const uint8_t* dst = f + l3.off + 16;
  return !l3.v6 && dst[0] == 10 && dst[1] == 9 && (port == 1 || port == 2);
}

// Checks and frees what each port sent.
void check_tx(World& w) {
  for (int p = 0; p < kPorts; ++p)
    for (const std::vector<uint8_t>& f : w.peers[p]->take_tx_frames()) {
      if (f.size() >= 14 && (f[12] << 8 | f[13]) == 0x8808) continue;  // the switch's PFC
      const L3 l3 = find_l3(f.data(), f.size());
      if (!l3.off) fail(fmt::format("a frame that is neither IP nor PFC left port {}", p));
      const int want = routed_port(f.data(), l3);
      if (want != p && !spread_port(f.data(), l3, p)) fail(fmt::format("an IP frame routed to port {} left port {}", want, p));
      if (const std::size_t n = roce_len(f.data(), f.size(), l3); n && !roce_icrc_ok(f.data() + l3.off, n, l3.v6))
        fail(fmt::format("a RoCE frame left port {} with a bad ICRC", p));
    }
}

unsigned in_use(rte_mempool* mp) { return rte_mempool_in_use_count(mp); }

// Runs the switch until nothing is queued or in flight, then checks the books and the pools.
void settle(World& w) {
  for (int i = 0; i < 4; ++i) {
    w.sw->poll_links(w.now);
    w.sw->poll_all(w.now);
    check_tx(w);
    w.now += kUs;
  }
  // Pauses last at most 65535 quanta (3.4 ms at 10 Gb/s); the watchdog ends storms.
  for (int i = 0; i < 64; ++i) {
    const SwitchTotals t = w.sw->totals();
    if (t.queued == 0 && t.in_flight == 0) break;
    w.now += 5 * kMs;
    w.sw->poll_all(w.now);
    check_tx(w);
  }
  const SwitchTotals t = w.sw->totals();
  if (t.queued || t.in_flight) fail(fmt::format("queues never drained: {} queued, {} in flight", t.queued, t.in_flight));
  if (!t.balanced())
    fail(fmt::format("books: received {} + mirrored {} != sent {} + queued {} + in flight {} + dropped {}", t.received, t.mirrored, t.sent,
                     t.queued, t.in_flight, t.dropped));
  if (in_use(test::test_pool()) != w.base_test || in_use(w.sw->pool()) != w.base_switch)
    fail(fmt::format("mbufs leaked: peers' pool {} in use (start {}), switch's {} (start {})", in_use(test::test_pool()), w.base_test,
                     in_use(w.sw->pool()), w.base_switch));
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  test::init_test_eal();
  g_world = new World;
  for (int p = 0; p < kPorts; ++p) g_world->peers.push_back(std::make_unique<test::RingPeer>(fmt::format("fz{}", p), 4096));
  g_world->sw = std::make_unique<Switch>(config(g_world->peers), g_world->now);
  settle(*g_world);
  g_world->base_test = in_use(test::test_pool());
  g_world->base_switch = in_use(g_world->sw->pool());
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  World& w = *g_world;
  std::size_t at = 0;
  int frames = 0;
  while (at + 3 <= size && frames < 256) {
    const int port = data[at] % kPorts;
    std::size_t len = static_cast<std::size_t>(data[at + 1] << 8 | data[at + 2]);
    at += 3;
    len = std::min(len, size - at);
    std::vector<uint8_t> f(data + at, data + at + len);
    at += len;
    if (f.size() > 9000) f.resize(9000);  // a jumbo frame, at most
    set_icrc(f.data(), f.size());
    w.peers[port]->inject(f);
    // A poll now and then, as frames arrive on a wire: queues build, PFC and ECN act.
    if (++frames % 16 == 0) {
      w.sw->poll_all(w.now);
      check_tx(w);
      w.now += kUs;
    }
  }
  settle(w);
  return 0;
}
