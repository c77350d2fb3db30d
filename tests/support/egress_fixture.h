// What the EgressPort tests (queues/egress_port, queues/egress_port_pfc, mmu/shared_buffer)
// share: a port that records what the egress port transmits, a fixture that owns the worker
// context, the shared buffer and the port and checks that every mbuf came back, and the
// RoCE-shaped packet the MMU tests enqueue.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "dataplane/io/port.h"
#include "dataplane/mmu/shared_buffer.h"
#include "dataplane/queues/egress_port.h"
#include "dataplane/queues/shaper.h"
#include "tests/support/eal_env.h"
#include "tests/support/packet_builder.h"

namespace rs::test {

// Records what the egress port transmits (data and MAC control alike) and frees it; `accept`
// caps how many packets one tx_burst takes, to play a full TX ring.
class RecordingPort final : public Port {
 public:
  struct Sent {
    uint32_t len;
    uint8_t queue;
    uint64_t at_ns;
  };
  uint16_t rx_burst(rte_mbuf**, uint16_t, uint64_t) override { return 0; }
  uint16_t tx_burst(rte_mbuf** pkts, uint16_t n, uint64_t now_ns) override {
    ++calls;
    offered += n;
    const uint16_t take = std::min<uint16_t>(n, accept);
    for (uint16_t i = 0; i < take; ++i) {
      sent.push_back({pkts[i]->pkt_len, meta(pkts[i]).queue, now_ns});
      wire += wire_bytes(pkts[i]->pkt_len);
      rte_pktmbuf_free(pkts[i]);
    }
    return take;
  }
  const char* kind() const override { return "fake"; }

  // When queue `q` first sent (UINT64_MAX if never), and how many packets it sent.
  uint64_t first_of(uint8_t q) const {
    for (auto& s : sent)
      if (s.queue == q) return s.at_ns;
    return UINT64_MAX;
  }
  std::size_t count_of(uint8_t q) const {
    return static_cast<std::size_t>(std::count_if(sent.begin(), sent.end(), [q](const Sent& s) { return s.queue == q; }));
  }

  uint16_t accept = 0xFFFF;
  std::vector<Sent> sent;
  uint64_t wire = 0;
  uint64_t offered = 0;
  uint64_t calls = 0;
};

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

  RecordingPort fake;
  std::unique_ptr<WorkerCounters> counters;
  WorkerContext ctx;
  std::unique_ptr<SharedBuffer> sb;
  std::unique_ptr<EgressPort> port;
  unsigned avail_at_start = 0;
};

// A RoCE-shaped IPv4/UDP/BTH packet from `in_port` as the ingress stages hand it to egress
// port `out_port`: queue = tc = `q`, and the IPv4 ECN field `ecn` in the metadata too.
inline rte_mbuf* roce_to_queue(uint16_t in_port, uint16_t out_port, uint8_t q, uint8_t dscp, uint8_t ecn,
                               uint32_t payload) {
  const PacketSpec s = Eth{} / Ipv4{.dscp = dscp, .ecn = ecn} / Udp{} / Bth{} / Payload::of_size(payload);
  rte_mbuf* m = s.mbuf(test_pool(), in_port);
  EXPECT_NE(m, nullptr);
  PacketMeta& pm = meta(m);
  pm.out_port = out_port;
  pm.queue = q;
  pm.tc = q;
  pm.l3 = L3Type::Ipv4;
  pm.l3_offset = 14;
  pm.ecn = ecn;
  return m;
}

}  // namespace rs::test
