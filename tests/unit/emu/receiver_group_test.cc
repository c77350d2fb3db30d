// Receiver groups: emulated hosts on several switch ports acting as one remote receiver (one
// shared flow tracker), fed directly and through a switch spraying one flow over two links;
// what the host counts as a received flow (payload bytes by opcode, ICRC, CNPs); the stats
// JSON (the leader reports, the others point to it); and the config rules that keep a group
// on one worker.
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <rte_byteorder.h>
#include <rte_ip.h>

#include <stdexcept>
#include <string>

#include "app/stats_json.h"
#include "control/config/config_loader.h"
#include "dataplane/emu/emulated_host.h"
#include "dataplane/switch/switch.h"
#include "tests/support/constants.h"
#include "tests/support/eal_env.h"
#include "tests/support/host_net.h"
#include "tests/support/packet_builder.h"

namespace rs::test {
namespace {

const uint32_t kSender = rte_cpu_to_be_32(RTE_IPV4(10, 0, 7, 2));

HostSpec receiver_spec(const std::string& group) {
  HostSpec h;
  h.ip = rte_cpu_to_be_32(RTE_IPV4(10, 0, 9, 2));
  h.mac = mac_of(9, false);
  h.receiver = group;
  return h;
}

// A RoCE packet from 10.0.7.2 as the switch delivers it to a host.
rte_mbuf* roce(uint32_t qp, uint32_t psn, uint32_t payload = kPayload, uint8_t opcode = 0x04, bool icrc = true) {
  const PacketSpec s = Eth{} / Ipv4{.src = "10.0.7.2", .dst = "10.0.9.2", .dscp = kRoceDscp} / Udp{} /
                       Bth{.opcode = opcode, .dest_qp = qp, .psn = psn, .icrc = icrc} / Payload::of_size(payload);
  rte_mbuf* m = s.mbuf(test_pool());
  EXPECT_NE(m, nullptr);
  return m;
}

void deliver(EmulatedHost& h, rte_mbuf* m, uint64_t now) {
  ASSERT_EQ(h.tx_burst(&m, 1, now), 1);
  // The host receives a frame when its last bit is in (its cable serialises): poll it after.
  ASSERT_EQ(h.rx_burst(&m, 1, now + kMs), 0);
}

RxFlowStats flow(const EmulatedHost& h, uint32_t qp, uint32_t src = kSender) {
  RxFlowStats s;
  EXPECT_TRUE(h.rx_tracker().find(src, qp, s)) << "qp " << qp;
  return s;
}

TEST(ReceiverGroup, TwoLinksReassembleOneFlow) {
  EmulatedHost a(receiver_spec("far"), mac_of(1, true), 25, test_pool(), kT0);
  EmulatedHost b(receiver_spec("far"), mac_of(2, true), 25, test_pool(), kT0, &a);
  a.name = "r0";
  b.name = "r1";
  EXPECT_EQ(&a.rx_tracker(), &b.rx_tracker());
  EXPECT_TRUE(a.receiver_leader());
  EXPECT_FALSE(b.receiver_leader());
  // PSNs 0..5 sprayed over the two links; link b is slower, so 3 overtakes 2 and 5 overtakes 4.
  uint64_t t = kT0;
  deliver(a, roce(0x77, 0), ++t);
  deliver(b, roce(0x77, 1), ++t);
  deliver(a, roce(0x77, 3), ++t);
  deliver(b, roce(0x77, 2), ++t);
  deliver(a, roce(0x77, 5), ++t);
  deliver(b, roce(0x77, 4), ++t);
  RxFlowStats s = flow(a, 0x77);
  EXPECT_EQ(s.packets, 6u);
  EXPECT_EQ(s.bytes, 6u * kPayload);
  EXPECT_EQ(s.frame_bytes, 6u * kFrame);
  EXPECT_EQ(s.out_of_order, 2u);
  EXPECT_EQ(s.late, 2u);
  EXPECT_EQ(s.missing, 0u);
  // ...and a PSN that never comes over either link is missing.
  deliver(b, roce(0x77, 7), ++t);
  s = flow(a, 0x77);
  EXPECT_EQ(s.out_of_order, 3u);
  EXPECT_EQ(s.missing, 1u);
  EXPECT_EQ(a.received_packets() + b.received_packets(), 7u);

  nlohmann::json ja, jb;
  a.stats(ja);
  b.stats(jb);
  ASSERT_TRUE(ja["host"].contains("rx_flows")) << ja.dump();
  ASSERT_EQ(ja["host"]["rx_flows"].size(), 1u);
  const auto& f = ja["host"]["rx_flows"][0];
  EXPECT_EQ(f["src"], "10.0.7.2");
  EXPECT_EQ(f["qp"], 0x77);
  EXPECT_EQ(f["packets"], 7);
  EXPECT_EQ(f["bytes"], 7 * kPayload);
  EXPECT_EQ(f["frame_bytes"], 7 * kFrame);
  EXPECT_EQ(f["out_of_order"], 3);
  EXPECT_EQ(f["late"], 2);
  EXPECT_EQ(f["missing"], 1);
  EXPECT_GT(f["goodput_gbps"].get<double>(), 0.0);
  EXPECT_EQ(ja["host"]["receiver"], "far");
  EXPECT_EQ(ja["host"]["rx_flows_untracked"], 0);
  // The other link points to the leader instead of counting the flow again.
  EXPECT_FALSE(jb["host"].contains("rx_flows")) << jb.dump();
  EXPECT_EQ(jb["host"]["rx_flows_in"], "r0");
  EXPECT_EQ(jb["host"]["receiver"], "far");
  EXPECT_EQ(jb["host"]["rx_packets"], b.received_packets()) << "link counters stay per port";
}

TEST(ReceiverGroup, HostsOutsideAGroupTrackTheirOwnFlows) {
  EmulatedHost a(receiver_spec(""), mac_of(1, true), 25, test_pool(), kT0);
  EmulatedHost b(receiver_spec(""), mac_of(2, true), 25, test_pool(), kT0);
  EXPECT_NE(&a.rx_tracker(), &b.rx_tracker());
  deliver(a, roce(1, 0), kT0);
  deliver(b, roce(1, 1), kT0);
  EXPECT_EQ(flow(a, 1).packets, 1u);
  EXPECT_EQ(flow(b, 1).packets, 1u);
  nlohmann::json j;
  a.stats(j);
  EXPECT_FALSE(j["host"].contains("receiver"));
  EXPECT_FALSE(j["host"].contains("rx_flows_in"));
  EXPECT_EQ(j["host"]["rx_flows"].size(), 1u);
}

TEST(ReceiverGroup, WhatCountsAsAReceivedFlow) {
  HostSpec spec = receiver_spec("");
  spec.rx_flow_capacity = 2;
  EmulatedHost h(spec, mac_of(1, true), 25, test_pool(), kT0);
  // RDMA WRITE_ONLY carries a 16-byte RETH before its payload; a pad count is not payload.
  deliver(h, roce(1, 0, 64, 0x0A), kT0);
  EXPECT_EQ(flow(h, 1).bytes, 48u);
  deliver(h, roce(1, 1, 62), kT0);
  EXPECT_EQ(flow(h, 1).bytes, 48u + 62);
  // A bad ICRC never reaches the receiver; CNPs (0x81) are not data.
  deliver(h, roce(1, 2, 64, 0x04, false), kT0);
  deliver(h, roce(2, 0, 16, 0x81), kT0);
  EXPECT_EQ(h.icrc_bad(), 1u);
  EXPECT_EQ(flow(h, 1).packets, 2u);
  RxFlowStats s;
  EXPECT_FALSE(h.rx_tracker().find(kSender, 2, s));
  // Capacity 2: the third flow is only counted.
  deliver(h, roce(3, 0), kT0);
  deliver(h, roce(4, 0), kT0);
  EXPECT_EQ(h.rx_tracker().untracked(), 1u);
}

// h0 sends one flow to 10.0.9.2, which h1 and h2 both are (receiver "far"), sprayed over both.
SwitchConfig sprayed(uint16_t workers, const std::string& policy) {
  SwitchConfig cfg;
  cfg.workers = workers;
  cfg.seed = 7;
  for (int h = 0; h < 3; ++h) add_host_port(cfg, 25, {.packets = 512, .bytes = 4u << 20});
  for (int h = 1; h <= 2; ++h) cfg.ports[h].host.receiver = "far";
  GroupSpec g;
  g.name = "far";
  g.policy.name = policy;
  g.members = {{.port = 1, .mac = cfg.ports[1].host.mac}, {.port = 2, .mac = cfg.ports[2].host.mac}};
  add_group_route(cfg, g, "10.0.9.0/24");
  HostFlowSpec f;
  f.dst_ip = rte_cpu_to_be_32(RTE_IPV4(10, 0, 9, 2));
  f.rate_gbps = 10;
  f.qp = 0x77;
  cfg.ports[0].host.flows.push_back(f);
  return cfg;
}

TEST(ReceiverGroup, SwitchSpraysAFlowOverTwoLinksOfOneReceiver) {
  Switch sw(sprayed(1, "spray"), kT0);
  for (uint64_t t = kT0; t < kT0 + 2 * kMs; t += kUs) sw.poll_all(t);
  auto& h0 = dynamic_cast<EmulatedHost&>(sw.port(0));
  auto& h1 = dynamic_cast<EmulatedHost&>(sw.port(1));
  auto& h2 = dynamic_cast<EmulatedHost&>(sw.port(2));
  EXPECT_EQ(&h1.rx_tracker(), &h2.rx_tracker());
  EXPECT_GT(h1.received_packets(), 0u);
  EXPECT_GT(h2.received_packets(), 0u);
  const RxFlowStats s = flow(h1, 0x77, host_ip(0));
  EXPECT_EQ(s.packets, h1.received_packets() + h2.received_packets());
  EXPECT_EQ(s.bytes, s.packets * kPayload);
  EXPECT_EQ(s.missing, 0u) << "nothing was dropped";
  // Each egress sends its queue in turn within a poll, so the two links overtake each other.
  EXPECT_GT(s.out_of_order, 0u) << "spraying one flow over two links reorders it";
  EXPECT_EQ(s.out_of_order, s.late) << "every gap was one overtaken packet, filled late";
  EXPECT_LE(h0.sent_packets() - s.packets, 2u * 25) << "at most a poll's worth still queued";
  RecordProperty("out_of_order", static_cast<int>(s.out_of_order));
  const nlohmann::json j = stats_json(sw);
  EXPECT_EQ(j["ports"][1]["host"]["rx_flows"][0]["packets"], s.packets) << j["ports"][1].dump();
  EXPECT_EQ(j["ports"][2]["host"]["rx_flows_in"], "h1");
}

TEST(ReceiverGroup, UnpinnedMembersFollowTheFirstPortAndPinsMustAgree) {
  // Unpinned, ports 1 and 2 would land on workers 1 and 0: port 2 follows port 1 instead.
  {
    Switch sw(sprayed(2, "ecmp"), kT0);
    EXPECT_EQ(&dynamic_cast<EmulatedHost&>(sw.port(1)).rx_tracker(), &dynamic_cast<EmulatedHost&>(sw.port(2)).rx_tracker());
    bool together = false;
    for (uint16_t w = 0; w < sw.num_workers(); ++w) {
      const auto& rx = sw.worker(w).rx_ports;
      together |= std::count(rx.begin(), rx.end(), &sw.port(1)) + std::count(rx.begin(), rx.end(), &sw.port(2)) == 2;
    }
    EXPECT_TRUE(together) << "one worker polls both ports of the receiver";
  }
  SwitchConfig cfg = sprayed(2, "ecmp");
  cfg.ports[1].worker = 1;
  cfg.ports[2].worker = 0;
  EXPECT_THROW(Switch(cfg, kT0), std::runtime_error) << "a hand-built config pinning one receiver to two workers";
}

// --- The YAML: host.receiver, and the worker pinning a group needs ---------------------------

std::string group_yaml(const std::string& w1, const std::string& w2, const std::string& r2 = "far") {
  return "switch: {workers: 3}\nports:\n"
         "  - {name: s, host: {ip: 10.0.7.2, mac: \"02:00:00:00:00:aa\"}}\n"
         "  - {name: r0, " + w1 + "host: {ip: 10.0.9.2, mac: \"02:00:00:00:00:b0\", receiver: far}}\n"
         "  - {name: x, host: {ip: 10.0.8.2, mac: \"02:00:00:00:00:c0\"}}\n"
         "  - {name: r1, " + w2 + "host: {ip: 10.0.9.2, mac: \"02:00:00:00:00:b1\", receiver: " + r2 + "}}\n";
}

TEST(ReceiverGroupConfig, UnpinnedMembersFollowTheFirstPort) {
  const SwitchConfig c = load_config_text(group_yaml("", ""), "g.yaml");
  EXPECT_EQ(c.ports[1].host.receiver, "far");
  EXPECT_EQ(c.ports[3].host.receiver, "far");
  // Left unpinned, so --workers can still change the count: the Switch puts the group on its
  // first port's worker (ReceiverGroup.UnpinnedMembersFollowTheFirstPortAndPinsMustAgree).
  EXPECT_EQ(c.ports[1].worker, -1);
  EXPECT_EQ(c.ports[3].worker, -1);
  EXPECT_EQ(c.ports[0].worker, -1) << "ports outside a group keep their default";
  EXPECT_EQ(c.ports[2].worker, -1);
  EXPECT_TRUE(c.ports[0].host.receiver.empty());
}

TEST(ReceiverGroupConfig, APinnedMemberDecidesTheGroupsWorker) {
  SwitchConfig c = load_config_text(group_yaml("", "worker: 2, "), "g.yaml");
  EXPECT_EQ(c.ports[1].worker, 2);
  EXPECT_EQ(c.ports[3].worker, 2);
  c = load_config_text(group_yaml("worker: 0, ", "worker: 0, "), "g.yaml");
  EXPECT_EQ(c.ports[1].worker, 0);
  EXPECT_EQ(c.ports[3].worker, 0);
  // Different names are different receivers.
  c = load_config_text(group_yaml("worker: 0, ", "worker: 2, ", "near"), "g.yaml");
  EXPECT_EQ(c.ports[3].worker, 2);
}

void expect_rejected(const std::string& yaml, const std::string& path, const std::string& reason) {
  try {
    load_config_text(yaml, "g.yaml");
    FAIL() << "accepted: " << yaml;
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path, path) << e.what();
    EXPECT_NE(std::string(e.what()).find(reason), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("g.yaml:"), std::string::npos) << e.what();
    EXPECT_GT(e.line, 0) << e.what();
  }
}

TEST(ReceiverGroupConfig, RejectsAGroupPinnedToTwoWorkers) {
  expect_rejected(group_yaml("worker: 0, ", "worker: 1, "), "ports[3].worker", "receiver 'far' is on worker 0 (ports[1] 'r0')");
}

TEST(ReceiverGroupConfig, RejectsABadReceiverName) {
  expect_rejected(group_yaml("", "", "\"\""), "ports[3].host.receiver", "empty");
  expect_rejected(group_yaml("", "", "[a]"), "ports[3].host.receiver", "expected");
}

}  // namespace
}  // namespace rs::test
