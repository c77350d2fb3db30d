// One poll-mode worker: receive bursts from its ports, walk the pipeline, drain packets other
// workers handed over, run the egress schedulers it owns, report RCU quiescence.
#pragma once
#include <rte_ring.h>

#include <atomic>
#include <memory>
#include <vector>

#include "dataplane/core/pipeline.h"
#include "dataplane/core/rcu_snapshot.h"
#include "dataplane/core/trace.h"
#include "dataplane/core/worker_context.h"
#include "dataplane/tables/fib.h"
#include "dataplane/tables/copp.h"
#include "dataplane/tables/port_macs.h"
#include "dataplane/tables/vlan_table.h"

struct rte_rcu_qsbr;

namespace rs {

class Port;
class EgressPort;

class Worker {
 public:
  static constexpr int kRxBurstsPerPoll = 6;

  Worker(uint16_t id, const PipelineSpec& spec, const StageEnv& env, uint32_t seed);

  void poll(uint64_t now_ns);

  // Wiring, done once by the Switch before the first poll.
  uint16_t id;
  std::vector<Port*> rx_ports;
  std::vector<EgressPort*> tx_ports;
  std::vector<rte_ring*> inbox;               // rings from every other worker
  rte_ring* outbox[kMaxWorkers] = {};         // rings to every other worker
  rte_ring* inject = nullptr;                 // the control plane's packets for ports owned here
  EgressPort* egress_by_port[kMaxPorts] = {};
  const RcuSnapshot<Fib>* fib = nullptr;
  const RcuSnapshot<TcQueueMap>* classify = nullptr;
  const RcuSnapshot<PortMacs>* port_macs = nullptr;
  const RcuSnapshot<PuntPolicy>* punt_policy = nullptr;  // when the switch has a control path
  const RcuSnapshot<VlanTable>* vlans = nullptr;         // when it has a bridge
  std::atomic<uint64_t> wd_poll_ns{0};  // PFC watchdog interval; 0 = off (the control plane may change it)
  rte_rcu_qsbr* qsbr = nullptr;
  WorkerCounters counters;
  Tracer tracer;  // configured by the control side between runs (Switch::set_trace), or by a request
  // A trace asked for while the worker runs (Switch::request_trace): the worker restarts its
  // tracer when `seq` moves and says when it has stopped writing records (`idle`), after
  // which the control thread may read them. One load per poll when nothing is asked.
  struct TraceRequest {
    std::atomic<uint32_t> seq{0}, first{0}, every{0};
    std::atomic<uint32_t> seen{0};
    std::atomic<bool> keep{false};  // stop tracing but keep the records (else start afresh)
    std::atomic<bool> idle{true};
  } trace_req;
  WorkerContext ctx;
  Pipeline pipeline;
  std::unique_ptr<NexthopCounters[]> nexthop_counters;  // kMaxNexthops of them

  // Packets held now (between workers, as the rings' contents are): totals() reads it while the
  // worker runs, so it is kept in an atomic the owner alone writes.
  uint32_t held_now() const { return held_now_.load(std::memory_order_relaxed); }
  // After the workers stopped: the held packets for `dest`, oldest first (Switch::shutdown).
  template <class Fn>
  void drain_held(uint16_t dest, Fn&& fn) {
    Held& h = held_[dest];
    for (uint32_t i = 0; i < h.n; ++i) fn(h.pkts[i]);
    held_now_.fetch_sub(h.n, std::memory_order_relaxed);
    h.n = 0;
  }

 private:
  // Packets whose lossless class a full handoff ring turned back, per destination worker, oldest
  // first. They stay charged to their ingress PG, so XOFF pauses their sender as an ASIC's
  // ingress buffer does, and they leave before any newer packet to that worker; only beyond
  // kHeld of them is one dropped (and counted a lossless drop).
  static constexpr uint32_t kHeld = 2048;
  struct Held {
    std::unique_ptr<rte_mbuf*[]> pkts;
    uint32_t n = 0;
  };
  void flush_handoff();
  void turn_back(uint16_t dest, rte_mbuf* m);
  Burst handoff_[kMaxWorkers];
  Held held_[kMaxWorkers];
  std::atomic<uint32_t> held_now_{0};
  uint64_t next_wd_ns_ = 0;
  uint32_t trace_seen_ = 0;
  bool trace_idle_ = true;
};

}  // namespace rs
