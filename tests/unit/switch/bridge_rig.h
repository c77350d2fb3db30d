// The rig of the bridge tests (bridge_test.cc, bridge_fdb_test.cc): a whole Switch of ring
// ethdevs stepped in time, the test playing every link partner, with stations, frames and
// the checks every test ends with (the books balance, flood copies counted as replicated, and
// every mbuf back in its pool).
#pragma once
#include <fmt/core.h>
#include <gtest/gtest.h>
#include <rte_ether.h>
#include <rte_mempool.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "app/stats_json.h"
#include "dataplane/switch/switch.h"
#include "tests/support/constants.h"
#include "tests/support/eal_env.h"
#include "tests/support/fake_port.h"
#include "tests/support/frame_files.h"
#include "tests/support/host_net.h"
#include "tests/support/packet_builder.h"
#include "tests/support/ring_port_spec.h"

namespace rs {
inline void PrintTo(DropReason r, std::ostream* os) { *os << drop_reason_name(r); }
}  // namespace rs

namespace rs::test {

// Stations (the hosts behind the ports).
constexpr const char* kA = "02:00:00:00:aa:0a";
constexpr const char* kB = "02:00:00:00:aa:0b";
constexpr const char* kC = "02:00:00:00:aa:0c";
constexpr const char* kBcast = "ff:ff:ff:ff:ff:ff";
constexpr const char* kMcast = "01:00:5e:00:00:fb";
constexpr uint64_t kStep = 10 * kUs;
constexpr uint8_t kTc3 = 3;  // DSCP 26 -> TC 3 -> queue 3 in these switches

std::string mac_text(const uint8_t* m) {
  return fmt::format("{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}", m[0], m[1], m[2], m[3], m[4], m[5]);
}

// A RoCE frame from `src` to `dst`, tagged when `tag` is given.
PacketSpec roce(const std::string& dst, const std::string& src, uint8_t dscp = kRoceDscp, uint8_t ecn = 0,
                std::optional<Vlan> tag = std::nullopt, uint32_t payload = 64, uint32_t psn = 0) {
  PacketSpec s(Eth{.dst = dst, .src = src});
  if (tag) s /= *tag;
  s /= Ipv4{.src = "10.0.0.1", .dst = "10.0.0.2", .dscp = dscp, .ecn = ecn};
  s /= Udp{.sport = 0xC123};
  s /= Bth{.dest_qp = 0x42, .psn = psn};
  s /= Payload::of_size(payload);
  return s;
}
// A non-IP frame (the builder's local experimental EtherType) from `src` to `dst`.
PacketSpec raw_l2(const std::string& dst, const std::string& src, std::optional<Vlan> tag = std::nullopt) {
  PacketSpec s(Eth{.dst = dst, .src = src});
  if (tag) s /= *tag;
  s /= Payload::of_size(80, 3);
  return s;
}
Vlan tag(uint16_t vid, uint8_t pcp = 0) { return Vlan{.pcp = pcp, .vid = vid}; }
// A PFC frame pausing priority 3, as a peer sends it.
PacketSpec pfc_spec(uint16_t quanta = 0xffff) {
  MacCtl c{.opcode = 0x0101, .class_enable = 1u << 3};
  c.quanta[3] = quanta;
  return Eth{.dst = "01:80:c2:00:00:01", .src = "02:00:00:00:bb:01"} / c;
}

// What a port sent: its bytes and the metadata it left with.
struct Out {
  std::vector<uint8_t> bytes;
  PacketMeta pm;
  bool tagged() const { return bytes.size() >= 18 && bytes[12] == 0x81 && bytes[13] == 0x00; }
  uint16_t vid() const { return tagged() ? static_cast<uint16_t>((bytes[14] << 8 | bytes[15]) & 0x0FFF) : 0; }
  uint8_t pcp() const { return tagged() ? static_cast<uint8_t>(bytes[14] >> 5) : 0; }
  std::string dst() const { return mac_text(bytes.data()); }
  std::string src() const { return mac_text(bytes.data() + 6); }
  bool mac_control() const { return bytes.size() >= 14 && bytes[12] == 0x88 && bytes[13] == 0x08; }
  // The frame after its MAC addresses and tag: EtherType onwards.
  std::vector<uint8_t> after_tag() const { return {bytes.begin() + (tagged() ? 16 : 12), bytes.end()}; }
};
std::vector<uint8_t> after_tag(const std::vector<uint8_t>& f) {
  const bool t = f.size() >= 18 && f[12] == 0x81 && f[13] == 0x00;
  return {f.begin() + (t ? 16 : 12), f.end()};
}

// Each port's VLAN membership (and worker, -1: round robin).
struct PortPlan {
  uint16_t access = 0;
  std::vector<uint16_t> tagged;
  int worker = -1;
};

class BridgeTest : public ::testing::Test {
 protected:
  void make(const std::vector<PortPlan>& plan, std::vector<uint16_t> vlans,
            const std::function<void(SwitchConfig&)>& tweak = {}) {
    static int instance = 0;
    const int id = instance++;
    cfg = SwitchConfig{};
    cfg.workers = 1;
    cfg.seed = 11;
    cfg.mbufs = 8192;
    cfg.qos.dscp_to_tc[kRoceDscp] = kTc3;  // SONiC's map otherwise: DSCP 0 -> TC 1
    cfg.vlans = std::move(vlans);
    for (std::size_t p = 0; p < plan.size(); ++p) {
      links.push_back(std::make_unique<RingPeer>(fmt::format("br{}p{}", id, p), 2048));
      ASSERT_TRUE(links.back()->ok());
      PortSpec ps = ring_port_spec(*links.back(), p, 100);
      ps.access_vlan = plan[p].access;
      ps.tagged_vlans = plan[p].tagged;
      ps.worker = plan[p].worker;
      cfg.ports.push_back(ps);
    }
    if (tweak) tweak(cfg);
    for (const auto& p : plan) cfg.workers = std::max<uint16_t>(cfg.workers, static_cast<uint16_t>(p.worker + 1));
    sw = std::make_unique<Switch>(cfg, now);
    ASSERT_NE(sw->fdb(), nullptr);
    in_use0 = rte_mempool_in_use_count(sw->pool());
    test_in_use0 = rte_mempool_in_use_count(test_pool());
  }

  // 9. The books, after every test: everything still queued leaves, then what came in (plus
  // the flood copies) is what went out or was dropped, and every mbuf is back in its pool.
  void TearDown() override {
    if (sw) {
      settle();
      for (auto& l : links) l->drain_tx();
      const SwitchTotals t = sw->totals();
      EXPECT_TRUE(t.balanced()) << "received " << t.received << " + replicated " << t.replicated << " != sent " << t.sent
                                << " + queued " << t.queued << " + in flight " << t.in_flight << " + dropped " << t.dropped;
      EXPECT_EQ(t.queued, 0u);
      EXPECT_EQ(t.in_flight, 0u);
      EXPECT_EQ(rte_mempool_in_use_count(sw->pool()), in_use0) << "switch pool: mbufs leaked";
      EXPECT_EQ(rte_mempool_in_use_count(test_pool()), test_in_use0) << "test pool: mbufs leaked";
    }
    sw.reset();  // before the links: the switch stops its ethdevs
    links.clear();
  }

  // The peer on `port` sends `s` (from the switch's pool, as its NIC would receive it).
  void send(uint16_t port, const PacketSpec& s) {
    rte_mbuf* m = s.mbuf(sw->pool(), port);
    ASSERT_NE(m, nullptr) << "switch pool exhausted";
    links[port]->inject(m);
  }
  void send_bytes(uint16_t port, const std::vector<uint8_t>& b) {
    rte_mbuf* m = rte_pktmbuf_alloc(sw->pool());
    ASSERT_NE(m, nullptr);
    std::memcpy(rte_pktmbuf_append(m, static_cast<uint16_t>(b.size())), b.data(), b.size());
    links[port]->inject(m);
  }
  void step() { sw->poll_all(now += kStep); }
  // Enough polls for everything received to be switched, handed over, queued and sent, and for
  // what the workers reported to be learned (poll_links learns).
  void settle(int polls = 10) {
    for (int i = 0; i < polls; ++i) step();
  }
  // What `port` sent since the last call (the mbufs freed).
  std::vector<Out> take(uint16_t port) {
    std::vector<Out> v;
    for (rte_mbuf* m : links[port]->take_tx()) {
      v.push_back({mbuf_bytes(m), meta(m)});
      rte_pktmbuf_free(m);
    }
    return v;
  }
  std::vector<std::vector<Out>> take_all() {
    std::vector<std::vector<Out>> v;
    for (std::size_t p = 0; p < links.size(); ++p) v.push_back(take(static_cast<uint16_t>(p)));
    return v;
  }
  // How many frames each port sent since the last take.
  std::vector<std::size_t> counts() {
    std::vector<std::size_t> n;
    for (auto& o : take_all()) n.push_back(o.size());
    return n;
  }
  // The peer on `port` sends `s`; after settling, how many frames each port sent.
  std::vector<std::size_t> send_and_count(uint16_t port, const PacketSpec& s) {
    send(port, s);
    settle();
    return counts();
  }

  uint64_t ctr(const std::string& name) const {
    const nlohmann::json j = stats_json(*sw);
    for (auto& st : j["stages"])
      if (st["node"] == "bridge") return st["counters"][name].get<uint64_t>();
    ADD_FAILURE() << "no bridge node";
    return 0;
  }
  // The FDB: (vlan, mac) -> port.
  std::map<std::pair<uint16_t, std::string>, uint16_t> fdb() const {
    std::map<std::pair<uint16_t, std::string>, uint16_t> m;
    for (const Fdb::Row& r : sw->fdb()->rows()) m[{r.vlan, mac_text(r.mac)}] = r.port;
    return m;
  }

  SwitchConfig cfg;
  std::vector<std::unique_ptr<RingPeer>> links;
  std::unique_ptr<Switch> sw;
  uint64_t now = kT0;
  unsigned in_use0 = 0, test_in_use0 = 0;
};

using Counts = std::vector<std::size_t>;

// VLAN 10: p0, p1 untagged, p2 tagged (and VLAN 20 tagged); VLAN 20: p3 untagged; p4 in none.
const std::vector<PortPlan> kFive = {{10, {}}, {10, {}}, {0, {10, 20}}, {20, {}}, {0, {}}};


}  // namespace rs::test
