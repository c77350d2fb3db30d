// An emulated host on a real link: its NIC's frames go out of a DPDK ethdev and what the ethdev
// receives is the host's (`ports[].kind: nic`), so one roceswitch process acts as RoCE hosts
// toward a real switch or another roceswitch, with DCQCN and go-back-N, at up to the port's
// rate. The switch does not forward for it: polled as a port, it moves frames between the host
// and the wire and hands the pipeline nothing; the switch's own frames never come to it (no
// route names it), and any that did would be freed, counted.
#pragma once
#include <memory>

#include "dataplane/emu/emulated_host.h"
#include "dataplane/ports/ethdev_port.h"

namespace rs {

class WiredHost final : public Port {
 public:
  WiredHost(std::unique_ptr<EthdevPort> wire, std::unique_ptr<EmulatedHost> host);

  uint16_t rx_burst(rte_mbuf** pkts, uint16_t n, uint64_t now_ns) override;
  uint16_t tx_burst(rte_mbuf** pkts, uint16_t n, uint64_t now_ns) override;
  const char* kind() const override { return "nic"; }
  void stop() override;
  bool carrier() const override { return wire_->carrier(); }
  void stats(nlohmann::json& j) const override;
  const EmulatedHost& host() const { return *host_; }

 private:
  std::unique_ptr<EthdevPort> wire_;
  std::unique_ptr<EmulatedHost> host_;
  uint64_t wire_tx_full_ = 0, from_switch_ = 0;
};

}  // namespace rs
