// Per-packet traces (Switch::set_trace, Switch::trace_text): the walk of a routed RoCE packet, a
// CNP, a TTL-expired packet and a PFC frame through the default pipeline, checked line by line;
// the same routed packet through the general pipeline (its member chosen by nexthop_select);
// tracing the first N then 1 in K; and no record at all when tracing is off.
#include <fmt/core.h>
#include <gtest/gtest.h>
#include <rte_hash_crc.h>

#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "dataplane/switch/switch.h"
#include "pipelines_embedded.h"
#include "tests/support/packet_builder.h"
#include "tests/support/fake_port.h"
#include "tests/support/ring_port_spec.h"
#include "tests/unit/stages/stage_test_util.h"

namespace rs::test {
namespace {

constexpr uint64_t kT0 = 1'000'000'000;  // switches start at an arbitrary non-zero time
constexpr uint32_t kSeed = 0x5EED;
constexpr const char* kNextHopMac = "02:00:00:00:bb:01";

// Two ports, p0 and p1, each an ethdev whose link partner is the test; 10.0.1.0/24 behind p1.
// RoCE's DSCP 26 in TC 3 and CNPs steered to queue 7.
class TraceTest : public ::testing::Test {
 protected:
  void make(const char* pipeline = nullptr) {
    static int instance = 0;
    const int id = instance++;
    SwitchConfig cfg;
    cfg.workers = 1;
    cfg.seed = kSeed;
    cfg.mbufs = 2048;
    cfg.qos.dscp_to_tc[26] = 3;
    cfg.qos.cnp_queue = 7;
    cfg.mmu.pfc_enable = 1u << 3;
    if (pipeline) {
      cfg.pipeline_text = pipeline;
      cfg.pipeline_source = "general";
    }
    for (int p = 0; p < 2; ++p) {
      links.push_back(std::make_unique<RingPeer>(fmt::format("trace{}p{}", id, p)));
      ASSERT_TRUE(links.back()->ok());
      cfg.ports.push_back(ring_port_spec(*links.back(), p, 10));
    }
    GroupSpec g;
    g.name = "to_p1";
    g.members.push_back({.port = 1, .mac = mac(kNextHopMac), .weight = 1});
    cfg.groups.push_back(g);
    RouteSpec r;
    r.addr[0] = 10;
    r.addr[2] = 1;
    r.depth = 24;
    r.group = 0;
    cfg.routes.push_back(r);
    sw = std::make_unique<Switch>(cfg, kT0);
  }
  void TearDown() override {
    sw.reset();  // before the links: the switch stops its ethdevs
    links.clear();
  }
  // The peer on p0 sends these frames, in order; the switch polls once.
  void send(const std::vector<PacketSpec>& frames) {
    for (const auto& f : frames) links[0]->inject(f.mbuf(test_pool()));
    sw->poll_all(now += 1000);
  }
  static std::vector<std::string> lines(const std::string& text) {
    std::vector<std::string> v;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) v.push_back(l);
    return v;
  }

  std::vector<std::unique_ptr<RingPeer>> links;
  std::unique_ptr<Switch> sw;
  uint64_t now = kT0;
};

PacketSpec roce(uint8_t ttl = 64, uint32_t qp = 0x11) {
  return Eth{} / Ipv4{.src = "10.0.0.2", .dst = "10.0.1.2", .dscp = 26, .ttl = ttl} / Udp{.sport = 0xC001} /
         Bth{.opcode = 0x04, .dest_qp = qp, .psn = 5} / Payload::of_size(64);
}
PacketSpec cnp() {
  return Eth{} / Ipv4{.src = "10.0.0.2", .dst = "10.0.1.2", .dscp = 48} / Udp{.sport = 0xC002} /
         Bth{.opcode = 0x81, .dest_qp = 0x22, .becn = true} / Payload::of_size(16);
}
PacketSpec pfc(uint16_t quanta) {
  MacCtl c{.opcode = 0x0101, .class_enable = 0x08};
  c.quanta[3] = quanta;
  return Eth{.dst = "01:80:c2:00:00:01", .src = "02:00:00:00:aa:01"} / c;
}

// The flow hash as the parse step defines it, computed here from the frame's bytes with DPDK's
// own CRC32-C: source and destination address, the two ports, then the protocol byte; then
// murmur3's 32-bit finaliser (fmix32).
uint32_t flow_hash(const PacketSpec& s) {
  const auto f = s.bytes();
  auto word = [&](std::size_t at) {
    uint32_t w;
    std::memcpy(&w, &f[at], 4);
    return w;
  };
  uint32_t h = rte_hash_crc_4byte(word(14 + 12), kSeed);
  h = rte_hash_crc_4byte(word(14 + 16), h);
  h = rte_hash_crc_4byte(word(14 + 20), h);
  h = rte_hash_crc_1byte(17, h);
  h = (h ^ (h >> 16)) * 0x85ebca6bu;
  h = (h ^ (h >> 13)) * 0xc2b2ae35u;
  return h ^ (h >> 16);
}

TEST_F(TraceTest, RoutedRoceCnpTtlExpiredAndPfcLineByLine) {
  // l3_roce runs l3_input, ipv4_route and rewrite_enqueue as one node, ipv4_forward (a chain):
  // each of its steps writes its own line, named node/stage.
  make();
  sw->set_trace(4, 0);
  send({roce(), cnp(), roce(1), pfc(100)});
  const std::vector<std::string> want = {
      "packet 1 (worker 0): received on port 0 (p0), 122 bytes",
      fmt::format("  ipv4_forward/l3_input: ipv4 roce opcode 0x04 qp 0x000011 dscp 26 ecn 0 hash {:#010x}: tc 3 queue 3 -> ipv4",
                  flow_hash(roce())),
      "  ipv4_forward/ipv4_route: dst 10.0.1.2 ttl 64 group 0 member nexthop 0 -> rewrite",
      "  ipv4_forward/rewrite_enqueue: port 1 dmac 02:00:00:00:bb:01 ttl 63 -> enqueue queue 3",
      "packet 2 (worker 0): received on port 0 (p0), 74 bytes",
      fmt::format("  ipv4_forward/l3_input: ipv4 roce opcode 0x81 qp 0x000022 (cnp) dscp 48 ecn 0 hash {:#010x}: tc 6 queue 7 -> ipv4",
                  flow_hash(cnp())),
      "  ipv4_forward/ipv4_route: dst 10.0.1.2 ttl 64 group 0 member nexthop 0 -> rewrite",
      "  ipv4_forward/rewrite_enqueue: port 1 dmac 02:00:00:00:bb:01 ttl 63 -> enqueue queue 7",
      "packet 3 (worker 0): received on port 0 (p0), 122 bytes",
      fmt::format("  ipv4_forward/l3_input: ipv4 roce opcode 0x04 qp 0x000011 dscp 26 ecn 0 hash {:#010x}: tc 3 queue 3 -> ipv4",
                  flow_hash(roce(1))),
      "  ipv4_forward/ipv4_route: dst 10.0.1.2 ttl 1 drop ttl_expired",
      "packet 4 (worker 0): received on port 0 (p0), 60 bytes",
      "  ipv4_forward/l3_input: mac control -> mac_control",
      "  mac_control: pfc enable 0x08 p3=100 consumed",
  };
  const auto got = lines(sw->trace_text());
  ASSERT_EQ(got.size(), want.size()) << sw->trace_text();
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_EQ(got[i], want[i]) << "line " << i + 1;
  // What the trace says happened, happened.
  EXPECT_EQ(sw->drops(0, DropReason::TtlExpired), 1u);
  EXPECT_EQ(sw->drops(0, DropReason::MacControl), 1u);
  EXPECT_TRUE(sw->egress(0).paused(3)) << "the PFC frame paused p0's queue 3";
  EXPECT_EQ(sw->egress(1).queue(3).enq_packets.get() + sw->egress(1).queue(7).enq_packets.get(), 2u);
}

TEST_F(TraceTest, GeneralPipelineShowsThePolicyChoosing) {
  // The same packet through l3_roce_general: the route stage leaves the member to
  // nexthop_select, which asks the group's policy.
  make(kPipelineL3RoceGeneral);
  sw->set_trace(1, 0);
  send({roce()});
  const std::vector<std::string> want = {
      "packet 1 (worker 0): received on port 0 (p0), 122 bytes",
      fmt::format("  l3_input: ipv4 roce opcode 0x04 qp 0x000011 dscp 26 ecn 0 hash {:#010x}: tc 3 queue 3 -> ipv4",
                  flow_hash(roce())),
      "  ipv4_route: dst 10.0.1.2 ttl 64 group 0 -> select",
      "  nexthop_select: group 0 policy chose nexthop 0 -> rewrite",
      "  rewrite_enqueue: port 1 dmac 02:00:00:00:bb:01 ttl 63 -> enqueue queue 3",
  };
  EXPECT_EQ(lines(sw->trace_text()), want) << sw->trace_text();
}

TEST_F(TraceTest, FirstNThenOneInK) {
  make();
  // The first two packets received, then nothing: the third to fifth pass untraced.
  sw->set_trace(2, 0);
  send({roce(64, 1), roce(64, 2), roce(64, 3), roce(64, 4), roce(64, 5)});
  auto text = sw->trace_text();
  EXPECT_NE(text.find("qp 0x000001"), std::string::npos) << text;
  EXPECT_NE(text.find("qp 0x000002"), std::string::npos) << text;
  EXPECT_EQ(text.find("qp 0x000003"), std::string::npos) << text;
  EXPECT_EQ(text.find("packet 3"), std::string::npos) << text;
  EXPECT_EQ(lines(text).size(), 8u) << text;
}

TEST_F(TraceTest, OneInK) {
  make();
  // No first packets, then 1 in 3: the 3rd and 6th of six, numbered 1 and 2.
  sw->set_trace(0, 3);
  send({roce(64, 1), roce(64, 2), roce(64, 3), roce(64, 4), roce(64, 5), roce(64, 6)});
  const auto got = lines(sw->trace_text());
  ASSERT_EQ(got.size(), 8u) << sw->trace_text();
  EXPECT_EQ(got[0], "packet 1 (worker 0): received on port 0 (p0), 122 bytes");
  EXPECT_NE(got[1].find("qp 0x000003"), std::string::npos) << got[1];
  EXPECT_EQ(got[4], "packet 2 (worker 0): received on port 0 (p0), 122 bytes");
  EXPECT_NE(got[5].find("qp 0x000006"), std::string::npos) << got[5];
}

TEST_F(TraceTest, OffMeansNoRecords) {
  // Never configured, and configured then exhausted: packets forwarded, no record written.
  make();
  send({roce(), cnp(), roce(1), pfc(100)});
  EXPECT_EQ(sw->trace_text(), "");
  EXPECT_EQ(sw->drops(0, DropReason::TtlExpired), 1u) << "the packets did go through";
  EXPECT_EQ(sw->worker(0).tracer.records().size(), 0u);
  sw->set_trace(1, 0);
  send({roce(64, 1)});
  const std::size_t after_one = sw->worker(0).tracer.records().size();
  EXPECT_EQ(after_one, 4u) << "arrival, l3_input, ipv4_route, rewrite_enqueue";
  send({roce(64, 2), cnp(), pfc(0)});
  EXPECT_EQ(sw->worker(0).tracer.records().size(), after_one) << "tracing ended after the first packet";
}

}  // namespace
}  // namespace rs::test
