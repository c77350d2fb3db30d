// Traffic patterns (dataplane/nic/traffic.h): permutations are derangements; an incast's senders
// all reach its receiver; a flow-size CDF is read, interpolated and drawn from, and its open-loop
// arrivals offer the configured load; the loader's errors name the CDF file's own line; and a
// permutation on a whole switch completes.
#include "dataplane/nic/traffic.h"

#include <fmt/core.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>

#include "control/config/config_loader.h"
#include "control/config/nic_config.h"
#include "tests/unit/switch/lossless_net.h"

namespace rs::test {
namespace {

using nic::Pattern;
using nic::TrafficSpec;

std::string temp_file(const std::string& name, const std::string& text) {
  const std::string dir = std::filesystem::temp_directory_path().string() + fmt::format("/rs-traffic-{}", getpid());
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/" + name) << text;
  return dir + "/" + name;
}

TEST(Traffic, PermutationsAreDerangements) {
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    std::vector<nic::QpSpec> q[8];
    std::vector<nic::Endpoint> eps;
    for (uint8_t h = 0; h < 8; ++h) eps.push_back({host_ip(h), 10, &q[h]});
    TrafficSpec s;
    s.pattern = Pattern::Permutation;
    s.seed = seed;
    nic::expand_traffic(s, 1, eps);
    std::set<uint32_t> to;
    for (uint8_t h = 0; h < 8; ++h) {
      ASSERT_EQ(q[h].size(), 1u);
      EXPECT_NE(q[h][0].peer_ip, host_ip(h)) << "seed " << seed;
      to.insert(q[h][0].peer_ip);
      EXPECT_EQ(q[h][0].traffic, 1u);
    }
    EXPECT_EQ(to.size(), 8u) << "each host hears from exactly one";
  }
}

TEST(Traffic, IncastSendersAllReachTheReceiver) {
  std::vector<nic::QpSpec> q[5];
  std::vector<nic::Endpoint> eps;
  for (uint8_t h = 1; h <= 4; ++h) eps.push_back({host_ip(h), 10, &q[h]});
  eps.push_back({host_ip(0), 10, &q[0]});
  TrafficSpec s;
  s.messages = 7;
  nic::expand_traffic(s, 2, eps);
  std::set<uint32_t> qpns;
  for (uint8_t h = 1; h <= 4; ++h) {
    ASSERT_EQ(q[h].size(), 1u);
    EXPECT_EQ(q[h][0].peer_ip, host_ip(0));
    EXPECT_EQ(q[h][0].messages, 7u);
    qpns.insert(q[h][0].qpn);
  }
  EXPECT_EQ(qpns.size(), 4u);
  EXPECT_TRUE(q[0].empty()) << "the receiver listens";
}

TEST(Traffic, AFlowSizeCdfIsReadInterpolatedAndOffersItsLoad) {
  const nic::FlowSizeCdf c = read_cdf_file(temp_file("a.cdf", "# percent, as HPCC's files\n0 0\n1000 50\n\n3000 100  # top\n"));
  ASSERT_EQ(c.points.size(), 3u);
  EXPECT_DOUBLE_EQ(c.points[1].second, 0.5);
  EXPECT_DOUBLE_EQ(c.mean(), 0.5 * 500 + 0.5 * 2000);
  EXPECT_EQ(c.draw(0.25), 500u);
  EXPECT_EQ(c.draw(0.75), 2000u);
  EXPECT_LE(c.draw(0.1), c.draw(0.2));
  // Open-loop arrivals over 1 s at 30 % of 10 Gb/s: the offered bytes within 5 %, the same for
  // the same seed, and no host sending to itself.
  std::vector<nic::QpSpec> q[4];
  std::vector<nic::Endpoint> eps;
  for (uint8_t h = 0; h < 4; ++h) eps.push_back({host_ip(h), 10, &q[h]});
  TrafficSpec s;
  s.pattern = Pattern::Cdf;
  s.cdf = c;
  s.load = 0.3;
  s.duration_ns = 1'000'000'000;
  s.seed = 9;
  nic::expand_traffic(s, 1, eps);
  for (uint8_t h = 0; h < 4; ++h) {
    uint64_t bytes = 0;
    for (auto& x : q[h]) {
      EXPECT_NE(x.peer_ip, host_ip(h));
      EXPECT_EQ(x.messages, x.sizes.size());
      EXPECT_TRUE(std::is_sorted(x.post_at_ns.begin(), x.post_at_ns.end()));
      for (uint32_t b : x.sizes) bytes += b;
    }
    EXPECT_NEAR(static_cast<double>(bytes), 0.3 * 10e9 / 8, 0.05 * 0.3 * 10e9 / 8) << "host " << int(h);
  }
  std::vector<nic::QpSpec> again[4];
  std::vector<nic::Endpoint> eps2;
  for (uint8_t h = 0; h < 4; ++h) eps2.push_back({host_ip(h), 10, &again[h]});
  nic::expand_traffic(s, 1, eps2);
  EXPECT_TRUE(again[2] == q[2]);
}

TEST(Traffic, TheLoaderRefusesBadPatternsNamingTheCdfFilesLine) {
  const std::string ports = "ports:\n  - {name: a, host: {ip: 10.0.0.2, mac: \"02:00:00:00:00:aa\"}}\n"
                            "  - {name: b, host: {ip: 10.0.1.2, mac: \"02:00:00:00:00:bb\"}}\n";
  const std::string bad = temp_file("bad.cdf", "0 0\n100 0.5\n50 0.7\n200 1\n");
  try {
    load_config_text(ports + "traffic: [{pattern: cdf, hosts: [a, b], cdf_file: " + bad + ", duration_s: 0.01}]\n", "t.yaml");
    ADD_FAILURE() << "a non-monotonic CDF was accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.file, bad);
    EXPECT_EQ(e.line, 3);
    EXPECT_EQ(e.path, "traffic[0].cdf_file");
    EXPECT_NE(e.reason.find("not monotonic"), std::string::npos) << e.reason;
  }
  auto refused = [&](const std::string& y, const std::string& what) {
    try {
      load_config_text(ports + y, "t.yaml");
      ADD_FAILURE() << "accepted: " << y;
    } catch (const std::exception& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  refused("traffic: [{pattern: shuffle, hosts: [a, b]}]\n", "traffic[0].pattern");
  refused("traffic: [{pattern: incast, hosts: [a], receiver: a}]\n", "the receiver is one of the senders");
  refused("traffic: [{pattern: permutation, hosts: [a]}]\n", "two hosts at least");
  refused("traffic: [{pattern: cdf, hosts: [a, b], duration_s: 1}]\n", "traffic[0].cdf_file: missing");
  refused("traffic: [{pattern: incast, hosts: [a], receiver: b, load: 0.5}]\n", "only a cdf pattern has it");
  refused("traffic: [{pattern: permutation, hosts: [a, b], message_bytes: 0}]\n", "traffic[0].message_bytes");
  const SwitchConfig ok = load_config_text(ports + "traffic: [{pattern: incast, hosts: [a], receiver: b, messages: 3}]\n", "t.yaml");
  ASSERT_EQ(ok.ports[0].host.qps.size(), 1u);
  EXPECT_TRUE(ok.ports[1].host.nic.enabled);
}

TEST(Traffic, APermutationOnASwitchCompletes) {
  Net n;
  for (int h = 0; h < 4; ++h) n.add_host(10);
  std::vector<nic::Endpoint> eps;
  for (uint8_t h = 0; h < 4; ++h) {
    n.cfg.ports[h].host.nic.enabled = true;
    n.cfg.ports[h].host.nic.rc.mtu = 1024;
    eps.push_back({n.cfg.ports[h].host.ip, 10, &n.cfg.ports[h].host.qps});
  }
  TrafficSpec s;
  s.pattern = Pattern::Permutation;
  s.messages = 20;
  s.depth = 4;
  nic::expand_traffic(s, 1, eps);
  Switch sw(n.cfg, kT0);
  for (uint64_t t = kT0; t < kT0 + 10 * kMs; t += 2 * kUs) sw.poll_all(t);
  const nlohmann::json j = stats_json(sw);
  for (int h = 0; h < 4; ++h)
    for (const auto& q : j["ports"][h]["host"]["nic"]["qps"])
      if (q["role"] == "requester") {
        EXPECT_EQ(q["messages_done"], 20) << q.dump();
      }
  sw.shutdown(kT0 + 10 * kMs);
  EXPECT_TRUE(sw.totals().balanced());
}

}  // namespace
}  // namespace rs::test
