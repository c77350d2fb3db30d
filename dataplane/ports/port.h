// A switch port: anything that can receive and transmit bursts of mbufs. DPDK ethdevs are one
// kind; emulated hosts (and later emulated fabric links) are others that need no ethdev, so a
// fabric is not limited by RTE_MAX_ETHPORTS.
#pragma once
#include <nlohmann/json.hpp>
#include <rte_ether.h>
#include <rte_mbuf.h>

#include <cstdint>
#include <string>

namespace rs {

class Port {
 public:
  virtual ~Port() = default;
  // Returns up to n received packets, owned by the caller.
  virtual uint16_t rx_burst(rte_mbuf** pkts, uint16_t n, uint64_t now_ns) = 0;
  // Takes ownership of the first `return value` packets; the caller keeps the rest. `pkts`
  // may be an egress queue's own slots (EgressPort::transmit hands them over uncopied): a
  // port must not feed packets back into a switch queue from inside tx_burst, only through a
  // ring that a later poll drains.
  virtual uint16_t tx_burst(rte_mbuf** pkts, uint16_t n, uint64_t now_ns) = 0;
  virtual const char* kind() const = 0;
  virtual void stop() {}
  // Whether the link has carrier (an ethdev's link status; emulated links are always up unless
  // the config cuts them). Read by the switch's link monitor, never by a worker.
  virtual bool carrier() const { return true; }
  // Until when the port will certainly send the switch nothing (now_ns or earlier: it may at
  // any time). An emulated fabric jumps its clock over stretches where every port is idle and
  // nothing is queued; a port that cannot tell keeps the default.
  virtual uint64_t idle_until(uint64_t now_ns) const { return now_ns; }
  // Port-kind specific figures for the stats file (emulated host flows, ethdev xstats...).
  virtual void stats(nlohmann::json&) const {}

  std::string name;
  rte_ether_addr mac{};
  double speed_gbps = 100.0;
  uint16_t id = 0;
};

}  // namespace rs
