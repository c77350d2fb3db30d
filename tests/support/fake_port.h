// The test ports, one set for every test and benchmark:
// - FakePort: a Port with no device. rx_burst hands out what the test injected; tx_burst takes
//   up to `accept` packets a call (to play a full TX ring), records each (length, queue, time)
//   unless `record` is off, and frees them unless `keep` is on (then the test reads them in
//   `kept`, and the port frees them when it goes). With record off it is net_null's tx: count
//   and free, the cheapest sink the benchmarks can have.
// - RingPeer: a real DPDK ethdev built on two rte_rings (net_ring), for tests that put an
//   ethdev port in a Switch and play the link partner: inject() writes a frame into the
//   port's rx ring, take_tx() hands back what the switch sent (drain_tx() frees it).
#pragma once
#include <rte_mbuf.h>
#include <rte_ring.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "dataplane/core/packet_meta.h"
#include "dataplane/ports/port.h"
#include "dataplane/tm/queue/shaper.h"

namespace rs::test {

class FakePort final : public Port {
 public:
  struct Sent {
    uint32_t len;
    uint8_t queue;
    uint64_t at_ns;
  };

  FakePort() { name = "fake"; }
  explicit FakePort(uint16_t port_id, double gbps = 100.0) : FakePort() {
    id = port_id;
    speed_gbps = gbps;
  }
  FakePort(const FakePort&) = delete;
  FakePort& operator=(const FakePort&) = delete;
  ~FakePort() override {
    for (auto* m : rx) rte_pktmbuf_free(m);
    for (auto* m : kept) rte_pktmbuf_free(m);
  }

  uint16_t rx_burst(rte_mbuf** pkts, uint16_t n, uint64_t) override {
    uint16_t k = 0;
    for (; k < n && !rx.empty(); ++k) {
      pkts[k] = rx.front();
      rx.pop_front();
    }
    return k;
  }
  uint16_t tx_burst(rte_mbuf** pkts, uint16_t n, uint64_t now_ns) override {
    ++calls;
    offered += n;
    const uint16_t take = std::min<uint16_t>(n, accept);
    packets += take;
    if (!record && !keep) {
      rte_pktmbuf_free_bulk(pkts, take);
      return take;
    }
    for (uint16_t i = 0; i < take; ++i) {
      if (record) {
        sent.push_back({pkts[i]->pkt_len, meta(pkts[i]).queue, now_ns});
        wire += wire_bytes(pkts[i]->pkt_len);
      }
      if (keep)
        kept.push_back(pkts[i]);
      else
        rte_pktmbuf_free(pkts[i]);
    }
    return take;
  }
  const char* kind() const override { return "fake"; }

  // A packet for the next rx_burst; the port owns it until then.
  void inject(rte_mbuf* m) { rx.push_back(m); }

  // When queue `q` first sent (UINT64_MAX if never), and how many packets it sent.
  uint64_t first_of(uint8_t q) const {
    for (auto& s : sent)
      if (s.queue == q) return s.at_ns;
    return UINT64_MAX;
  }
  std::size_t count_of(uint8_t q) const {
    return static_cast<std::size_t>(std::count_if(sent.begin(), sent.end(), [q](const Sent& s) { return s.queue == q; }));
  }

  // Settings.
  uint16_t accept = 0xFFFF;  // packets one tx_burst takes at most
  bool record = true;        // fill `sent` and `wire`
  bool keep = false;         // keep the sent mbufs in `kept` instead of freeing them
  // What happened.
  std::vector<Sent> sent;
  std::vector<rte_mbuf*> kept;
  std::deque<rte_mbuf*> rx;
  uint64_t packets = 0;  // taken by tx_burst
  uint64_t wire = 0;     // their wire bytes (FCS, minimum size, preamble and IFG), when recorded
  uint64_t offered = 0;
  uint64_t calls = 0;
};

class RingPeer {
 public:
  // `name` must be unique in the process (it names the rings and the ethdev); `ring_size` is
  // each ring's (a power of two).
  explicit RingPeer(const std::string& name, unsigned ring_size = 1024);
  ~RingPeer();
  RingPeer(const RingPeer&) = delete;
  RingPeer& operator=(const RingPeer&) = delete;

  bool ok() const { return port_id_ >= 0 && !devname_.empty(); }
  // The ethdev's name, for PortSpec::devargs (the ring PMD names it; the switch finds it so).
  const std::string& devname() const { return devname_; }
  int port_id() const { return port_id_; }
  // Writes `frame` into the port's rx ring, as the peer sending it.
  void inject(const std::vector<uint8_t>& frame);
  // The peer sends `m` (the switch owns it once it receives it; freed here if the ring is full).
  void inject(rte_mbuf* m);
  // What the switch transmitted since the last call, oldest first, metadata still attached;
  // the caller frees them.
  std::vector<rte_mbuf*> take_tx();
  // The same as bytes, the mbufs freed.
  std::vector<std::vector<uint8_t>> take_tx_frames();
  // Frees what the switch transmitted on the port; returns how many.
  unsigned drain_tx();

 private:
  rte_ring* rx_ = nullptr;
  rte_ring* tx_ = nullptr;
  int port_id_ = -1;
  std::string devname_;
};

}  // namespace rs::test
