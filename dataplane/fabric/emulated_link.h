// An emulated cable between two switch ports of a fabric, carried in-process (no ethdev, so a
// fabric is not bounded by RTE_MAX_ETHPORTS). Each direction serialises the frames it is given at
// the link rate with Ethernet's wire overhead (preamble, FCS, inter-frame gap), one after the
// other, adds the propagation delay, and hands each frame to the far port's rx once the clock
// reaches its arrival. PFC frames travel as any frame, so a pause goes hop by hop as on a real
// fabric. A direction may lose frames at a configured rate (a seeded draw per frame), and the
// whole link can be cut and restored: while it is down both ends lose carrier (the switches'
// link monitors see it) and frames sent into it are lost, counted.
//
// A direction is a single-producer single-consumer ring: the two switches may be polled by
// different threads. Frames arrive in the order they were sent, each with its arrival time, so
// what a port receives at a given time does not depend on when its thread looked.
#pragma once
#include <nlohmann/json.hpp>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "dataplane/core/counter.h"
#include "dataplane/core/rng.h"
#include "dataplane/ports/port.h"

namespace rs {

struct LinkParams {
  double gbps = 100;
  uint64_t delay_ns = 0;   // propagation (5 ns a metre of fibre)
  double loss = 0;         // probability that a frame is lost, each direction
  uint64_t seed = 1;
  uint32_t capacity = 4096;  // frames in flight per direction (a power of two)
};

class EmulatedLink {
 public:
  // Throws std::runtime_error when the rings cannot be made.
  EmulatedLink(const std::string& name, const LinkParams& p);
  ~EmulatedLink();
  EmulatedLink(const EmulatedLink&) = delete;
  EmulatedLink& operator=(const EmulatedLink&) = delete;

  // The port object of side 0 or 1, for the switch that adopts it (each side once). The link
  // must outlive both switches' use of it.
  std::unique_ptr<Port> make_end(int side);

  // The control thread: cut or restore the cable (both directions).
  void set_up(bool up) { up_.store(up, std::memory_order_relaxed); }
  bool up() const { return up_.load(std::memory_order_relaxed); }
  const std::string& name() const { return name_; }
  const LinkParams& params() const { return p_; }
  // The earliest arrival on the cable, either direction (UINT64_MAX: none). Only from the
  // thread that polls both ends (it may take a frame off the ring to read its time).
  uint64_t next_arrival_ns();
  // Frames on the cable now (sent, not yet received), both directions; any thread.
  uint64_t in_flight() const;
  uint64_t lost() const;  // both directions, loss rate and cuts
  // Per direction (`dir` is the sending side): frames and bytes sent, received, lost.
  void stats(nlohmann::json& j) const;

 private:
  friend class LinkEnd;
  struct Item {
    rte_mbuf* m;
    uint64_t arrival_ns;
  };
  struct alignas(64) Direction {
    rte_ring* ring = nullptr;
    // The sender's side.
    double busy_until_ns = 0;  // when the last frame's last bit leaves
    FastRng rng;
    Counter sent, sent_bytes, lost, lost_down;
    // The receiver's side: the first frame not yet due, taken off the ring.
    Item head{nullptr, 0};
    Counter received, received_bytes;
  };
  uint16_t send(int side, rte_mbuf** pkts, uint16_t n, uint64_t now_ns);
  uint16_t receive(int side, rte_mbuf** pkts, uint16_t n, uint64_t now_ns);

  std::string name_;
  LinkParams p_;
  double ns_per_byte_;
  std::atomic<bool> up_{true};
  Direction dir_[2];  // dir_[s]: what side s sends
};

}  // namespace rs
