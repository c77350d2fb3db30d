// The fixture the EgressPort tests over a fake port share (tm/egress_port, tm/egress_port_sched,
// tm/egress_port_counters): one port with private default buffers, packets built per queue,
// transmit on the injected clock, and the packet books (in = sent + queued + dropped).
#pragma once
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>

#include "dataplane/routing/routing_policy.h"
#include "dataplane/tm/queue/egress_port.h"
#include "tests/support/egress_fixture.h"

namespace rs::test {

constexpr uint16_t kPortId = 3;

// The scheduler alone: each port gets its private default buffer (no SharedBuffer here).
class EgressPortTest : public EgressFixture {
 protected:
  void make(const EgressConfig& cfg, uint64_t now_ns = 0) {
    ctx.now_ns = now_ns;
    port = std::make_unique<EgressPort>(kPortId, &fake, cfg, now_ns);
  }

  rte_mbuf* pkt(uint32_t len, uint8_t queue) {
    rte_mbuf* m = rte_pktmbuf_alloc(test_pool());
    EXPECT_NE(m, nullptr);
    if (!m) return nullptr;
    char* p = rte_pktmbuf_append(m, static_cast<uint16_t>(len));
    EXPECT_NE(p, nullptr);
    std::memset(p, 0, len);
    meta(m) = PacketMeta{};
    meta(m).queue = queue;
    meta(m).out_port = kPortId;
    return m;
  }
  // The owner publishes queue counters once per transmit(); here, after each batch.
  void enqueue(uint32_t len, uint8_t queue, int n = 1) {
    for (int i = 0; i < n; ++i) {
      port->enqueue(pkt(len, queue), ctx);
      ++in;
    }
    port->publish_counters();
  }
  uint16_t transmit_at(uint64_t now_ns) {
    ctx.now_ns = now_ns;
    return port->transmit(ctx);
  }

  uint64_t port_drops(DropReason r) const { return counters->port_drops[kPortId][static_cast<std::size_t>(r)].get(); }
  uint64_t all_port_drops() const {
    uint64_t s = 0;
    for (std::size_t r = 0; r < kNumDropReasons; ++r) s += counters->port_drops[kPortId][r].get();
    return s;
  }
  uint64_t tx_pkts() const { return counters->port_tx_pkts[kPortId].get(); }
  // The conservation law of the traffic manager: in = sent + queued + dropped.
  void expect_balanced(const char* where) {
    EXPECT_EQ(in, tx_pkts() + port->queued_packets() + all_port_drops()) << where;
    EXPECT_EQ(tx_pkts(), fake.sent.size()) << where;
  }

  LoadView load;
  uint64_t in = 0;
};

}  // namespace rs::test
