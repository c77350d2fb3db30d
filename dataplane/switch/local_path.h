// The switch's side of its control plane's packets (grout's control_output / control_input):
// each worker's punt stage puts what is for the control plane on that worker's punt ring; the
// control thread takes them, answers, and sends its own frames (ARP replies, ICMP, probes) and
// the packets it held while resolving a next hop through the inject ring of the worker that
// owns the port, which drains it into the port's queues as it drains its handoff rings. Rings
// are single-producer single-consumer: one worker and the control thread at their two ends.
// What the control thread drops or delivers is counted here, beside the workers' counters, so
// the books balance: received + mirrored + originated = sent + queued + in flight + dropped +
// held.
#pragma once
#include <rte_mbuf.h>
#include <rte_ring.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "dataplane/core/counter.h"
#include "dataplane/core/worker_counters.h"

namespace rs {

class LocalPath {
 public:
  static constexpr unsigned kRingSize = 1024;

  LocalPath(uint16_t workers, const uint8_t* port_owner, uint16_t num_ports, rte_mempool* pool);
  ~LocalPath();
  LocalPath(const LocalPath&) = delete;
  LocalPath& operator=(const LocalPath&) = delete;

  rte_ring* punt_ring(uint16_t worker) const { return punt_[worker]; }
  rte_ring* inject_ring(uint16_t worker) const { return inject_[worker]; }

  // Control thread. Punted packets, from every worker's ring in turn.
  unsigned take(rte_mbuf** pkts, unsigned max);
  // An mbuf for a frame the switch makes; null when the pool is empty (counted).
  rte_mbuf* alloc();
  // Queues `m` on `port`'s queue `queue`: lossy, charged to no PG. `made`: a frame the switch
  // made (counted as originated), else a packet it held. False when the owner's ring is full:
  // `m` is then dropped and counted (local_tx_full).
  bool send(rte_mbuf* m, uint16_t port, uint8_t queue, bool made);
  // The end of a punted packet on the control thread: counted under `r` on its ingress port
  // (local_delivered for what the switch answered or took), and freed.
  void drop(rte_mbuf* m, DropReason r);
  // A punted packet kept (a neighbour's hold queue) or let go again (sent or dropped after).
  void held(int64_t n) { n >= 0 ? held_.add(static_cast<uint64_t>(n)) : held_.sub(static_cast<uint64_t>(-n)); }

  // Any thread: the control thread's counters.
  uint64_t originated() const { return originated_.get(); }
  uint64_t held_now() const { return held_.get(); }
  uint64_t no_mbuf() const { return no_mbuf_.get(); }
  uint64_t in_flight() const;  // in punt and inject rings
  uint64_t drops(std::size_t port, DropReason r) const { return counters_.port_drops[port][static_cast<std::size_t>(r)].get(); }

  // After the workers stopped: what is still on a punt ring was never answered (shutdown_flush).
  void flush_punted();

 private:
  uint16_t workers_;
  const uint8_t* port_owner_;
  uint16_t num_ports_;
  rte_mempool* pool_;
  std::vector<rte_ring*> punt_, inject_;
  uint16_t next_ = 0;  // the punt ring take() starts at
  std::unique_ptr<WorkerCounters> counters_holder_ = std::make_unique<WorkerCounters>();
  WorkerCounters& counters_ = *counters_holder_;
  Counter originated_, held_, no_mbuf_;
};

}  // namespace rs
