// Runs one stage outside a Switch: a small world (FIB, port MACs, counters, routing policies)
// and a harness that returns the packets per next-edge, VPP/BESS style.
#pragma once
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "dataplane/core/stage.h"
#include "dataplane/routing/routing_policy.h"
#include "dataplane/switch/switch_config.h"
#include "dataplane/tables/fib.h"
#include "tests/support/eal_env.h"
#include "tests/support/packet_builder.h"

namespace rs::test {

rte_ether_addr mac(const std::string& s);

class TestWorld {
 public:
  explicit TestWorld(uint16_t ports = 4);
  // Adds a route to a one-member group (port, next-hop MAC); returns the group id.
  uint32_t route(const std::string& prefix, uint16_t port, const std::string& nh_mac);
  // Adds a route to a group of members with the named policy; returns the group id.
  uint32_t route_group(const std::string& prefix, const std::vector<std::pair<uint16_t, std::string>>& members,
                       const std::string& policy = "ecmp", uint32_t table_size = 64);
  // The same with a policy and its parameters (as a config gives them).
  uint32_t route_group(const std::string& prefix, const std::vector<std::pair<uint16_t, std::string>>& members,
                       const PolicySpec& policy, uint32_t table_size = 64);
  // Adds a route to a drop group (a blackhole); returns the group id.
  uint32_t blackhole(const std::string& prefix);

  std::unique_ptr<Fib> fib = std::make_unique<Fib>();
  rte_ether_addr port_mac[kMaxPorts]{};
  uint8_t port_owner[kMaxPorts]{};
  WorkerCounters counters;
  LoadView load;
  std::unique_ptr<NexthopCounters[]> nexthop_counters = std::make_unique<NexthopCounters[]>(kMaxNexthops);
  WorkerContext ctx;

 private:
  uint32_t route_to(const std::string& prefix, uint32_t gid);
};

// Owns the packets a stage emitted; frees them when it goes out of scope.
struct StageOutput {
  std::map<uint8_t, std::vector<rte_mbuf*>> edge;  // kNextDrop for drops
  ~StageOutput();
  StageOutput() = default;
  StageOutput(StageOutput&&) = default;
  const std::vector<rte_mbuf*>& operator[](uint8_t e) { return edge[e]; }
  std::size_t dropped() { return edge[kNextDrop].size(); }
};

template <typename T>
class StageHarness {
 public:
  explicit StageHarness(StageEnv env = {}, TestWorld* world = nullptr)
      : own_(world ? nullptr : std::make_unique<TestWorld>()), world_(world ? world : own_.get()), stage(env) {}

  StageOutput run(const std::vector<PacketSpec>& pkts, uint16_t in_port = 0) {
    std::vector<rte_mbuf*> v;
    for (auto& p : pkts) {
      rte_mbuf* m = p.mbuf(test_pool(), in_port);
      EXPECT_NE(m, nullptr) << "test pool exhausted";
      if (m) v.push_back(m);
    }
    return run_mbufs(v);
  }

  // Stages see packets in bursts of at most kBurst, as in the worker.
  StageOutput run_mbufs(const std::vector<rte_mbuf*>& pkts) {
    StageOutput out;
    world_->ctx.fib = world_->fib.get();
    for (std::size_t at = 0; at < pkts.size(); at += kBurst) {
      Burst b;
      for (std::size_t i = at; i < pkts.size() && b.n < kBurst; ++i) b.push(pkts[i]);
      uint8_t next[kBurst];
      const uint8_t whole = stage.process(b, next, world_->ctx);
      // As the pipeline reads it: one edge for the whole burst, or each packet's own in next[].
      for (uint16_t i = 0; i < b.n; ++i) {
        const uint8_t e = whole == kNextMixed ? next[i] : whole;
        if (e != kNextConsumed) out.edge[e].push_back(b.pkts[i]);
      }
    }
    return out;
  }

  uint64_t counter(std::string_view name) const {
    auto names = stage.counter_names();
    for (std::size_t i = 0; i < names.size(); ++i)
      if (names[i] == name) return stage.counters()[i].get();
    ADD_FAILURE() << "no counter " << name;
    return 0;
  }
  TestWorld& world() { return *world_; }

 private:
  std::unique_ptr<TestWorld> own_;
  TestWorld* world_;

 public:
  T stage;
};

}  // namespace rs::test
