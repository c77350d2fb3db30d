#include "dataplane/emu/wired_host.h"

namespace rs {

WiredHost::WiredHost(std::unique_ptr<EthdevPort> wire, std::unique_ptr<EmulatedHost> host)
    : wire_(std::move(wire)), host_(std::move(host)) {
  // The device serialises on the real wire and hands over frames already whole.
  host_->set_wire_serialisation(false);
}

void WiredHost::stop() {
  wire_->stop();
  host_->stop();
}

uint16_t WiredHost::rx_burst(rte_mbuf**, uint16_t, uint64_t now_ns) {
  rte_mbuf* b[32];
  // The wire to the host: the host takes (and frees) every frame.
  const uint16_t in = wire_->rx_burst(b, 32, now_ns);
  if (in) host_->tx_burst(b, in, now_ns);
  // The host to the wire; what the device will not take now is lost, as a NIC's full ring drops.
  const uint16_t out = host_->rx_burst(b, 32, now_ns);
  const uint16_t sent = out ? wire_->tx_burst(b, out, now_ns) : 0;
  if (sent < out) {
    rte_pktmbuf_free_bulk(b + sent, out - sent);
    wire_tx_full_ += out - sent;
  }
  return 0;
}

uint16_t WiredHost::tx_burst(rte_mbuf** pkts, uint16_t n, uint64_t) {
  rte_pktmbuf_free_bulk(pkts, n);
  from_switch_ += n;
  return n;
}

void WiredHost::stats(nlohmann::json& j) const {
  host_->stats(j);
  nlohmann::json w;
  wire_->stats(w);
  j["wire"] = w;
  j["wire_tx_full"] = wire_tx_full_;
  j["from_switch_freed"] = from_switch_;
}

}  // namespace rs
