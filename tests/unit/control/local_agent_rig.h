// The rig of the LocalAgent tests (local_agent_test.cc, local_agent_glean_test.cc): a switch whose
// three ports are ring ethdevs (the test plays the hosts behind them), its running state and its
// LocalAgent, stepped by hand, with frame builders and a scapy decoder.
//
//   p0 02:00:00:00:00:10  10.0.1.1/24  2001:db8:1::1/64  icmp_unreachable   host h0 10.0.1.2 / 2001:db8:1::2
//   p1 02:00:00:00:00:11  10.0.2.1/24  2001:db8:2::1/64                     next hop 10.0.2.2
//   p2 02:00:00:00:00:12  10.0.3.1/24                                        host 10.0.3.7 (resolved on demand)
//   routes: 10.8.0.0/16 and 2001:db8:8::/48 out of p2 to a fixed MAC; some tests add 10.9.0.0/16 via 10.0.2.2.
#pragma once
#include "control/local/local_agent.h"

#include <arpa/inet.h>
#include <fmt/core.h>
#include <gtest/gtest.h>
#include <rte_mempool.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "control/config/config_loader.h"
#include "control/runtime/control_api.h"
#include "control/runtime/running_state.h"
#include "dataplane/switch/switch.h"
#include "tests/support/constants.h"
#include "tests/support/eal_env.h"
#include "tests/support/fake_port.h"
#include "tests/support/inet_sum.h"
#include "tests/support/packet_builder.h"

namespace rs::test {

using Frame = std::vector<uint8_t>;
using nlohmann::json;

constexpr int kPorts = 3;
const char* const kPortMac[kPorts] = {"02:00:00:00:00:10", "02:00:00:00:00:11", "02:00:00:00:00:12"};
const char* const kH0Mac = "02:aa:00:00:01:02";   // 10.0.1.2, 2001:db8:1::2 behind p0
const char* const kH0New = "02:aa:00:00:01:99";   // the same host after a NIC swap
const char* const kNhMac = "02:aa:00:00:02:02";   // 10.0.2.2 behind p1
const char* const kH2Mac = "02:aa:00:00:03:07";   // 10.0.3.7 behind p2
const char* const kFarMac = "02:aa:00:00:03:09";  // the static routes' next hop behind p2
const char* const kBcast = "ff:ff:ff:ff:ff:ff";
constexpr uint64_t kS = 1'000'000'000;

// --- Bytes ------------------------------------------------------------------------------------

std::array<uint8_t, 6> mac_bytes(const std::string& s) {
  rte_ether_addr a{};
  EXPECT_EQ(rte_ether_unformat_addr(s.c_str(), &a), 0) << s;
  std::array<uint8_t, 6> r;
  std::memcpy(r.data(), a.addr_bytes, 6);
  return r;
}
std::array<uint8_t, 4> ip4_bytes(const std::string& s) {
  std::array<uint8_t, 4> r{};
  EXPECT_EQ(inet_pton(AF_INET, s.c_str(), r.data()), 1) << s;
  return r;
}
std::array<uint8_t, 16> ip6_bytes(const std::string& s) {
  std::array<uint8_t, 16> r{};
  EXPECT_EQ(inet_pton(AF_INET6, s.c_str(), r.data()), 1) << s;
  return r;
}
std::string mac_at(const Frame& f, std::size_t off) {
  if (f.size() < off + 6) return "short";
  return fmt::format("{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}", f[off], f[off + 1], f[off + 2], f[off + 3], f[off + 4], f[off + 5]);
}
std::string ip4_at(const Frame& f, std::size_t off) {
  if (f.size() < off + 4) return "short";
  char s[INET_ADDRSTRLEN];
  inet_ntop(AF_INET, f.data() + off, s, sizeof s);
  return s;
}
std::string ip6_at(const Frame& f, std::size_t off) {
  if (f.size() < off + 16) return "short";
  char s[INET6_ADDRSTRLEN];
  inet_ntop(AF_INET6, f.data() + off, s, sizeof s);
  return s;
}
uint16_t be16(const Frame& f, std::size_t off) { return f.size() < off + 2 ? 0 : static_cast<uint16_t>(f[off] << 8 | f[off + 1]); }

uint16_t icmp6_sum(const uint8_t* src, const uint8_t* dst, const uint8_t* icmp, std::size_t len) {
  uint32_t s = sum16(src, 16) + sum16(dst, 16);
  s += static_cast<uint32_t>(len >> 16) + static_cast<uint32_t>(len & 0xFFFF) + 58;
  return fold(sum16(icmp, len, s));
}
void put16(std::vector<uint8_t>& v, std::size_t at, uint16_t x) {
  v[at] = static_cast<uint8_t>(x >> 8);
  v[at + 1] = static_cast<uint8_t>(x);
}

// --- Frames the hosts send --------------------------------------------------------------------

Frame arp(uint16_t op, const std::string& eth_dst, const std::string& sha, const std::string& spa, const std::string& tha,
          const std::string& tpa, uint8_t hlen = 6) {
  std::vector<uint8_t> a(28, 0);
  put16(a, 0, 1);
  put16(a, 2, 0x0800);
  a[4] = hlen;
  a[5] = 4;
  put16(a, 6, op);
  auto m1 = mac_bytes(sha), m2 = mac_bytes(tha);
  auto i1 = ip4_bytes(spa), i2 = ip4_bytes(tpa);
  std::memcpy(&a[8], m1.data(), 6);
  std::memcpy(&a[14], i1.data(), 4);
  std::memcpy(&a[18], m2.data(), 6);
  std::memcpy(&a[24], i2.data(), 4);
  return (Eth{.dst = eth_dst, .src = sha, .type = 0x0806} / Payload{a}).bytes();
}
Frame arp_request(const std::string& sha, const std::string& spa, const std::string& tpa) {
  return arp(1, kBcast, sha, spa, "00:00:00:00:00:00", tpa);
}

std::vector<uint8_t> echo_body(uint8_t type, uint16_t id, uint16_t seq, std::size_t data) {
  std::vector<uint8_t> b(8 + data, 0);
  b[0] = type;
  put16(b, 4, id);
  put16(b, 6, seq);
  for (std::size_t i = 0; i < data; ++i) b[8 + i] = static_cast<uint8_t>(0x30 + i);
  return b;
}
Frame ping4(const std::string& src, const std::string& dst, const std::string& eth_src, const std::string& eth_dst, uint16_t seq) {
  auto icmp = echo_body(8, 0x1234, seq, 24);
  put16(icmp, 2, fold(sum16(icmp.data(), icmp.size())));
  return (Eth{.dst = eth_dst, .src = eth_src} / Ipv4{.src = src, .dst = dst, .ttl = 64, .proto = 1} / Payload{icmp}).bytes();
}
Frame icmp6(const std::string& src, const std::string& dst, const std::string& eth_src, const std::string& eth_dst,
            std::vector<uint8_t> icmp, uint8_t hop_limit, bool good_sum = true) {
  const auto s = ip6_bytes(src), d = ip6_bytes(dst);
  put16(icmp, 2, 0);
  const uint16_t ck = icmp6_sum(s.data(), d.data(), icmp.data(), icmp.size());
  put16(icmp, 2, good_sum ? ck : static_cast<uint16_t>(ck ^ 0x0101));
  return (Eth{.dst = eth_dst, .src = eth_src} / Ipv6{.src = src, .dst = dst, .hop_limit = hop_limit, .next = 58} / Payload{icmp}).bytes();
}
Frame ping6(const std::string& src, const std::string& dst, const std::string& eth_src, const std::string& eth_dst, uint16_t seq) {
  return icmp6(src, dst, eth_src, eth_dst, echo_body(128, 0x4321, seq, 24), 64);
}
// A neighbour solicitation for `target` with a source link-layer address option, to its
// solicited-node group.
Frame ns(const std::string& src, const std::string& target, const std::string& sll, bool good_sum = true, uint8_t hop_limit = 255) {
  std::vector<uint8_t> m(32, 0);
  m[0] = 135;
  const auto t = ip6_bytes(target);
  std::memcpy(&m[8], t.data(), 16);
  m[24] = 1;
  m[25] = 1;
  const auto l = mac_bytes(sll);
  std::memcpy(&m[26], l.data(), 6);
  const std::string group = fmt::format("ff02::1:ff{:02x}:{:02x}{:02x}", t[13], t[14], t[15]);
  const std::string gmac = fmt::format("33:33:ff:{:02x}:{:02x}:{:02x}", t[13], t[14], t[15]);
  return icmp6(src, group, sll, gmac, m, hop_limit, good_sum);
}
// UDP from h0 to `dst`; the first payload byte numbers the packet.
Frame udp4(const std::string& dst, uint8_t ttl, uint8_t seq, const std::string& src = "10.0.1.2", const std::string& eth_src = kH0Mac,
           const std::string& eth_dst = kPortMac[0]) {
  Payload p = Payload::of_size(32, seq);
  p.bytes[0] = seq;
  return (Eth{.dst = eth_dst, .src = eth_src} / Ipv4{.src = src, .dst = dst, .ttl = ttl} / Udp{.sport = 40000, .dport = 33434} / p)
      .bytes();
}
Frame udp6(const std::string& dst, uint8_t hop_limit) {
  return (Eth{.dst = kPortMac[0], .src = kH0Mac} / Ipv6{.src = "2001:db8:1::2", .dst = dst, .hop_limit = hop_limit} /
          Udp{.sport = 40000, .dport = 33434} / Payload::of_size(16))
      .bytes();
}

// The frame with an 802.1Q tag for `vid` after its MACs, and without it.
Frame tagged(Frame f, uint16_t vid) {
  const uint8_t t[4] = {0x81, 0x00, static_cast<uint8_t>(vid >> 8), static_cast<uint8_t>(vid)};
  f.insert(f.begin() + 12, t, t + 4);
  return f;
}
uint16_t vid_of(const Frame& f) { return be16(f, 12) == 0x8100 ? be16(f, 14) & 0x0FFF : 0; }
Frame untagged(Frame f) {
  if (vid_of(f) || be16(f, 12) == 0x8100) f.erase(f.begin() + 12, f.begin() + 16);
  return f;
}

// --- scapy ------------------------------------------------------------------------------------

bool have_scapy() {
  static const bool ok = std::system("/usr/bin/python3 -c 'import scapy.all' >/dev/null 2>&1") == 0;
  return ok;
}

// Runs `body` with `pk` the frames (read back from a pcap), and returns what it printed.
std::vector<std::string> scapy(const std::vector<Frame>& frames, const std::string& body) {
  char tmpl[] = "/tmp/rs-local-agent-test.XXXXXX";
  if (!mkdtemp(tmpl)) return {"mkdtemp failed"};
  const std::string dir = tmpl;
  {
    std::ofstream o(dir + "/f.pcap", std::ios::binary);
    const uint32_t hdr[6] = {0xa1b2c3d4, 0x00040002, 0, 0, 65535, 1};
    o.write(reinterpret_cast<const char*>(hdr), sizeof hdr);
    for (const auto& f : frames) {
      const uint32_t rec[4] = {0, 0, static_cast<uint32_t>(f.size()), static_cast<uint32_t>(f.size())};
      o.write(reinterpret_cast<const char*>(rec), sizeof rec);
      o.write(reinterpret_cast<const char*>(f.data()), static_cast<std::streamsize>(f.size()));
    }
  }
  std::ofstream(dir + "/check.py") << "import logging\nlogging.getLogger('scapy').setLevel(logging.ERROR)\n"
                                      "from scapy.all import *\n"
                                      "pk = rdpcap('" + dir + "/f.pcap')\n"
                                      "def same_after(p, fields):\n"
                                      "  # Recomputed checksums give back the same bytes: they were right.\n"
                                      "  q = Ether(raw(p))\n"
                                      "  for layer, name in fields: delattr(q[layer], name)\n"
                                      "  return raw(Ether(raw(q))) == raw(p)\n"
                                   << body;
  std::vector<std::string> lines;
  if (std::FILE* p = popen(("/usr/bin/python3 " + dir + "/check.py 2>&1").c_str(), "r")) {
    char buf[4096];
    while (std::fgets(buf, sizeof buf, p)) lines.emplace_back(buf, strcspn(buf, "\n"));
    pclose(p);
  }
  std::filesystem::remove_all(dir);
  return lines;
}

// --- The rig ----------------------------------------------------------------------------------

struct Options {
  bool addresses = true;
  int workers = 1;
  std::string routes;    // more lines under routes:
  std::string sections;  // more top-level YAML (neighbours:, copp:)
  std::array<const char*, kPorts> port_keys{};  // a port's keys in place of its addresses above
};

class Rig {
 public:
  explicit Rig(const Options& o = {}) {
    static int seq = 0;
    const int id = seq++;
    for (int p = 0; p < kPorts; ++p) {
      peers_.push_back(std::make_unique<RingPeer>(fmt::format("lat{}p{}", id, p)));
      ok = ok && peers_.back()->ok();
    }
    if (!ok) return;
    std::string y = fmt::format("switch: {{workers: {}, seed: 5, mbufs: 4096}}\nports:\n", o.workers);
    const char* const addrs[kPorts] = {R"(, ipv4: 10.0.1.1/24, ipv6: "2001:db8:1::1/64", icmp_unreachable: true)",
                                       R"(, ipv4: [10.0.2.1/24], ipv6: ["2001:db8:2::1/64"])", ", ipv4: 10.0.3.1/24"};
    for (int p = 0; p < kPorts; ++p)
      y += fmt::format("  - {{name: p{}, kind: ethdev, devargs: \"{}\", mac: \"{}\"{}}}\n", p, peers_[p]->devname(), kPortMac[p],
                       o.port_keys[p] ? o.port_keys[p] : o.addresses ? addrs[p] : "");
    y += fmt::format("routes:\n  - {{prefix: 10.8.0.0/16, port: p2, mac: \"{}\"}}\n  - {{prefix: \"2001:db8:8::/48\", port: p2, mac: \"{}\"}}\n",
                     kFarMac, kFarMac);
    y += o.routes + o.sections;
    cfg = load_config_text(y, "local_agent_test.yaml");
    test_pool_start_ = rte_mempool_in_use_count(test_pool());
    sw = std::make_unique<Switch>(cfg, now);
    sw_pool_start_ = rte_mempool_in_use_count(sw->pool());
    state = std::make_unique<RunningState>(*sw);
    // A commit waits for the workers' grace period: here that is their polls.
    if (sw->local()) agent = std::make_unique<LocalAgent>(*sw, *state, [this] {
      sw->poll_all(now);
      now += kUs;
    });
  }
  ~Rig() {
    agent.reset();
    state.reset();
    sw.reset();  // before the peers: it stops their ethdevs
  }

  void inject(int port, const Frame& f) { peers_[port]->inject(f); }
  // Workers, agent, workers: what was injected is answered and the answers sent.
  void cycle(int n = 6, uint64_t dt = 10 * kUs) {
    for (int i = 0; i < n; ++i) {
      sw->poll_all(now);
      if (agent) agent->poll(now);
      sw->poll_all(now);
      sw->reclaim();
      collect();
      now += dt;
    }
  }
  // Runs until `until`, in steps of `dt`.
  void run_to(uint64_t until, uint64_t dt = kMs) {
    while (now < until) cycle(1, std::min(dt, until - now));
  }
  // What left `port` since the last call.
  std::vector<Frame> sent(int port) {
    collect();
    std::vector<Frame> v = std::move(out_[port]);
    out_[port].clear();
    return v;
  }
  uint64_t drops(int port, DropReason r) const { return sw->drops(static_cast<std::size_t>(port), r); }
  uint64_t drops(DropReason r) const { return sw->drops(r); }
  // Packets into the punt stage, and every counter it has, over the workers.
  uint64_t punt_activity() const {
    uint64_t n = 0;
    for (uint16_t w = 0; w < sw->num_workers(); ++w)
      for (const auto& node : sw->pipeline(w).nodes())
        if (node.name == "punt") {
          n += node.packets.get();
          for (const Counter& c : node.stage->counters()) n += c.get();
        }
    return n;
  }
  const Neighbour* neighbour(uint16_t port, const std::string& ip) const {
    return agent->neighbours().find(NeighbourKey{port, parse_ip(ip).value()});
  }
  // The group a route's prefix leads to in the running state, or null.
  const GroupSpec* route_group(const std::string& addr, uint8_t depth) const {
    RouteKey k;
    k.ipv6 = addr.find(':') != std::string::npos;
    EXPECT_EQ(inet_pton(k.ipv6 ? AF_INET6 : AF_INET, addr.c_str(), k.addr.data()), 1);
    k.depth = depth;
    auto it = state->routes().find(k);
    if (it == state->routes().end()) return nullptr;
    const auto& g = state->group(it->second);
    return g ? &*g : nullptr;
  }
  void expect_balanced(const char* when) const {
    const SwitchTotals t = sw->totals();
    EXPECT_TRUE(t.balanced()) << when << ": received " << t.received << " + mirrored " << t.mirrored << " + originated "
                              << t.originated << " != sent " << t.sent << " + queued " << t.queued << " + in flight "
                              << t.in_flight << " + dropped " << t.dropped << " + held " << t.held;
  }
  // The end of every test: queues drained, books balanced, the agent gone (with whatever it
  // still held), every mbuf of both pools back.
  void finish() {
    cycle(20);
    for (auto& v : out_) v.clear();
    expect_balanced("before the agent goes");
    EXPECT_EQ(sw->totals().queued, 0u);
    EXPECT_EQ(sw->totals().in_flight, 0u);
    agent.reset();
    expect_balanced("after the agent went");
    EXPECT_EQ(sw->totals().held, 0u);
    EXPECT_EQ(rte_mempool_in_use_count(sw->pool()), sw_pool_start_) << "the switch's pool leaks";
    EXPECT_EQ(rte_mempool_in_use_count(test_pool()), test_pool_start_) << "the peers' pool leaks";
  }

  bool ok = true;
  uint64_t now = kT0;
  SwitchConfig cfg;
  std::unique_ptr<Switch> sw;
  std::unique_ptr<RunningState> state;
  std::unique_ptr<LocalAgent> agent;

 private:
  void collect() {
    for (int p = 0; p < kPorts; ++p)
      for (rte_mbuf* m : peers_[p]->take_tx()) {
        out_[p].push_back(mbuf_bytes(m));
        rte_pktmbuf_free(m);
      }
  }
  std::vector<std::unique_ptr<RingPeer>> peers_;
  std::vector<Frame> out_[kPorts];
  unsigned test_pool_start_ = 0, sw_pool_start_ = 0;
};

#define RIG(r, ...)         \
  Rig r{__VA_ARGS__};       \
  ASSERT_TRUE(r.ok);        \
  ASSERT_NE(r.agent, nullptr)

// The rig with the control protocol on its running state (ControlApi), as an operator's
// requests reach it; a commit's grace period passes with the workers' polls.
struct ApiRig : Rig {
  explicit ApiRig(const Options& o = {})
      : Rig(o), api(*state, [this] {
          sw->poll_all(now);
          now += kUs;
        }) {}
  json call(const json& req) { return api.handle(req); }
  // A request that must succeed: its result.
  json done(const json& req) {
    json r = api.handle(req);
    EXPECT_TRUE(r["ok"].get<bool>()) << req.dump() << " -> " << r.dump();
    return r["result"];
  }
  std::string hash() { return done({{"id", 0}, {"op", "state.hash"}}).dump(); }
  // A request refused naming `field`, its reason holding `reason_part`, the state as `before`.
  void refused(const json& req, const std::string& field, const std::string& reason_part, const std::string& before) {
    const json res = call(req);
    ASSERT_FALSE(res["ok"].get<bool>()) << req.dump();
    EXPECT_EQ(res["error"]["field"], field) << res.dump();
    EXPECT_NE(res["error"]["reason"].get<std::string>().find(reason_part), std::string::npos) << res.dump();
    EXPECT_EQ(hash(), before) << req.dump();
  }
  ControlApi api;
};

#define API_RIG(r, ...)     \
  ApiRig r{__VA_ARGS__};    \
  ASSERT_TRUE(r.Rig::ok);   \
  ASSERT_NE(r.agent, nullptr)

std::size_t count_arp_replies(const std::vector<Frame>& out) {
  std::size_t n = 0;
  for (auto& f : out) n += be16(f, 12) == 0x0806 && be16(f, 20) == 2;
  return n;
}

// An ARP frame's fields as one line: eth dst, eth src, op, sha, spa, tha, tpa.
std::string arp_text(const Frame& f) {
  if (f.size() < 42 || be16(f, 12) != 0x0806) return "not arp";
  return fmt::format("{} {} op{} {} {} {} {}", mac_at(f, 0), mac_at(f, 6), be16(f, 20), mac_at(f, 22), ip4_at(f, 28),
                     mac_at(f, 32), ip4_at(f, 38));
}

}  // namespace rs::test
