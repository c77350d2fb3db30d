// Counters owned by one worker, cache-line aligned so workers never share a line; the stats
// reader sums them across workers.
#pragma once
#include "dataplane/core/counter.h"
#include "dataplane/core/drop_reason.h"
#include "dataplane/core/types.h"

namespace rs {

// What a worker sent to each next hop (a group member): counted where the packet is rewritten
// for it, so a member's share is visible whatever happens to the packet in the queues.
struct NexthopCounters {
  Counter pkts, bytes;
};

struct alignas(64) WorkerCounters {
  Counter port_rx_pkts[kMaxPorts];
  Counter port_rx_bytes[kMaxPorts];
  Counter port_tx_pkts[kMaxPorts];
  Counter port_tx_bytes[kMaxPorts];
  // Drops are charged to the port where they happen: the ingress port in the pipeline, the
  // egress port in the traffic manager.
  Counter port_drops[kMaxPorts][kNumDropReasons];
  // Of those, the drops of lossless-class packets before a queue held them (by the same port):
  // the queues count theirs by queue (WorkerContext::count_before_queue).
  Counter lossless_before_queue[kMaxPorts];
  Counter loops;
  Counter rx_bursts;
  Counter handoff_held;  // lossless packets a full handoff ring turned back, held to retry
  Counter flood_copies;  // packets the bridge made to flood a frame to several ports
};

}  // namespace rs
