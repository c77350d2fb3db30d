// The switch: ports, egress traffic managers, workers and the FIB, built from a SwitchConfig.
// Deterministic when stepped with poll(worker, now) from one thread; run() puts each worker
// on its own lcore for production.
#pragma once
#include <rte_mempool.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "dataplane/core/rcu_snapshot.h"
#include "dataplane/stages/classify.h"
#include "dataplane/switch/fib_writer.h"
#include "dataplane/switch/local_path.h"
#include "dataplane/tables/fdb.h"
#include "dataplane/tables/vlan_table.h"
#include "dataplane/switch/switch_config.h"
#include "dataplane/switch/worker.h"
#include "dataplane/ports/capture_tap.h"
#include "dataplane/ports/port_mirror.h"
#include "dataplane/ports/port.h"
#include "dataplane/routing/routing_policy.h"
#include "dataplane/tm/queue/egress_port.h"

struct rte_rcu_qsbr;

namespace rs {

struct SwitchTotals {
  uint64_t received = 0;  // packets in, all ports
  uint64_t sent = 0;
  uint64_t queued = 0;     // in egress queues now
  uint64_t in_flight = 0;  // between workers now (in their rings, or held for a full one)
  uint64_t dropped = 0;    // every drop counter summed
  uint64_t mirrored = 0;   // mirror copies made: packets the switch created
  uint64_t originated = 0; // frames the control plane made (ARP, ND, ICMP)
  uint64_t held = 0;       // packets the control plane holds while their next hop is resolved
  uint64_t replicated = 0; // copies the bridge made to flood a frame to several ports
  bool balanced() const {
    return received + mirrored + originated + replicated == sent + queued + in_flight + dropped + held;
  }
};

class Switch {
 public:
  // Builds everything or throws std::runtime_error; nothing is left half-built.
  Switch(const SwitchConfig& cfg, uint64_t now_ns);
  ~Switch();
  Switch(const Switch&) = delete;
  Switch& operator=(const Switch&) = delete;

  void poll(uint16_t worker, uint64_t now_ns) { workers_[worker]->poll(now_ns); }
  void poll_all(uint64_t now_ns) {
    poll_links(now_ns);
    for (auto& w : workers_) w->poll(now_ns);
  }
  // The link monitor: applies the scheduled link events due by now and reads each port's
  // carrier, then publishes link state in the load view, which every worker reads on its next
  // poll (fast failover, no table rebuilt). Called from one control thread (main's loop, or
  // poll_all when stepped).
  void poll_links(uint64_t now_ns);
  // After the workers stopped: drain the handoff rings into the queues, then count whatever is
  // still queued as dropped (reason shutdown_flush) so the books balance.
  void shutdown(uint64_t now_ns);

  // RCU: the control plane changes the FIB through its writer, which publishes each change as a
  // new snapshot with one pointer store (no route table copied); the old snapshot is freed by
  // reclaim() once every worker has passed a quiescent state.
  FibWriter& fib_writer() { return *writer_; }
  // Stepped (a fabric on virtual time): between two polls no worker holds a table, so a control
  // plane that runs between steps reports the workers' quiescent states for them, and its
  // commit never waits for a poll.
  void quiesce_stepped();
  // New QoS maps (P4 dscp_to_tc, pcp_to_tc, tc_to_queue; trust, CNP queue) for every worker's
  // next loop, published as the FIB is. The lossless mapping (PGs, PFC) stays as configured.
  void publish_qos(const QosMaps& maps);
  const QosMaps& qos() const { return qos_; }
  // Port captures: the control thread turns taps on and drains the copies (ports/capture_tap.h).
  CaptureTap& tap() { return *tap_; }
  // Mirror sessions (ports/port_mirror.h): the control thread sets each port side's target,
  // seen by the workers on their next burst. Configured sessions are set at start.
  PortMirror& mirror() { return *mirror_; }
  const PortMirror& mirror() const { return *mirror_; }
  // Run-time port and buffer settings (the control plane's port.set and buffer.set): `next` is
  // the running configuration with new egress settings (speed, queue limits, scheduler,
  // weights), lossless settings (PG thresholds and headroom, queue profiles, WRED/ECN, PFC
  // quanta), pool size and PFC watchdog. The shared buffer's new split and PG table are
  // published under RCU, each port's queue half is offered to its owner worker, which takes it
  // between bursts; returns once every owner has (calling `wait` meanwhile: a stepped switch's
  // polls). What the packets in the buffer were accounted by (cell size, which PGs are
  // lossless) is set at start-up. Throws std::runtime_error, changing nothing, when the
  // buffer's reservations do not fit in the pool.
  void reconfigure_ports(const SwitchConfig& next, const std::function<void()>& wait);
  // Run-time settings of the switch as a host on its links (the control plane's port.set
  // addresses, icmp_unreachable, lldp, vlan, and system.set): `next` is the running
  // configuration with new values of what copy_host_settings copies. The workers' part is
  // published under RCU: the CoPP policers and the ICMP unreachable ports (PuntPolicy), and
  // when it changed the VLAN table, after which the FDB forgets what a port learned in a VLAN
  // it left. The rest is read by the control thread (control/local), which sees
  // host_generation() move. The routes the addresses make are the FIB's, changed by the caller.
  void set_host_settings(const SwitchConfig& next);
  uint64_t host_generation() const { return host_generation_; }
  // Housekeeping on the control thread: frees the snapshots no worker sees any more and brings
  // the spare route bank up to date.
  void reclaim() {
    fib_.reclaim();
    classify_.reclaim();
    port_macs_.reclaim();
    punt_policy_.reclaim();
    vlans_.reclaim();
    sb_->reclaim();
    writer_->catch_up();
  }
  // The bridge's FDB (tables/fdb.h) and VLANs: null when the switch has no VLANs. The link
  // monitor (poll_links) learns, ages and flushes it.
  const Fdb* fdb() const { return fdb_.get(); }
  const VlanTable* vlans() const { return vlans_.load(); }
  // The control plane's packets (switch/local_path.h): null when no port has an address.
  LocalPath* local() { return local_.get(); }
  const LocalPath* local() const { return local_.get(); }
  // Administrative link state (the control plane's `port down`); the link monitor applies it on
  // its next poll, as it applies a scheduled link event.
  void set_admin(std::size_t port, bool up) { admin_up_[port] = up; }
  bool admin_up(std::size_t port) const { return admin_up_[port]; }

  // Per-packet trace (core/trace.h): every worker traces the next `first` packets it
  // receives, then 1 in `every`. Before the workers start, or while they are stopped.
  void set_trace(uint32_t first, uint32_t every);
  // What the workers traced, as text (Pipeline::format_trace), worker by worker: while they
  // are stopped, or once trace_ready().
  std::string trace_text() const;
  // The same while the workers run (the control plane's `trace`): every worker restarts its
  // trace on its next poll; trace_ready() is true once each has done so and stopped writing
  // (its first N traced and no 1-in-K asked, or its buffer full). stop_trace() ends one and
  // keeps what it traced.
  void request_trace(uint32_t first, uint32_t every) { trace_request(first, every, false); }
  void stop_trace() { trace_request(0, 0, true); }
  bool trace_ready() const;
  void trace_request(uint32_t first, uint32_t every, bool keep);

  SwitchTotals totals() const;
  // Drops of lossless-class packets (queues a pfc_enable priority maps to, and packets of a
  // pfc_enable priority lost before a queue), shutdown aside.
  uint64_t lossless_drops() const;
  // The part lost before a queue (no route, no live member, a full handoff ring...), by the
  // port the drop is charged to, and summed.
  uint64_t lossless_drops_before_queue(std::size_t port) const;
  uint64_t lossless_drops_before_queue() const;

  uint16_t num_workers() const { return static_cast<uint16_t>(workers_.size()); }
  std::size_t num_ports() const { return ports_.size(); }
  Port& port(std::size_t i) { return *ports_[i]; }
  const Port& port(std::size_t i) const { return *ports_[i]; }
  const EgressPort& egress(std::size_t i) const { return *egress_[i]; }
  const SharedBuffer& buffer() const { return *sb_; }
  const Worker& worker(uint16_t w) const { return *workers_[w]; }
  Worker& worker(uint16_t w) { return *workers_[w]; }  // to poll one alone (tests, a stepped fabric)
  const Pipeline& pipeline(uint16_t worker) const { return workers_[worker]->pipeline; }
  const Fib& fib() const { return *fib_.load(); }
  const LoadView& load() const { return load_; }
  uint64_t link_down_events(std::size_t port) const { return link_down_events_[port].get(); }
  // Summed over the workers: what was sent to a next hop (a group member).
  uint64_t nexthop_packets(uint32_t nh) const;
  uint64_t nexthop_bytes(uint32_t nh) const;
  // A group's policy counter (choice c, counter k), summed over the workers' instances.
  uint64_t policy_counter(uint32_t group, uint8_t choice, std::size_t k) const;
  rte_mempool* pool() const { return pool_; }
  const SwitchConfig& config() const { return cfg_; }
  uint64_t rx_packets(std::size_t port) const;
  uint64_t tx_packets(std::size_t port) const;
  uint64_t tx_bytes(std::size_t port) const;
  uint64_t rx_bytes(std::size_t port) const;
  uint64_t drops(std::size_t port, DropReason r) const;
  uint64_t drops(DropReason r) const;

 private:
  SwitchConfig cfg_;
  rte_mempool* pool_ = nullptr;
  std::unique_ptr<SharedBuffer> sb_;
  std::vector<std::unique_ptr<Port>> ports_;
  std::vector<std::unique_ptr<EgressPort>> egress_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<rte_ring*> rings_;
  RcuSnapshot<PuntPolicy> punt_policy_;  // CoPP and ICMP unreachable, when local_ is
  uint64_t host_generation_ = 0;
  RcuSnapshot<PortMacs> port_macs_;  // table port_mac: each port's source MAC, published as the FIB is
  uint8_t port_owner_[kMaxPorts]{};
  LoadView load_;
  uint64_t start_ns_ = 0;
  std::size_t next_event_ = 0;       // cfg_.link_events before it have been applied
  bool admin_up_[kMaxPorts]{};       // config and scheduled events
  Counter link_down_events_[kMaxPorts];
  rte_rcu_qsbr* qsbr_ = nullptr;
  RcuSnapshot<Fib> fib_;
  std::unique_ptr<FibWriter> writer_;
  RcuSnapshot<TcQueueMap> classify_;
  std::unique_ptr<CaptureTap> tap_;
  std::unique_ptr<PortMirror> mirror_;
  std::unique_ptr<LocalPath> local_;
  RcuSnapshot<VlanTable> vlans_;  // when fdb_ is
  std::unique_ptr<Fdb> fdb_;
  QosMaps qos_;  // what classify_ was compiled from
};

}  // namespace rs
