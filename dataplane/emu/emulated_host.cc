#include "dataplane/emu/emulated_host.h"

#include <rte_byteorder.h>
#include <rte_ip.h>
#include <rte_udp.h>

#include <arpa/inet.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "dataplane/core/types.h"
#include "dataplane/proto/icrc.h"
#include "dataplane/tm/pfc/pfc_frame.h"

namespace rs {
namespace {
constexpr uint16_t kRocePort = 4791;
constexpr uint32_t kBth = 12;
constexpr uint32_t kIcrc = 4;
constexpr uint32_t kL3Off = sizeof(rte_ether_hdr);
constexpr uint32_t kBthOff = kL3Off + sizeof(rte_ipv4_hdr) + sizeof(rte_udp_hdr);

// Extended transport headers after the BTH, by the low 5 bits of an RC/UC/RD/XRC opcode
// (IBTA vol. 1, 9.2): ImmDt 4, RETH 16, AETH 4, AtomicETH 28, AtomicAckETH 8, IETH 4.
constexpr uint8_t kExtLen[32] = {0, 0, 0, 4, 0, 4, 16, 0, 0, 4, 16, 20, 16, 4, 0, 4,
                                 4, 4, 12, 28, 28, 0, 4, 4, 0, 0, 0, 0, 0, 0, 0, 0};

// The message payload a RoCE packet carries, from its UDP length: what goodput counts.
uint32_t roce_payload(const uint8_t* bth, uint32_t udp_len) {
  const uint8_t op = bth[0];
  uint32_t ext = kExtLen[op & 31];
  switch (op >> 5) {
    case 2: ext += 12; break;                           // RD: RDETH + DETH
    case 3: ext = 8 + ((op & 31) == 5 ? 4 : 0); break;  // UD: DETH (+ ImmDt)
    case 5: ext += 4; break;                            // XRC: XRCETH
    default: break;
  }
  const uint32_t hdrs = sizeof(rte_udp_hdr) + kBth + ext + ((bth[1] >> 4) & 3) + kIcrc;
  return udp_len > hdrs ? udp_len - hdrs : 0;
}

std::string ipv4_text(uint32_t net_order) {
  char buf[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &net_order, buf, sizeof buf);
  return buf;
}
}  // namespace

HostWire::HostWire(double gbps, uint32_t capacity, bool serial)
    : slots_(std::make_unique<Slot[]>(capacity)), mask_(capacity - 1), serial_(serial) {
  set_rate(gbps);
}

void HostWire::push(rte_mbuf* m, uint64_t start_ns) {
  uint64_t ns = start_ns;
  double frac = 0;
  if (serial_ && (start_ns < end_ns_ || (start_ns == end_ns_ && end_frac_ > 0))) {
    ns = end_ns_;  // the cable is busy with the frame before
    frac = end_frac_;
  }
  const double end = frac + ns_per_byte_ * wire_bytes(m->pkt_len);
  const double whole = std::floor(end);
  ns += static_cast<uint64_t>(whole);
  frac = end - whole;
  if (serial_ || ns > end_ns_ || (ns == end_ns_ && frac >= end_frac_)) {
    end_ns_ = ns;
    end_frac_ = frac;
  }  // else it waits for the frame ahead of it
  // Due at the first whole nanosecond its last bit is in by.
  slots_[(head_ + count_) & mask_] = {m, end_ns_ + (end_frac_ > 0 ? 1 : 0)};
  ++count_;
}

rte_mbuf* HostWire::pop() {
  rte_mbuf* m = slots_[head_].m;
  head_ = (head_ + 1) & mask_;
  --count_;
  return m;
}

void HostWire::clear() {
  while (count_) rte_pktmbuf_free(pop());
}

EmulatedHost::EmulatedHost(const HostSpec& spec, rte_ether_addr switch_mac, double link_gbps, rte_mempool* pool,
                           uint64_t now_ns, const EmulatedHost* receiver_leader)
    : spec_(spec),
      pool_(pool),
      link_gbps_(link_gbps),
      // On a virtual clock (a bucket given) the switch's shaper banks no lost time, and what
      // it hands over at once goes out one frame after the other. In real time its bucket and
      // catch-up stand for time the wire was busy while the worker was not looking: such a
      // burst arrives as the shaper spaced it, each frame its own serialisation after it.
      to_host_(link_gbps, kWireFrames, spec.bucket_ns != 0),
      mac_to_host_(link_gbps, kWireMacFrames, true),
      to_switch_(link_gbps, kWireFrames, false),
      leader_(receiver_leader) {
  rx_ = leader_ ? leader_->rx_ : std::make_shared<RxTracker>(spec.rx_flow_capacity);
  link_.configure(link_gbps, now_ns, spec.bucket_ns);
  if (leader_) {
    nic_ = leader_->nic_;
  } else if (spec.nic.enabled) {
    nic::NicSpec ns = spec.nic;
    ns.bucket_ns = spec.bucket_ns;
    nic_ = std::make_shared<nic::RoceNic>(ns, spec.qps, spec.ip, spec.mac, switch_mac, link_gbps, spec.priority_of_dscp, now_ns);
  }
  for (std::size_t i = 0; i < spec.flows.size(); ++i) {
    Flow& f = flows_.emplace_back();
    f.spec = spec.flows[i];
    f.rate.configure(f.spec.rate_gbps, now_ns, spec.bucket_ns);
    const uint32_t payload = (f.spec.payload + 3) & ~3u;  // BTH pad count keeps it 4-aligned
    const uint32_t udp_len = sizeof(rte_udp_hdr) + kBth + payload + kIcrc;
    const uint32_t ip_len = sizeof(rte_ipv4_hdr) + udp_len;
    f.tmpl.assign(kL3Off + ip_len, 0);
    uint8_t* p = f.tmpl.data();
    auto* eth = reinterpret_cast<rte_ether_hdr*>(p);
    eth->dst_addr = switch_mac;
    eth->src_addr = spec.mac;
    eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
    auto* ip = reinterpret_cast<rte_ipv4_hdr*>(p + kL3Off);
    ip->version_ihl = 0x45;
    ip->type_of_service = static_cast<uint8_t>(f.spec.dscp << 2 | (f.spec.ecn & 3));
    ip->total_length = rte_cpu_to_be_16(static_cast<uint16_t>(ip_len));
    ip->fragment_offset = rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG);
    ip->time_to_live = 64;
    ip->next_proto_id = IPPROTO_UDP;
    ip->src_addr = spec.ip;
    ip->dst_addr = f.spec.dst_ip;
    ip->hdr_checksum = rte_ipv4_cksum(ip);
    auto* udp = reinterpret_cast<rte_udp_hdr*>(p + kL3Off + sizeof(rte_ipv4_hdr));
    // Linux derives the RoCE source port from the flow label of the QP; a fixed mix of the QP
    // number stands in for it here, so each QP is one ECMP flow.
    udp->src_port = rte_cpu_to_be_16(static_cast<uint16_t>(0xC000 | ((f.spec.qp * 2654435761u) >> 18)));
    udp->dst_port = rte_cpu_to_be_16(kRocePort);
    udp->dgram_len = rte_cpu_to_be_16(static_cast<uint16_t>(udp_len));
    udp->dgram_cksum = 0;  // RoCEv2 sends a zero UDP checksum
    uint8_t* bth = p + kBthOff;
    bth[0] = f.spec.opcode;
    bth[1] = static_cast<uint8_t>(((payload - f.spec.payload) & 3) << 4);  // PadCnt
    bth[2] = 0xFF;
    bth[3] = 0xFF;  // default P_Key
    bth[5] = static_cast<uint8_t>(f.spec.qp >> 16);
    bth[6] = static_cast<uint8_t>(f.spec.qp >> 8);
    bth[7] = static_cast<uint8_t>(f.spec.qp);
    for (uint32_t k = 0; k < f.spec.payload; ++k) bth[kBth + k] = static_cast<uint8_t>(k * 7 + f.spec.qp);
  }
}

rte_mbuf* EmulatedHost::build(Flow& f) {
  rte_mbuf* m = rte_pktmbuf_alloc(pool_);
  if (!m) return nullptr;
  const uint16_t len = static_cast<uint16_t>(f.tmpl.size());
  uint8_t* p = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, len));
  if (!p) {
    rte_pktmbuf_free(m);
    return nullptr;
  }
  std::memcpy(p, f.tmpl.data(), len);
  uint8_t* bth = p + kBthOff;
  bth[9] = static_cast<uint8_t>(f.psn >> 16);
  bth[10] = static_cast<uint8_t>(f.psn >> 8);
  bth[11] = static_cast<uint8_t>(f.psn);
  f.psn = (f.psn + 1) & 0xFFFFFF;
  const uint32_t icrc = roce_icrc(p + kL3Off, len - kL3Off, false);
  uint8_t* tail = p + len - kIcrc;
  tail[0] = static_cast<uint8_t>(icrc);
  tail[1] = static_cast<uint8_t>(icrc >> 8);
  tail[2] = static_cast<uint8_t>(icrc >> 16);
  tail[3] = static_cast<uint8_t>(icrc >> 24);
  return m;
}

uint16_t EmulatedHost::make(rte_mbuf** pkts, uint16_t n, uint64_t now_ns) {
  uint16_t got = 0;
  const HostPfcStorm& st = spec_.storm;
  if (st.priority >= 0 && now_ns >= st.start_ns && now_ns < st.stop_ns && now_ns >= next_storm_ns_ && n > 0) {
    // Refresh at half the pause time, as a NIC whose receive buffer never drains would.
    std::array<uint16_t, 8> q{};
    q[st.priority & 7] = st.quanta;
    if (rte_mbuf* m = make_pfc_mbuf(pool_, spec_.mac, static_cast<uint8_t>(1u << (st.priority & 7)), q)) {
      pkts[got++] = m;
      storm_sent_.inc();
      next_storm_ns_ = now_ns + std::max<uint64_t>(1, pause_quanta_to_ns(st.quanta, link_gbps_) / 2);
    }
  }
  if (flows_.empty() && !nic_) return got;
  // A sending flow is a backlogged link: time lost to a descheduled worker is made up.
  bool any_active = nic_ && !leader_ && nic_->active(now_ns);
  for (auto& f : flows_) {
    // A flow paused by PFC is not backlogged on the wire: it must not bank the paused time
    // and burst it out at XON (that burst is what the switch's headroom would have to hold).
    const bool active = sending(f, now_ns);
    f.rate.refill(now_ns, active);
    any_active |= active;
  }
  link_.refill(now_ns, any_active);
  if (nic_ && !leader_) {
    const uint16_t k = nic_->transmit(pkts + got, static_cast<uint16_t>(n - got), now_ns, link_, pause_until_, pool_);
    got = static_cast<uint16_t>(got + k);
    if (flows_.empty()) return got;
  }
  // One poll is one instant: the switch's PFC reaches the host only between polls, so the time
  // a stalled worker makes up above must not go out in one poll (5 ms at 1 Gb/s is 625 KB, far
  // past any PG's headroom). Each flow sends at most its bucket (~20 us of its rate, two jumbo
  // frames at least) per poll, however many bursts the worker asks for; the banked credit goes
  // out over the next polls, each of which can carry XOFF back first.
  if (now_ns != poll_ns_) {
    poll_ns_ = now_ns;
    for (auto& f : flows_) f.poll_bytes = 0;
  }
  std::size_t idle = 0;
  // Round robin over flows that have credit, until the link or every flow runs out.
  while (got < n && link_.can_send() && idle < flows_.size()) {
    Flow& f = flows_[rr_];
    rr_ = (rr_ + 1) % flows_.size();
    if (!sending(f, now_ns) || !f.rate.can_send() || f.poll_bytes >= f.rate.burst_bytes()) {
      ++idle;
      continue;
    }
    idle = 0;
    rte_mbuf* m = build(f);
    if (!m) {
      alloc_fail_.inc();
      break;
    }
    f.rate.consume(m->pkt_len);
    link_.consume(m->pkt_len);
    f.poll_bytes += wire_bytes(m->pkt_len);
    f.sent.inc();
    f.bytes.add(m->pkt_len);
    pkts[got++] = m;
  }
  return got;
}

uint16_t EmulatedHost::rx_burst(rte_mbuf** pkts, uint16_t n, uint64_t now_ns) {
  // What has arrived first: a pause, an ACK or a CNP acts on what the host sends now.
  take_arrived(now_ns);
  // What the host starts sending goes onto the cable, as much as it holds (more than a
  // shaper's bucket lets start at once); a full cable makes the host wait, as a NIC its wire.
  rte_mbuf* b[kBurst];
  for (uint16_t room; (room = static_cast<uint16_t>(std::min<uint32_t>(kBurst, to_switch_.room()))) > 0;) {
    const uint16_t k = make(b, room, now_ns);
    for (uint16_t i = 0; i < k; ++i) to_switch_.push(b[i], now_ns);
    if (k < room) break;
  }
  // What reaches the switch: the frames whose last bit is in.
  uint16_t got = 0;
  uint64_t bytes = 0;
  while (got < n && to_switch_.due(now_ns)) {
    rte_mbuf* m = to_switch_.pop();
    bytes += m->pkt_len;
    pkts[got++] = m;
  }
  tx_pkts_.add(got);
  tx_bytes_.add(bytes);
  return got;
}

void EmulatedHost::on_mac_control(const uint8_t* frame, uint32_t len, uint64_t now_ns) {
  PauseFrame f;
  if (decode_mac_control(frame, len, f) != MacControlError::Ok) {
    rx_pfc_bad_.inc();
    return;
  }
  rx_pfc_.inc();
  for (int p = 0; p < 8; ++p) {
    if (!(f.enable & (1u << p))) continue;
    pause_until_[p] = f.quanta[p] ? now_ns + pause_quanta_to_ns(f.quanta[p], link_gbps_) : 0;
  }
}

uint16_t EmulatedHost::tx_burst(rte_mbuf** pkts, uint16_t n, uint64_t now_ns) {
  take_arrived(now_ns);
  for (uint16_t i = 0; i < n; ++i) {
    rte_mbuf* m = pkts[i];
    const bool mac = m->data_len >= sizeof(rte_ether_hdr) &&
                     rte_be_to_cpu_16(rte_pktmbuf_mtod(m, const rte_ether_hdr*)->ether_type) == kEtherTypeMacControl;
    HostWire& w = mac ? mac_to_host_ : to_host_;
    if (w.full()) {
      // Only a switch that hands over far more than its link carries (a real-time worker
      // making up lost time) fills the cable: its oldest frame is received early, so that
      // none is lost or refused (the switch counts a refused frame dropped) and order holds.
      wire_full_.inc();
      receive(w.pop(), now_ns, now_ns);
    }
    // PFC starts when the frame on the wire now has ended (after take_arrived, the data
    // cable's first frame is the one in progress); data after the data before it.
    w.push(m, mac && to_host_.size() ? std::max(now_ns, to_host_.next_arrival_ns()) : now_ns);
  }
  take_arrived(now_ns);  // due at once when the cable does not serialise
  return n;
}

HostWire* EmulatedHost::next_to_host() {
  if (!to_host_.size() && !mac_to_host_.size()) return nullptr;
  return mac_to_host_.next_arrival_ns() <= to_host_.next_arrival_ns() ? &mac_to_host_ : &to_host_;
}

void EmulatedHost::take_arrived(uint64_t now_ns) {
  for (HostWire* w; (w = next_to_host()) && w->due(now_ns);) {
    const uint64_t at = w->next_arrival_ns();
    receive(w->pop(), now_ns, at);
  }
}

void EmulatedHost::stop() {
  for (HostWire* w; (w = next_to_host());) {
    const uint64_t at = w->next_arrival_ns();
    receive(w->pop(), at, at);
  }
  to_switch_.clear();
}

void EmulatedHost::set_wire_serialisation(bool on) {
  for (HostWire* w : {&to_host_, &mac_to_host_, &to_switch_}) w->set_rate(on ? link_gbps_ : 0);
}

void EmulatedHost::receive(rte_mbuf* m, uint64_t now_ns, uint64_t arrival_ns) {
  const uint8_t* p = rte_pktmbuf_mtod(m, const uint8_t*);
  if (m->data_len >= sizeof(rte_ether_hdr) &&
      rte_be_to_cpu_16(reinterpret_cast<const rte_ether_hdr*>(p)->ether_type) == kEtherTypeMacControl) {
    // Link-local: the host's MAC acts on it; it is not a received packet. A pause runs from
    // its arrival, however late the worker looks (the NIC's own clock would start it then).
    on_mac_control(p, m->data_len, std::min(now_ns, arrival_ns));
    rte_pktmbuf_free(m);
    return;
  }
  rx_pkts_.inc();
  rx_bytes_.add(m->pkt_len);
  if (m->data_len >= kBthOff + kBth && m->data_len == m->pkt_len &&
      rte_be_to_cpu_16(reinterpret_cast<const rte_ether_hdr*>(p)->ether_type) == RTE_ETHER_TYPE_IPV4) {
    auto* ip = reinterpret_cast<const rte_ipv4_hdr*>(p + kL3Off);
    auto* udp = reinterpret_cast<const rte_udp_hdr*>(p + kL3Off + sizeof(rte_ipv4_hdr));
    if (ip->version_ihl == 0x45 && ip->next_proto_id == IPPROTO_UDP && rte_be_to_cpu_16(udp->dst_port) == kRocePort) {
      rx_roce_.inc();
      if ((ip->type_of_service & 3) == 3) rx_ce_.inc();
      if (nic_ && nic_->receive(p, m->data_len, now_ns)) {
        rte_pktmbuf_free(m);
        return;
      }
      const uint32_t ip_len = rte_be_to_cpu_16(ip->total_length);
      const uint32_t udp_len = rte_be_to_cpu_16(udp->dgram_len);
      if (kL3Off + ip_len > m->data_len || !roce_icrc_ok(p + kL3Off, ip_len, false)) {
        icrc_bad_.inc();
      } else if (const uint8_t* bth = p + kBthOff; (bth[0] >> 5) != 4 && udp_len + sizeof(rte_ipv4_hdr) <= ip_len) {
        // A NIC delivers what passed the ICRC; CNPs (opcode 0x80..0x9F) are not data.
        rx_->on_packet(ip->src_addr, uint32_t{bth[5]} << 16 | uint32_t{bth[6]} << 8 | bth[7],
                       uint32_t{bth[9]} << 16 | uint32_t{bth[10]} << 8 | bth[11], roce_payload(bth, udp_len),
                       m->pkt_len, now_ns);
      }
    }
  }
  rte_pktmbuf_free(m);
}

uint64_t EmulatedHost::idle_until(uint64_t now_ns) const {
  uint64_t t = std::min({to_host_.next_arrival_ns(), mac_to_host_.next_arrival_ns(), to_switch_.next_arrival_ns()});
  const HostPfcStorm& st = spec_.storm;
  if (st.priority >= 0 && now_ns < st.stop_ns) t = std::min(t, std::max(st.start_ns, next_storm_ns_));
  for (const Flow& f : flows_) {
    if (now_ns >= f.spec.stop_ns) continue;
    t = std::min(t, std::max({f.spec.start_ns, pause_until_[f.spec.priority & 7], now_ns}));
  }
  if (nic_ && !leader_) t = std::min(t, nic_->next_event(now_ns));  // a group's leader sends for it
  return t;
}

void EmulatedHost::stats(nlohmann::json& j) const {
  auto& h = j["host"];
  h["tx_packets"] = tx_pkts_.get();
  h["tx_bytes"] = tx_bytes_.get();
  h["alloc_fail"] = alloc_fail_.get();
  h["rx_packets"] = rx_pkts_.get();
  h["rx_bytes"] = rx_bytes_.get();
  h["rx_roce"] = rx_roce_.get();
  h["rx_icrc_bad"] = icrc_bad_.get();
  h["rx_ce_marked"] = rx_ce_.get();
  h["rx_pfc_frames"] = rx_pfc_.get();
  h["rx_pfc_malformed"] = rx_pfc_bad_.get();
  h["rx_wire_full"] = wire_full_.get();
  if (spec_.storm.priority >= 0) h["pfc_storm_frames_sent"] = storm_sent_.get();
  if (nic_ && !leader_) nic_->stats(h);
  auto& fl = h["flows"];
  fl = nlohmann::json::array();
  for (auto& f : flows_)
    fl.push_back({{"qp", f.spec.qp}, {"rate_gbps", f.spec.rate_gbps}, {"priority", f.spec.priority}, {"sent", f.sent.get()},
                  {"dst", ipv4_text(f.spec.dst_ip)}, {"tx_bytes", f.bytes.get()}});
  // Received flows: a receiver group's leader reports them all, the other ports point to it.
  if (!spec_.receiver.empty()) h["receiver"] = spec_.receiver;
  if (leader_) {
    h["rx_flows_in"] = leader_->name;
    return;
  }
  auto& rf = h["rx_flows"];
  rf = nlohmann::json::array();
  rx_->for_each([&](const RxFlowStats& s) {
    const uint64_t span = s.last_ns - s.first_ns;
    rf.push_back({{"src", ipv4_text(s.src_ip)}, {"qp", s.qp}, {"packets", s.packets}, {"bytes", s.bytes},
                  {"frame_bytes", s.frame_bytes}, {"out_of_order", s.out_of_order}, {"late", s.late},
                  {"missing", s.missing},
                  {"goodput_gbps", span ? static_cast<double>(s.bytes) * 8.0 / static_cast<double>(span) : 0.0}});
  });
  h["rx_flows_untracked"] = rx_->untracked();
}

}  // namespace rs
