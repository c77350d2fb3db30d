#include "tests/support/fake_port.h"

#include <gtest/gtest.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>

#include <algorithm>
#include <cstring>

#include "tests/support/eal_env.h"
#include "tests/support/packet_builder.h"

namespace rs::test {

RingPeer::RingPeer(const std::string& name, unsigned ring_size) {
  rx_ = rte_ring_create((name + "_rx").c_str(), ring_size, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
  tx_ = rte_ring_create((name + "_tx").c_str(), ring_size, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
  if (rx_ && tx_) port_id_ = rte_eth_from_rings(name.c_str(), &rx_, 1, &tx_, 1, rte_socket_id());
  char dev[RTE_ETH_NAME_MAX_LEN] = {};
  // The ring PMD names the ethdev itself: the switch finds it by that name.
  if (port_id_ >= 0 && rte_eth_dev_get_name_by_port(static_cast<uint16_t>(port_id_), dev) == 0) devname_ = dev;
}

RingPeer::~RingPeer() {
  drain_tx();
  if (port_id_ >= 0) rte_eth_dev_close(static_cast<uint16_t>(port_id_));
  void* m;
  while (rx_ && rte_ring_dequeue(rx_, &m) == 0) rte_pktmbuf_free(static_cast<rte_mbuf*>(m));
  rte_ring_free(rx_);
  rte_ring_free(tx_);
}

void RingPeer::inject(const std::vector<uint8_t>& frame) {
  // As a NIC that scatters: a frame longer than one buffer arrives as a chain of segments.
  rte_mbuf* m = rte_pktmbuf_alloc(test_pool());
  ASSERT_NE(m, nullptr);
  std::size_t done = 0;
  for (rte_mbuf* seg = m; done < frame.size();) {
    const std::size_t n = std::min<std::size_t>(frame.size() - done, rte_pktmbuf_tailroom(seg));
    std::memcpy(rte_pktmbuf_mtod_offset(seg, uint8_t*, seg->data_len), frame.data() + done, n);
    seg->data_len = static_cast<uint16_t>(seg->data_len + n);
    m->pkt_len += static_cast<uint32_t>(n);
    done += n;
    if (done == frame.size()) break;
    rte_mbuf* next = rte_pktmbuf_alloc(test_pool());
    if (!next) {
      rte_pktmbuf_free(m);
      FAIL() << "no mbuf for a segment of a " << frame.size() << "-byte frame";
    }
    next->data_off = 0;  // a following segment has no headroom to keep
    seg->next = next;
    ++m->nb_segs;
    seg = next;
  }
  inject(m);
}

void RingPeer::inject(rte_mbuf* m) {
  if (!rx_ || rte_ring_enqueue(rx_, m) != 0) {
    ADD_FAILURE() << devname_ << ": rx ring full";
    rte_pktmbuf_free(m);
  }
}

std::vector<rte_mbuf*> RingPeer::take_tx() {
  std::vector<rte_mbuf*> v;
  void* m;
  while (tx_ && rte_ring_dequeue(tx_, &m) == 0) v.push_back(static_cast<rte_mbuf*>(m));
  return v;
}

std::vector<std::vector<uint8_t>> RingPeer::take_tx_frames() {
  std::vector<std::vector<uint8_t>> v;
  for (rte_mbuf* m : take_tx()) {
    v.push_back(mbuf_bytes(m));
    rte_pktmbuf_free(m);
  }
  return v;
}

unsigned RingPeer::drain_tx() {
  void* m;
  unsigned n = 0;
  while (tx_ && rte_ring_dequeue(tx_, &m) == 0) {
    rte_pktmbuf_free(static_cast<rte_mbuf*>(m));
    ++n;
  }
  return n;
}

}  // namespace rs::test
