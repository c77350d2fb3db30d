// What the EgressPort tests (tm/egress_port, tm/egress_port_pfc, tm/shared_buffer) share: a
// fixture that owns the worker context, the shared buffer and one egress port transmitting
// into a FakePort that records what it sent, and checks that every mbuf came back.
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "dataplane/tm/buffer/shared_buffer.h"
#include "dataplane/tm/queue/egress_port.h"
#include "tests/support/constants.h"
#include "tests/support/eal_env.h"
#include "tests/support/fake_port.h"
#include "tests/support/packet_builder.h"

namespace rs::test {

// One egress port under test, transmitting into `fake`. TearDown flushes the port, runs the
// suite's after_flush() checks, destroys the port and checks that every mbuf the test took is
// back in the pool: nothing in the egress port leaks.
class EgressFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    counters = std::make_unique<WorkerCounters>();
    ctx.counters = counters.get();
    avail_at_start = rte_mempool_avail_count(test_pool());
  }
  void TearDown() override {
    if (port) port->flush(ctx, DropReason::Shutdown);
    after_flush();
    port.reset();
    EXPECT_EQ(rte_mempool_avail_count(test_pool()), avail_at_start);
  }
  // A suite's checks once the queues are empty, while the port and buffer still exist.
  virtual void after_flush() {}

  // `port_id` in a switch of `ports` ports that all have `lc`, over a SharedBuffer built from
  // `mc` for one worker (the owner, worker 0).
  void make_over_buffer(uint16_t port_id, const MmuConfig& mc, uint16_t ports, const PortLosslessConfig& lc,
                        const EgressConfig& ec, uint64_t static_limits = 0, bool any_dynamic = false) {
    sb = std::make_unique<SharedBuffer>(mc, std::vector<PortLosslessConfig>(ports, lc), 1, static_limits, any_dynamic);
    port = std::make_unique<EgressPort>(port_id, &fake, ec, 0, sb.get(), 0, lc, test_pool());
  }

  uint64_t queue_drops(int q, DropReason r) const { return port->queue(q).drops[static_cast<std::size_t>(r)].get(); }

  FakePort fake;
  std::unique_ptr<WorkerCounters> counters;
  WorkerContext ctx;
  std::unique_ptr<SharedBuffer> sb;
  std::unique_ptr<EgressPort> port;
  unsigned avail_at_start = 0;
};

}  // namespace rs::test
