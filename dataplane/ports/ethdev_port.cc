#include "dataplane/ports/ethdev_port.h"

#include <fmt/core.h>
#include <rte_bus_vdev.h>
#include <rte_dev.h>
#include <rte_errno.h>
#include <rte_ethdev.h>

#include <stdexcept>

namespace rs {

EthdevPort::EthdevPort(const std::string& devargs, rte_mempool* pool, uint16_t rx_desc, uint16_t tx_desc)
    : devargs_(devargs) {
  const std::string dev_name = devargs.substr(0, devargs.find(','));
  if (rte_eth_dev_get_port_by_name(dev_name.c_str(), &port_id_) != 0) {
    int rc = rte_dev_probe(devargs.c_str());
    if (rc < 0) throw std::runtime_error(fmt::format("cannot probe '{}': {}", devargs, rte_strerror(-rc)));
    probed_here_ = true;
    if (rte_eth_dev_get_port_by_name(dev_name.c_str(), &port_id_) != 0)
      throw std::runtime_error(fmt::format("'{}' probed but no ethdev named '{}'", devargs, dev_name));
  }
  rte_eth_conf conf{};
  rte_eth_dev_info info{};
  if (rte_eth_dev_info_get(port_id_, &info) != 0) throw std::runtime_error("rte_eth_dev_info_get failed");
  rx_desc = std::min<uint16_t>(rx_desc, info.rx_desc_lim.nb_max ? info.rx_desc_lim.nb_max : rx_desc);
  tx_desc = std::min<uint16_t>(tx_desc, info.tx_desc_lim.nb_max ? info.tx_desc_lim.nb_max : tx_desc);
  int rc = rte_eth_dev_configure(port_id_, 1, 1, &conf);
  if (rc < 0) throw std::runtime_error(fmt::format("{}: configure: {}", devargs, rte_strerror(-rc)));
  rc = rte_eth_dev_adjust_nb_rx_tx_desc(port_id_, &rx_desc, &tx_desc);
  if (rc < 0) throw std::runtime_error(fmt::format("{}: descriptors: {}", devargs, rte_strerror(-rc)));
  const int socket = rte_eth_dev_socket_id(port_id_);
  const unsigned s = socket < 0 ? 0u : static_cast<unsigned>(socket);
  rc = rte_eth_rx_queue_setup(port_id_, 0, rx_desc, s, nullptr, pool);
  if (rc < 0) throw std::runtime_error(fmt::format("{}: rx queue: {}", devargs, rte_strerror(-rc)));
  rc = rte_eth_tx_queue_setup(port_id_, 0, tx_desc, s, nullptr);
  if (rc < 0) throw std::runtime_error(fmt::format("{}: tx queue: {}", devargs, rte_strerror(-rc)));
  rc = rte_eth_dev_start(port_id_);
  if (rc < 0) throw std::runtime_error(fmt::format("{}: start: {}", devargs, rte_strerror(-rc)));
  started_ = true;
  // A switch port must see every frame, not just those to its own MAC. Some PMDs (pcap) refuse.
  (void)rte_eth_promiscuous_enable(port_id_);
}

EthdevPort::~EthdevPort() {
  stop();
  if (probed_here_) {
    rte_eth_dev_info info{};
    const bool have_dev = rte_eth_dev_info_get(port_id_, &info) == 0 && info.device;
    rte_eth_dev_close(port_id_);
    // Removing the vdev lets a later switch in the same process probe the same name again.
    if (have_dev) rte_dev_remove(info.device);
  }
}

void EthdevPort::stop() {
  if (started_) {
    rte_eth_dev_stop(port_id_);
    started_ = false;
  }
}

uint16_t EthdevPort::rx_burst(rte_mbuf** pkts, uint16_t n, uint64_t) { return rte_eth_rx_burst(port_id_, 0, pkts, n); }

uint16_t EthdevPort::tx_burst(rte_mbuf** pkts, uint16_t n, uint64_t) { return rte_eth_tx_burst(port_id_, 0, pkts, n); }

void EthdevPort::stats(nlohmann::json& j) const {
  rte_eth_stats s{};
  if (rte_eth_stats_get(port_id_, &s) == 0) {
    j["ethdev"] = {{"port_id", port_id_}, {"devargs", devargs_}, {"ipackets", s.ipackets}, {"opackets", s.opackets},
                   {"imissed", s.imissed}, {"ierrors", s.ierrors}, {"oerrors", s.oerrors}, {"rx_nombuf", s.rx_nombuf}};
  }
}

}  // namespace rs

namespace rs {

bool EthdevPort::carrier() const {
  if (!started_) return false;
  rte_eth_link link{};
  // nowait: the monitor runs every millisecond and must not block on a PHY negotiation.
  if (rte_eth_link_get_nowait(port_id_, &link) != 0) return true;  // no link status: assume up
  return link.link_status == RTE_ETH_LINK_UP;
}

}  // namespace rs
