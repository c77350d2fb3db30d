// What a stage may touch while processing a burst: the worker's counters, the current FIB
// snapshot, the time, and the egress side of the traffic manager. The framework only forward-
// declares the switch's types: core/ knows none of them.
#pragma once
#include <rte_ether.h>
#include <rte_mbuf.h>

#include <cstdint>

#include "dataplane/core/burst.h"
#include "dataplane/core/packet_meta.h"
#include "dataplane/core/rng.h"
#include "dataplane/core/trace.h"
#include "dataplane/core/types.h"
#include "dataplane/core/worker_counters.h"

struct rte_ring;

namespace rs {

class Fib;
class EgressPort;
class SharedBuffer;
class LoadView;
class TcQueueMap;
class CaptureTap;
class PortMirror;
struct NexthopCounters;
struct VlanTable;
struct GcraRate;
class Fdb;

struct WorkerContext {
  uint16_t worker = 0;
  uint16_t rx_port = 0;  // the port the burst being run through the pipeline came in on
  uint16_t node = 0;     // the pipeline node running (for its trace records)
  uint8_t step = 0;      // and, in a chain node, which of its stages
  bool tracing = false;  // some packet of the burst being run is traced
  uint64_t now_ns = 0;
  const Fib* fib = nullptr;
  const TcQueueMap* classify = nullptr;         // the published QoS maps (null: the stage's own)
  WorkerCounters* counters = nullptr;
  const LoadView* load = nullptr;               // egress load and link state, for routing
  NexthopCounters* nexthop_counters = nullptr;  // per next hop (group member): packets, bytes
  const rte_ether_addr* port_mac = nullptr;     // indexed by port id
  const uint8_t* port_owner = nullptr;          // port id -> worker owning its egress
  uint16_t num_ports = 0;
  EgressPort* const* egress = nullptr;          // port id -> egress when owned here, else null
  Burst* handoff = nullptr;                     // per destination worker, flushed per burst
  FastRng rng;                                  // WRED/ECN draws; seeded per worker
  SharedBuffer* sb = nullptr;                   // set when some PG is lossless
  Tracer* tracer = nullptr;                     // per worker; null: tracing impossible
  CaptureTap* tap = nullptr;                    // port captures (ports/capture_tap.h); null: none
  PortMirror* mirror = nullptr;                 // mirror sessions (ports/port_mirror.h); null: none
  rte_ring* const* outbox = nullptr;            // per destination worker: the handoff rings
  // The control plane's packets (the punt stage): the ring to it, null when the switch has no
  // addresses of its own (the `arp` and `local` edges are then not taken: their packets drop as
  // they did before, non_ip, ttl_expired, no_route); the ports whose no-route packets it answers
  // with ICMP destination unreachable, one bit a port.
  rte_ring* punt = nullptr;
  uint64_t unreachable_ports = 0;
  const GcraRate* copp_rate = nullptr;  // the punt stage's policers, by CoppClass (null: its own)
  // The bridge (stages/bridge.h): VLAN membership and the FDB, null when the switch has no VLANs.
  const VlanTable* vlans = nullptr;
  Fdb* fdb = nullptr;
  // The traffic classes whose priority is lossless: bit t when PG tc_to_pg[t] is in pfc_enable
  // (fixed at start-up, as the buffer's PG accounting is); 0 when no priority is.
  uint8_t lossless_tcs = 0;

  // How a packet leaves the switch without being sent: counted, then freed. This one for a
  // queue's drops (the queue counts them by class too) and packets with no class yet;
  // drop_before_queue for the others.
  void drop(rte_mbuf* m, DropReason r, uint16_t port) {
    count_drop(r, port);
    rte_pktmbuf_free(m);
  }
  // The count alone, for a caller that frees a burst's drops together.
  void count_drop(DropReason r, uint16_t port) {
    if (port < kMaxPorts) counters->port_drops[port][static_cast<std::size_t>(r)].inc();
  }
  // A drop before any egress queue holds the packet, of a packet with a class (what the
  // pipeline drops for a reason drop_before_class() names has none). Counted as drop()
  // counts, and once more when the class is lossless: Switch::lossless_drops reads what the
  // queues count by queue, which misses every lossless packet lost on its way to one.
  void drop_before_queue(rte_mbuf* m, DropReason r, uint16_t port) {
    count_before_queue(meta(m), r, port);
    rte_pktmbuf_free(m);
  }
  void count_before_queue(const PacketMeta& pm, DropReason r, uint16_t port) {
    count_drop(r, port);
    if (lossless_class(pm) && port < kMaxPorts) [[unlikely]]
      counters->lossless_before_queue[port].inc();
  }
  // Lossless as the buffer tells it (SharedBuffer::pg_of, meta_flag::kNoPg): the packet's PG
  // is a pfc_enable priority, and it is not a mirror copy or the control plane's packet
  // (lossy whatever their class).
  bool lossless_class(const PacketMeta& pm) const {
    return ((lossless_tcs >> (pm.tc & 7)) & 1) && !(pm.flags & meta_flag::kNoPg);
  }
  // A stage's trace record for one packet (only from a stage's traced body).
  void trace(const PacketMeta& pm, uint8_t edge, uint64_t a = 0, uint64_t b = 0) {
    if (pm.trace) tracer->add(pm.trace, node, edge, pm.drop_reason, a, b, step);
  }
};

}  // namespace rs
