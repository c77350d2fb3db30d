// PFC generation for one port (802.1Qbb, the ingress side): when a lossless priority group's
// bytes in the switch reach XOFF it sends PAUSE for that priority out of this port, refreshes
// it at half the pause time while the PG stays at or above XON, and sends time 0 (XON) once
// it falls under XON. Owned by the port's worker; frames bypass the egress queues as MAC
// control frames do on a real MAC.
#pragma once
#include <rte_ether.h>
#include <rte_mempool.h>

#include <array>
#include <cstdint>

#include "dataplane/core/counter.h"

namespace rs {

class Port;
class SharedBuffer;

struct PfcGenCounters {
  std::array<Counter, 8> xoff_sent;  // frames carrying XOFF (incl. refreshes) per priority
  std::array<Counter, 8> xon_sent;   // frames carrying XON per priority
  std::array<Counter, 8> assert_ns;  // time spent asserting pause, closed intervals
  Counter frames;                    // PFC frames put on the wire
  Counter tx_fail;                   // no mbuf or the port refused; retried next loop
};

class PfcGenerator {
 public:
  void configure(uint16_t port, Port* out, rte_mempool* pool, double speed_gbps, uint16_t quanta);
  // A run-time change of the link rate or of the pause time asked for (owner thread).
  void set_timing(double speed_gbps, uint16_t quanta);
  void set_source(const rte_ether_addr& mac) { src_ = mac; }  // the port's MAC changed (owner thread)

  // Looks at every lossless PG of the port and sends at most one frame for all that changed.
  // Returns true when a frame went out.
  bool evaluate(const SharedBuffer& sb, uint64_t now);
  // Fast check after a lossless enqueue: only the XOFF edge of one PG is urgent.
  bool needs_xoff(uint8_t pg, uint64_t level, uint64_t xoff) const {
    return !(asserted_ & (1u << pg)) && !(suppressed_ & (1u << pg)) && level >= xoff;
  }
  // PFC watchdog (drop): stop asking the peer to pause these PGs; an asserted one gets XON.
  void set_suppressed(uint8_t mask, uint64_t now);

  uint8_t asserted() const { return asserted_; }  // owner thread
  uint8_t asserted_published() const { return static_cast<uint8_t>(asserted_pub_.get()); }
  uint64_t refresh_ns() const { return refresh_ns_; }
  const PfcGenCounters& counters() const { return c_; }

 private:
  rte_ether_addr src_{};  // our frames' source: the port's MAC
  bool send(uint8_t xoff_bits, uint8_t xon_bits, uint64_t now);

  uint16_t port_id_ = 0;
  Port* out_ = nullptr;
  rte_mempool* pool_ = nullptr;
  uint16_t quanta_ = 0xffff;
  uint64_t refresh_ns_ = 0;
  uint8_t asserted_ = 0;
  uint8_t suppressed_ = 0;
  std::array<uint64_t, 8> last_sent_{};
  std::array<uint64_t, 8> since_{};  // start of the current assertion, per PG
  Counter asserted_pub_;             // asserted_ as readers see it
  PfcGenCounters c_;
};

}  // namespace rs
