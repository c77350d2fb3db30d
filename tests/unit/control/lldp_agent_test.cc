// LLDP with DCBX on a stepped switch: what a port sends is read by tshark (an independent
// decoder) with the configured PFC vector, ETS weights and RoCE's application priority; what a
// NIC sends is parsed into the port's neighbour, a differing PFC vector is flagged, a shutdown
// LLDPDU and an expired TTL forget it, a malformed frame is counted and changes nothing.
#include <fmt/core.h>
#include <gtest/gtest.h>
#include <rte_mempool.h>

#include <cstdlib>
#include <map>
#include <memory>

#include "control/local/local_agent.h"
#include "dataplane/proto/lldp.h"
#include "tests/support/eal_env.h"
#include "tests/support/fake_port.h"
#include "tests/support/frame_files.h"
#include "tests/support/ring_port_spec.h"

namespace rs::test {
namespace {

constexpr uint64_t kT0 = 1'000'000'000;
const rte_ether_addr kNicMac{{0x02, 0, 0, 0, 0xaa, 0x01}};

struct LldpRig {
  explicit LldpRig(const std::string& tag) {
    init_test_eal();
    SwitchConfig cfg;
    cfg.workers = 1;
    cfg.mbufs = 2048;
    cfg.mmu.pfc_enable = 1u << 3;
    cfg.qos.dscp_to_tc[26] = 3;
    cfg.lldp.interval_s = 1;
    cfg.lldp.hold = 4;
    cfg.lldp.system_name = "leaf-1";
    for (int p = 0; p < 2; ++p) {
      links.push_back(std::make_unique<RingPeer>(fmt::format("{}{}", tag, p)));
      PortSpec ps = ring_port_spec(*links.back(), p, 100);
      ps.lldp = p == 0;  // only p0 advertises; both listen
      ps.egress.sched.fill(QueueSched::Dwrr);
      ps.egress.sched[7] = QueueSched::Strict;
      ps.egress.weights = {10, 10, 10, 40, 20, 5, 5, 1};
      cfg.ports.push_back(ps);
    }
    sw = std::make_unique<Switch>(cfg, now);
    state = std::make_unique<RunningState>(*sw);
    agent = std::make_unique<LocalAgent>(*sw, *state, [this] { sw->poll_all(now); });
    in_use = rte_mempool_in_use_count(sw->pool());
  }
  ~LldpRig() {
    agent.reset();
    state.reset();
    sw.reset();
    links.clear();
  }
  // One round: the agent, then the switch (what the agent sent goes out).
  void step(uint64_t dt_ns = 1000) {
    now += dt_ns;
    sw->poll_all(now);
    agent->poll(now);
    sw->poll_all(now);
  }
  // The LLDP frames the switch sent on port p since the last call.
  std::vector<std::vector<uint8_t>> sent_lldp(int p) {
    std::vector<std::vector<uint8_t>> out;
    for (rte_mbuf* m : links[p]->take_tx()) {
      const auto* d = rte_pktmbuf_mtod(m, const uint8_t*);
      if (m->data_len >= 14 && d[12] == 0x88 && d[13] == 0xcc) out.emplace_back(d, d + m->data_len);
      rte_pktmbuf_free(m);
    }
    return out;
  }
  void nic_sends(int p, const proto::LldpInfo& info) {
    std::vector<uint8_t> f(1600);
    f.resize(proto::build_lldp(f.data(), static_cast<uint32_t>(f.size()), kNicMac, info));
    ASSERT_FALSE(f.empty());
    links[p]->inject(f);
  }
  uint64_t drops(DropReason r) const { return sw->drops(r); }

  uint64_t now = kT0;
  std::vector<std::unique_ptr<RingPeer>> links;
  std::unique_ptr<Switch> sw;
  std::unique_ptr<RunningState> state;
  std::unique_ptr<LocalAgent> agent;
  unsigned in_use = 0;
};

proto::LldpInfo nic(uint8_t pfc_enable, uint16_t ttl = 120) {
  proto::LldpInfo i;
  i.chassis_id = proto::mac_id(kNicMac);
  i.port_subtype = proto::kPortSubtypeMac;
  i.port_id = proto::mac_id(kNicMac);
  i.ttl = ttl;
  i.system_name = "host-a";
  i.pfc = proto::DcbxPfc{true, false, 8, pfc_enable};
  i.app.push_back({3, proto::kAppSelUdpDccp, 4791});
  return i;
}

TEST(LldpAgent, TsharkReadsTheDcbxSettingsThePortAdvertises) {
  LldpRig r("lldpadv");
  r.step();
  const auto p0 = r.sent_lldp(0);
  ASSERT_EQ(p0.size(), 1u) << "an LLDPDU at start on the port that enables it";
  EXPECT_TRUE(r.sent_lldp(1).empty()) << "p1 does not send LLDP";
  // Every interval, and only then.
  r.step(500'000'000);
  EXPECT_TRUE(r.sent_lldp(0).empty());
  r.step(500'000'000);
  EXPECT_EQ(r.sent_lldp(0).size(), 1u);

  if (std::system("command -v tshark >/dev/null 2>&1") != 0) GTEST_SKIP() << "no tshark";
  char tmpl[] = "/tmp/rs-lldp-agent.XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string file = std::string(tmpl) + "/lldp.pcap";
  write_pcap(file, p0);
  // Wireshark 4.0 reads the IEEE DCBX TLVs into some of its older CEE field names (see
  // tests/unit/proto/lldp_test.cc): pfc.prioN are the enable bits, pg.perN the TC bandwidths.
  std::vector<std::string> fields = {"eth.dst", "lldp.chassis.id.mac", "lldp.port.id", "lldp.time_to_live", "lldp.tlv.system.name",
                                     "lldp.dcbx.feature.app.proto", "lldp.dcbx.ieee.app.prio", "lldp.dcbx.iee.app.sf", "_ws.malformed"};
  for (int i = 0; i < 8; ++i) {
    fields.push_back(fmt::format("lldp.dcbx.feature.pfc.prio{}", i));
    fields.push_back(fmt::format("lldp.dcbx.feature.pg.per{}", i));
    fields.push_back(fmt::format("lldp.dcbx.ieee.ets.tsa{}", i));
    fields.push_back(fmt::format("lldp.dcbx.feature.pg.pgid_prio{}", i));
  }
  std::string cmd = "tshark -r " + file + " -T fields -E occurrence=f -E separator=/t";
  for (auto& f : fields) cmd += " -e " + f;
  const auto lines = command_lines(cmd, false);
  ASSERT_EQ(lines.size(), 1u) << cmd;
  std::map<std::string, std::string> v;
  std::size_t at = 0;
  for (auto& f : fields) {
    const std::size_t tab = lines[0].find('\t', at);
    v[f] = lines[0].substr(at, tab == std::string::npos ? std::string::npos : tab - at);
    at = tab == std::string::npos ? lines[0].size() : tab + 1;
  }
  EXPECT_EQ(v["eth.dst"], "01:80:c2:00:00:0e");
  EXPECT_EQ(v["lldp.chassis.id.mac"], "02:00:00:00:00:10");
  EXPECT_EQ(v["lldp.port.id"], "p0");
  EXPECT_EQ(v["lldp.time_to_live"], "4");
  EXPECT_EQ(v["lldp.tlv.system.name"], "leaf-1");
  EXPECT_EQ(v["_ws.malformed"], "");
  for (int p = 0; p < 8; ++p)  // qos.pfc_enable [3]
    EXPECT_EQ(v[fmt::format("lldp.dcbx.feature.pfc.prio{}", p)], p == 3 ? "1" : "0") << "priority " << p;
  // DWRR weights 10,10,10,40,20,5,5 over 100, queue 7 strict.
  const char* bw[8] = {"10", "10", "10", "40", "20", "5", "5", "0"};
  for (int q = 0; q < 8; ++q) {
    EXPECT_EQ(v[fmt::format("lldp.dcbx.feature.pg.per{}", q)], bw[q]) << "TC " << q;
    EXPECT_EQ(v[fmt::format("lldp.dcbx.ieee.ets.tsa{}", q)], q == 7 ? "0" : "2") << "TC " << q;
    EXPECT_EQ(v[fmt::format("lldp.dcbx.feature.pg.pgid_prio{}", q)], std::to_string(q)) << "priority " << q << ": identity maps";
  }
  // The first application entry: RoCEv2 (UDP 4791) on priority 3.
  EXPECT_EQ(v["lldp.dcbx.feature.app.proto"], "0x12b7");
  EXPECT_EQ(v["lldp.dcbx.ieee.app.prio"], "3");
  EXPECT_EQ(v["lldp.dcbx.iee.app.sf"], "3");
  std::system(("rm -rf " + std::string(tmpl)).c_str());
}

TEST(LldpAgent, NeighbourParsedMismatchFlaggedShutdownAndTtlForget) {
  LldpRig r("lldprx");
  r.step();
  r.sent_lldp(0);
  r.nic_sends(1, nic(1u << 3));
  r.step();
  const nlohmann::json n = r.agent->lldp_json();
  ASSERT_EQ(n.size(), 1u);
  EXPECT_EQ(n[0]["port"], "p1");
  EXPECT_EQ(n[0]["chassis_id"], "02:00:00:00:aa:01");
  EXPECT_EQ(n[0]["system_name"], "host-a");
  EXPECT_EQ(n[0]["pfc"]["enable"], 8);
  EXPECT_EQ(n[0]["pfc"]["willing"], true);
  EXPECT_EQ(n[0]["pfc_mismatch"], false);
  EXPECT_EQ(n[0]["app"][0]["protocol"], 4791);
  EXPECT_EQ(r.agent->lldp().counters().received, 1u);
  EXPECT_EQ(r.drops(DropReason::LocalDelivered), 1u);
  // A NIC that enables PFC on 3 and 4 while the switch has 3 only.
  r.nic_sends(1, nic((1u << 3) | (1u << 4)));
  r.step();
  EXPECT_TRUE(r.agent->lldp().pfc_mismatch(1));
  EXPECT_EQ(r.agent->lldp_json()[0]["pfc_mismatch"], true);
  EXPECT_EQ(r.agent->lldp().counters().pfc_mismatches, 1u);
  // Matching again clears the flag; a shutdown LLDPDU forgets the neighbour.
  r.nic_sends(1, nic(1u << 3));
  r.step();
  EXPECT_FALSE(r.agent->lldp().pfc_mismatch(1));
  r.nic_sends(1, nic(1u << 3, 0));
  r.step();
  EXPECT_EQ(r.agent->lldp_json().size(), 0u);
  EXPECT_EQ(r.agent->lldp().counters().shutdowns, 1u);
  // A TTL of 2 s: gone once it runs out, not before.
  r.nic_sends(1, nic(1u << 3, 2));
  r.step();
  r.step(1'900'000'000);
  EXPECT_EQ(r.agent->lldp_json().size(), 1u);
  r.step(200'000'000);
  EXPECT_EQ(r.agent->lldp_json().size(), 0u);
  EXPECT_EQ(r.agent->lldp().counters().expired, 1u);
  r.sent_lldp(0);
  r.sent_lldp(1);
  EXPECT_TRUE(r.sw->totals().balanced());
}

TEST(LldpAgent, MalformedFramesAreCountedAndChangeNothing) {
  LldpRig r("lldpbad");
  r.step();
  r.sent_lldp(0);
  std::vector<uint8_t> f(1600);
  f.resize(proto::build_lldp(f.data(), static_cast<uint32_t>(f.size()), kNicMac, nic(1u << 3)));
  // The port ID TLV's length runs past the frame; a TTL TLV first (mandatory order broken); a
  // frame cut after its header.
  std::vector<uint8_t> past = f;
  past[14 + 2 + f[15] + 1] = 0xff;
  std::vector<uint8_t> cut(60, 0);
  std::copy(f.begin(), f.begin() + 15, cut.begin());
  std::vector<uint8_t> order = f;
  order[14] = 3 << 1;  // the chassis ID TLV's type becomes TTL's
  for (auto* bad : {&past, &cut, &order}) r.links[1]->inject(*bad);
  r.step();
  EXPECT_EQ(r.drops(DropReason::MalformedLldp), 3u);
  EXPECT_EQ(r.agent->lldp().counters().malformed, 3u);
  EXPECT_EQ(r.agent->lldp_json().size(), 0u);
  r.sent_lldp(0);
  r.sent_lldp(1);
  EXPECT_TRUE(r.sw->totals().balanced());
}

TEST(LldpAgent, PoolBackToStartAfterTheAgentGoes) {
  unsigned start, end;
  {
    LldpRig r("lldppool");
    start = r.in_use;
    for (int k = 0; k < 5; ++k) {
      r.nic_sends(1, nic(1u << 3));
      r.step(1'000'000'000);
    }
    r.sent_lldp(0);
    r.sent_lldp(1);
    EXPECT_TRUE(r.sw->totals().balanced());
    end = rte_mempool_in_use_count(r.sw->pool());
  }
  EXPECT_EQ(end, start);
}

}  // namespace
}  // namespace rs::test
