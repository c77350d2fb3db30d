// A fault model on a port: what a bad cable, a flaky transceiver or a hung NIC does to frames,
// so tests and experiments can show what the switch does about it. It wraps any port (an
// emulated host, an ethdev, later an emulated link) and acts on frames going into the switch
// (rx), coming out of it (tx), or both:
//   drop       a frame is lost with probability `drop`;
//   corrupt    one byte of a frame is changed with probability `corrupt` (at `corrupt_offset`,
//              or anywhere); nothing checks an FCS here, so what the switch sees is what its
//              own checks (IPv4 header checksum) and the receiver's (RoCE ICRC) find;
//   duplicate  a frame arrives twice with probability `duplicate`;
//   delay      every frame is held `delay` plus a uniform draw in [0, jitter) (jitter reorders);
//   stuck      from start to stop the receiver behind the port takes nothing (the switch's queues
//              to it back up, as with a hung NIC's full ring) and sends PFC XOFF for the
//              priorities in `stuck_pfc`, as a NIC whose receive buffer never drains does: the
//              case the PFC watchdog exists for.
// Draws come from a generator seeded per port, so a stepped run is reproducible. The port has
// one owner (its worker); held frames are freed by stop(), so nothing leaks.
#pragma once
#include <rte_mempool.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "dataplane/core/counter.h"
#include "dataplane/core/rng.h"
#include "dataplane/ports/port.h"

namespace rs {

struct FaultSpec {
  static constexpr uint8_t kRx = 1;  // frames into the switch
  static constexpr uint8_t kTx = 2;  // frames out of the switch
  uint8_t direction = kRx | kTx;
  double drop = 0;
  double corrupt = 0;
  int32_t corrupt_offset = -1;  // byte offset in the frame; -1: any byte
  double duplicate = 0;
  uint64_t delay_ns = 0;
  uint64_t jitter_ns = 0;
  uint64_t stuck_start_ns = UINT64_MAX;
  uint64_t stuck_stop_ns = UINT64_MAX;
  uint8_t stuck_pfc = 0;  // bit p: XOFF priority p while stuck
  uint16_t stuck_quanta = 0xffff;

  bool any() const {
    return drop > 0 || corrupt > 0 || duplicate > 0 || delay_ns || jitter_ns || stuck_start_ns != UINT64_MAX;
  }
  bool operator==(const FaultSpec&) const = default;
};

class FaultPort final : public Port {
 public:
  // `pool` gives duplicates and XOFF frames; `seed` the port's draws.
  FaultPort(std::unique_ptr<Port> inner, const FaultSpec& spec, rte_mempool* pool, uint64_t seed);
  ~FaultPort() override;

  uint16_t rx_burst(rte_mbuf** pkts, uint16_t n, uint64_t now_ns) override;
  uint16_t tx_burst(rte_mbuf** pkts, uint16_t n, uint64_t now_ns) override;
  const char* kind() const override { return inner_->kind(); }
  void stop() override;
  bool carrier() const override { return inner_->carrier(); }
  void stats(nlohmann::json& j) const override;

  Port& inner() { return *inner_; }
  const Port& inner() const { return *inner_; }
  const FaultSpec& spec() const { return spec_; }
  bool stuck(uint64_t now_ns) const { return now_ns >= spec_.stuck_start_ns && now_ns < spec_.stuck_stop_ns; }

  // By direction (0 = rx, into the switch; 1 = tx, out of it).
  struct Counters {
    Counter dropped, corrupted, duplicated, delayed, overflow;
  };
  const Counters& counters(int dir) const { return c_[dir]; }
  uint64_t stuck_pfc_frames() const { return stuck_pfc_.get(); }
  std::size_t held(int dir) const { return held_[dir].size(); }  // the owner's thread only

  static constexpr std::size_t kHoldCapacity = 4096;  // frames held per direction (delay, duplicates)

 private:
  struct Held {
    uint64_t release_ns;
    uint64_t seq;  // frames due at the same time keep their order
    rte_mbuf* m;
  };
  // A min-heap on (release_ns, seq) in a vector reserved at construction: no allocation after.
  struct HoldQueue {
    std::vector<Held> heap;
    bool full() const { return heap.size() >= kHoldCapacity; }
    bool empty() const { return heap.empty(); }
    std::size_t size() const { return heap.size(); }
    bool due(uint64_t now) const { return !heap.empty() && heap.front().release_ns <= now; }
    void push(const Held& h);
    rte_mbuf* pop();
  };
  // Applies drop, corrupt and duplicate to one frame of direction `dir`: false when dropped.
  // A duplicate goes to the direction's hold queue, due at `release`.
  bool apply(int dir, rte_mbuf* m, uint64_t release);
  bool draw(double p) { return p > 0 && rng_.next() < static_cast<uint64_t>(p * 4294967296.0); }
  uint64_t release_at(uint64_t now) { return now + spec_.delay_ns + (spec_.jitter_ns ? rng_.next() % spec_.jitter_ns : 0); }
  void flush_tx(uint64_t now_ns);

  std::unique_ptr<Port> inner_;
  FaultSpec spec_;
  rte_mempool* pool_;
  FastRng rng_;
  HoldQueue held_[2];
  uint64_t seq_ = 0;
  uint64_t next_xoff_ns_ = 0;
  Counters c_[2];
  Counter stuck_pfc_;
};

}  // namespace rs
