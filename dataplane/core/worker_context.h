// What a stage may touch while processing a burst: the worker's counters, the current FIB
// snapshot, the time, and the egress side of the traffic manager.
#pragma once
#include <rte_mbuf.h>
#include <rte_ether.h>

#include <cstdint>

#include "dataplane/core/burst.h"
#include "dataplane/core/packet_meta.h"
#include "dataplane/core/types.h"
#include "dataplane/core/worker_counters.h"
#include "dataplane/policies/ecn/wred.h"

namespace rs {

class Fib;
class EgressPort;
class SharedBuffer;
class RoutingPolicy;
struct PortLoad;

struct WorkerContext {
  uint16_t worker = 0;
  uint16_t rx_port = 0;  // the port the burst being run through the pipeline came in on
  uint64_t now_ns = 0;
  const Fib* fib = nullptr;
  WorkerCounters* counters = nullptr;
  const PortLoad* load = nullptr;
  RoutingPolicy* const* policies = nullptr;     // indexed by routing policy id
  const rte_ether_addr* port_mac = nullptr;     // indexed by port id
  // Indexed by port id: the port's MAC then EtherType IPv4, bytes 6..14 of an untagged IPv4
  // frame it sends, so ipv4_fastpath writes them with one 8-byte store (see port_src_ipv4_word).
  const uint64_t* port_src_ipv4 = nullptr;
  const uint8_t* port_owner = nullptr;          // port id -> worker owning its egress
  uint16_t num_ports = 0;
  EgressPort* const* egress = nullptr;          // port id -> egress when owned here, else null
  Burst* handoff = nullptr;                     // per destination worker, flushed per burst
  FastRng rng;                                  // WRED/ECN draws; seeded per worker
  SharedBuffer* sb = nullptr;                   // set when some PG is lossless
  // A stage that knows every packet of its burst takes one edge may say so here (VPP's
  // enqueue-to-single-next), sparing the pipeline its scan of next[]. Reset before each call.
  static constexpr uint8_t kNoSingleNext = 0xFD;  // below kNextConsumed, above any stage's edges
  uint8_t single_next = kNoSingleNext;

  // The one way a packet leaves the switch without being sent: counted, then freed.
  void drop(rte_mbuf* m, DropReason r, uint16_t port) {
    if (port < kMaxPorts) counters->port_drops[port][static_cast<std::size_t>(r)].inc();
    rte_pktmbuf_free(m);
  }
};

}  // namespace rs
