#include "dataplane/fabric/emulated_link.h"

#include <fmt/core.h>
#include <rte_errno.h>

#include <algorithm>
#include <stdexcept>

#include "dataplane/core/object_name.h"
#include "dataplane/tm/queue/shaper.h"

namespace rs {

class LinkEnd final : public Port {
 public:
  LinkEnd(EmulatedLink* link, int side) : link_(link), side_(side) {}
  uint16_t rx_burst(rte_mbuf** pkts, uint16_t n, uint64_t now_ns) override { return link_->receive(side_, pkts, n, now_ns); }
  uint16_t tx_burst(rte_mbuf** pkts, uint16_t n, uint64_t now_ns) override { return link_->send(side_, pkts, n, now_ns); }
  const char* kind() const override { return "link"; }
  bool carrier() const override { return link_->up(); }
  // What arrives is on the cable, which the fabric watches itself.
  uint64_t idle_until(uint64_t) const override { return UINT64_MAX; }
  void stats(nlohmann::json& j) const override { j["link"] = link_->name(); }

 private:
  EmulatedLink* link_;
  int side_;
};

EmulatedLink::EmulatedLink(const std::string& name, const LinkParams& p)
    : name_(name), p_(p), ns_per_byte_(8.0 / p.gbps) {
  if (!(p.gbps > 0)) throw std::runtime_error(fmt::format("link {}: rate must be above 0 Gb/s", name));
  for (int s = 0; s < 2; ++s) {
    dir_[s].rng = FastRng(p.seed * 2 + static_cast<uint64_t>(s) + 1);
    dir_[s].ring = rte_ring_create_elem(unique_object_name("rs_link").c_str(), sizeof(Item), p.capacity, SOCKET_ID_ANY,
                                        RING_F_SP_ENQ | RING_F_SC_DEQ | RING_F_EXACT_SZ);
    if (!dir_[s].ring) {
      const std::string why = rte_strerror(rte_errno);
      if (s) rte_ring_free(dir_[0].ring);
      throw std::runtime_error(fmt::format("link {}: ring: {}", name, why));
    }
  }
}

EmulatedLink::~EmulatedLink() {
  for (auto& d : dir_) {
    if (d.head.m) rte_pktmbuf_free(d.head.m);
    Item it;
    while (rte_ring_sc_dequeue_elem(d.ring, &it, sizeof(Item)) == 0) rte_pktmbuf_free(it.m);
    rte_ring_free(d.ring);
  }
}

std::unique_ptr<Port> EmulatedLink::make_end(int side) { return std::make_unique<LinkEnd>(this, side & 1); }

uint16_t EmulatedLink::send(int side, rte_mbuf** pkts, uint16_t n, uint64_t now_ns) {
  Direction& d = dir_[side];
  const bool up = this->up();
  // A loss draw at 2^-32 resolution; 0 never loses.
  const uint64_t lose_below = static_cast<uint64_t>(std::clamp(p_.loss, 0.0, 1.0) * 4294967296.0);
  uint16_t taken = 0;
  uint64_t bytes = 0, lost = 0, lost_down = 0;
  for (; taken < n; ++taken) {
    rte_mbuf* m = pkts[taken];
    // The cable is busy with the frame before: this one starts when that one has left.
    const double start = std::max(static_cast<double>(now_ns), d.busy_until_ns);
    const double end = start + ns_per_byte_ * wire_bytes(m->pkt_len);
    if (!up || (lose_below && d.rng.next() < lose_below)) {
      up ? ++lost : ++lost_down;
      rte_pktmbuf_free(m);
      continue;
    }
    Item it{m, static_cast<uint64_t>(end) + p_.delay_ns};
    if (rte_ring_sp_enqueue_elem(d.ring, &it, sizeof(Item)) != 0) break;  // full: the switch counts the rest
    d.busy_until_ns = end;
    bytes += m->pkt_len;
    d.sent.inc();
  }
  d.sent_bytes.add(bytes);
  if (lost) d.lost.add(lost);
  if (lost_down) d.lost_down.add(lost_down);
  return taken;
}

uint16_t EmulatedLink::receive(int side, rte_mbuf** pkts, uint16_t n, uint64_t now_ns) {
  Direction& d = dir_[side ^ 1];  // what the far side sent
  uint16_t k = 0;
  uint64_t bytes = 0;
  while (k < n) {
    if (!d.head.m && rte_ring_sc_dequeue_elem(d.ring, &d.head, sizeof(Item)) != 0) break;
    if (d.head.arrival_ns > now_ns) break;
    bytes += d.head.m->pkt_len;
    pkts[k++] = d.head.m;
    d.head.m = nullptr;
  }
  if (k) {
    d.received.add(k);
    d.received_bytes.add(bytes);
  }
  return k;
}

uint64_t EmulatedLink::next_arrival_ns() {
  uint64_t t = UINT64_MAX;
  for (auto& d : dir_) {
    if (!d.head.m && rte_ring_sc_dequeue_elem(d.ring, &d.head, sizeof(Item)) != 0) continue;
    t = std::min(t, d.head.arrival_ns);
  }
  return t;
}

uint64_t EmulatedLink::in_flight() const {
  uint64_t n = 0;
  for (auto& d : dir_) n += d.sent.get() - d.received.get();
  return n;
}

uint64_t EmulatedLink::lost() const {
  uint64_t n = 0;
  for (auto& d : dir_) n += d.lost.get() + d.lost_down.get();
  return n;
}

void EmulatedLink::stats(nlohmann::json& j) const {
  j["name"] = name_;
  j["gbps"] = p_.gbps;
  j["delay_ns"] = p_.delay_ns;
  j["loss"] = p_.loss;
  j["up"] = up();
  auto& dirs = j["directions"];
  dirs = nlohmann::json::array();
  for (int s = 0; s < 2; ++s) {
    const Direction& d = dir_[s];
    dirs.push_back({{"from_side", s},
                    {"sent_frames", d.sent.get()},
                    {"sent_bytes", d.sent_bytes.get()},
                    {"received_frames", d.received.get()},
                    {"lost", d.lost.get()},
                    {"lost_link_down", d.lost_down.get()}});
  }
}

}  // namespace rs
