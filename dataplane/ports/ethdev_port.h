// Any DPDK ethdev given by its devargs: a PCI address (mlx5 through rdma-core, ...) or a vdev
// such as net_pcap, net_ring, net_af_packet, net_tap, net_memif. One rx and one tx queue,
// polled by the worker that owns the port.
#pragma once
#include <rte_mempool.h>

#include "dataplane/ports/port.h"

namespace rs {

class EthdevPort final : public Port {
 public:
  // Probes (if needed), configures and starts the device. Throws with a reason on failure.
  EthdevPort(const std::string& devargs, rte_mempool* pool, uint16_t rx_desc = 1024, uint16_t tx_desc = 1024);
  ~EthdevPort() override;

  uint16_t rx_burst(rte_mbuf** pkts, uint16_t n, uint64_t now_ns) override;
  uint16_t tx_burst(rte_mbuf** pkts, uint16_t n, uint64_t now_ns) override;
  const char* kind() const override { return "ethdev"; }
  void stop() override;
  void stats(nlohmann::json& j) const override;
  bool carrier() const override;
  uint16_t port_id() const { return port_id_; }

 private:
  std::string devargs_;
  uint16_t port_id_ = 0;
  bool started_ = false;
  bool probed_here_ = false;
};

}  // namespace rs
