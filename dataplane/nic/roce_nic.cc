#include "dataplane/nic/roce_nic.h"

#include <arpa/inet.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <numeric>

namespace rs::nic {

namespace {
constexpr std::size_t kMaxCtrl = 4096;  // ACKs, NAKs and CNPs owed; past it they are dropped (counted)

uint64_t key(uint32_t ip, uint32_t qpn) { return uint64_t{ip} << 32 | qpn; }
// Both ends start a QP's PSNs at the same number, derived from it (a connection manager's
// exchange, made deterministic).
uint32_t first_psn(uint32_t qpn) { return (qpn * 2654435761u) & kPsnMask; }
std::string ip_text(uint32_t net) {
  char b[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &net, b, sizeof b);
  return b;
}
}  // namespace

RoceNic::Qp::Qp(const QpSpec& s, const QpPath& p, const NicSpec& nic, double link_gbps, uint64_t now)
    : spec(s), path(p), req(nic.rc, first_psn(s.qpn)), resp(nic.rc, first_psn(s.qpn)), rp(nic.cc, link_gbps), np(nic.cc),
      next_post_ns(s.start_ns) {
  paced_gbps = s.rate_gbps > 0 ? std::min(s.rate_gbps, link_gbps) : link_gbps;
  pace.configure(paced_gbps, now, nic.bucket_ns);
}

RoceNic::RoceNic(const NicSpec& spec, const std::vector<QpSpec>& qps, uint32_t ip, rte_ether_addr mac, rte_ether_addr gateway,
                 double link_gbps, const std::array<uint8_t, 64>& priority_of_dscp, uint64_t now)
    : spec_(spec), ip_(ip), mac_(mac), gateway_(gateway), link_gbps_(link_gbps), prio_(priority_of_dscp) {
  qps_.reserve(kMaxQps);
  for (const QpSpec& s : qps) {
    QpSpec q = s;
    if (q.priority < 0) q.priority = static_cast<int8_t>(prio_[q.dscp & 63] & 7);
    add_qp(q, now);
  }
}

uint32_t RoceNic::add_qp(const QpSpec& q, uint64_t now) {
  if (qps_.size() >= kMaxQps) return UINT32_MAX;
  QpPath p{mac_, gateway_, ip_, q.peer_ip, q.qpn, roce_udp_sport(q.qpn, q.qpn), q.dscp};
  const auto i = static_cast<uint32_t>(qps_.size());
  by_key_[key(q.peer_ip, q.qpn)] = i;
  qps_.push_back(std::make_unique<Qp>(q, p, spec_, link_gbps_, now));
  published_.store(i + 1, std::memory_order_release);
  return i;
}

uint32_t RoceNic::qp_for(uint32_t peer_ip, uint32_t qpn, uint8_t dscp, uint64_t now) {
  if (auto it = by_key_.find(key(peer_ip, qpn)); it != by_key_.end()) return it->second;
  // A peer's QP this host has not set up: it listens (answers, posts nothing), in the class
  // the peer's data came in.
  QpSpec s;
  s.peer_ip = peer_ip;
  s.qpn = qpn;
  s.dscp = dscp;
  s.priority = static_cast<int8_t>(prio_[dscp & 63] & 7);
  s.depth = 0;
  return add_qp(s, now);
}

void RoceNic::post_messages(Qp& q, uint64_t now) {
  const QpSpec& s = q.spec;
  if (!s.post_at_ns.empty()) {  // open loop: each message at its time
    for (; q.posted < s.post_at_ns.size() && s.post_at_ns[q.posted] <= now && now < s.stop_ns; ++q.posted) {
      if (q.posted == 0) q.first_post_ns = now;
      q.req.post(q.posted, s.sizes[q.posted], s.write, s.post_at_ns[q.posted]);
    }
    return;
  }
  while (s.depth && now >= q.next_post_ns && now < s.stop_ns && (s.messages == 0 || q.posted < s.messages) &&
         q.req.outstanding_messages() < s.depth) {
    if (s.gate != QpSpec::kNoGate && q.posted >= s.gate_lag && qps_[s.gate]->resp.counters().messages < q.posted - s.gate_lag + 1)
      break;  // a collective's next step waits for what it forwards
    if (q.posted == 0) q.first_post_ns = now;
    q.req.post(q.posted++, s.message_bytes, s.write, now);
    q.next_post_ns = s.interval_ns ? q.next_post_ns + s.interval_ns : now;
  }
}

bool RoceNic::active(uint64_t) const {
  // Backlogged: something to send or resend now. A QP waiting for its start, its next message's
  // time or a collective's step is idle, and the link banks no catch-up time for it.
  if (!ctrl_.empty()) return true;
  for (const auto& q : qps_)
    if (q->req.ready()) return true;
  return false;
}

uint64_t RoceNic::next_event(uint64_t now) const {
  if (active(now)) return now;
  uint64_t t = UINT64_MAX;
  for (const auto& qp : qps_) {
    const Qp& q = *qp;
    const QpSpec& s = q.spec;
    t = std::min(t, q.req.deadline());
    if (!s.post_at_ns.empty()) {  // open loop: the next message's own time (post_messages)
      if (q.posted < s.post_at_ns.size() && s.post_at_ns[q.posted] < s.stop_ns) t = std::min(t, s.post_at_ns[q.posted]);
      continue;
    }
    // Closed loop: the next post, when a slot is free; a full window or a collective's gate
    // waits for what arrives.
    if (!s.depth || q.next_post_ns >= s.stop_ns || (s.messages && q.posted >= s.messages) ||
        q.req.outstanding_messages() >= s.depth)
      continue;
    if (s.gate != QpSpec::kNoGate && q.posted >= s.gate_lag && qps_[s.gate]->resp.counters().messages < q.posted - s.gate_lag + 1)
      continue;
    t = std::min(t, std::max(q.next_post_ns, now));
  }
  return t;
}

rte_mbuf* RoceNic::frame(rte_mempool* pool, uint32_t need, uint32_t& room) {
  rte_mbuf* m = rte_pktmbuf_alloc(pool);
  if (!m) return nullptr;
  room = rte_pktmbuf_tailroom(m);
  if (room < need) {
    rte_pktmbuf_free(m);
    return nullptr;
  }
  return m;
}

uint16_t RoceNic::transmit(rte_mbuf** pkts, uint16_t n, uint64_t now, Shaper& link, const std::array<uint64_t, 8>& pause_until,
                           rte_mempool* pool) {
  uint16_t got = 0;
  if (now != poll_ns_) {
    poll_ns_ = now;
    poll_bytes_ = 0;
  }
  // What the QPs' timers and message streams did since the last call; their pacers refilled.
  for (auto& qp : qps_) {
    Qp& q = *qp;
    q.rp.advance(now);
    q.req.on_timer(now);
    post_messages(q, now);
    double want = spec_.dcqcn ? q.rp.rate_gbps() : link_gbps_;
    if (q.spec.rate_gbps > 0) want = std::min(want, q.spec.rate_gbps);
    if (want != q.paced_gbps) {
      q.pace.set_rate(want);
      q.paced_gbps = want;
    }
    q.pace.refill(now, q.req.ready() && now >= pause_until[q.spec.priority & 7]);
  }
  // What the NIC owes first, in order; a paused priority holds the rest behind it.
  while (got < n && !ctrl_.empty() && link.can_send()) {
    const Ctrl c = ctrl_.front();
    Qp& q = *qps_[c.qp];
    const uint8_t prio = c.kind == 1 ? spec_.cc.cnp_802p_prio : static_cast<uint8_t>(q.spec.priority);
    if (now < pause_until[prio & 7]) break;
    uint32_t room = 0;
    rte_mbuf* m = frame(pool, kHeaders + kCnpReserved, room);
    if (!m) break;
    uint8_t* p = rte_pktmbuf_mtod(m, uint8_t*);
    QpPath path = q.path;
    uint32_t len;
    if (c.kind == 1) {
      path.dscp = spec_.cc.cnp_dscp;
      len = build_cnp(p, room, path);
    } else {
      len = build_ack(p, room, path, c.psn, c.syndrome, c.msn);
    }
    rte_pktmbuf_append(m, static_cast<uint16_t>(len));
    link.consume(len);
    pkts[got++] = m;
    ctrl_.pop_front();
  }
  // Data, one packet a QP in turn.
  const uint32_t need = kHeaders + kRethLen + spec_.rc.mtu + 4;
  std::size_t idle = 0;
  while (got < n && link.can_send() && idle < qps_.size() && poll_bytes_ < link.burst_bytes()) {
    Qp& q = *qps_[rr_];
    rr_ = (rr_ + 1) % qps_.size();
    if (!q.req.ready() || now < pause_until[q.spec.priority & 7] || !q.pace.can_send()) {
      ++idle;
      continue;
    }
    idle = 0;
    uint32_t room = 0;
    rte_mbuf* m = frame(pool, need, room);
    if (!m) {
      ++bad_;
      break;
    }
    const DataPacket d = q.req.next(now);
    if (q.first_data_ns == 0) q.first_data_ns = now;
    const uint32_t len = build_data(rte_pktmbuf_mtod(m, uint8_t*), room, q.path, d);
    rte_pktmbuf_append(m, static_cast<uint16_t>(len));
    q.pace.consume(len);
    link.consume(len);
    poll_bytes_ += wire_bytes(len);
    q.rp.on_sent(len, now);
    pkts[got++] = m;
  }
  return got;
}

bool RoceNic::receive(const uint8_t* f, uint32_t len, uint64_t now) {
  Parsed x;
  const ParseError e = parse(f, len, x);
  if (e == ParseError::NotRoce) return false;
  if (e != ParseError::Ok) {
    ++bad_;
    return true;
  }
  if (x.dst_ip != ip_) {
    ++foreign_;
    return true;
  }
  // Data for a QP this host does not have makes one that listens; an ACK or a CNP for one is
  // not ours (nothing of it was sent from here).
  const auto known = by_key_.find(key(x.src_ip, x.dest_qp));
  if (known == by_key_.end() && !is_data(x.opcode)) {
    ++foreign_;
    return true;
  }
  const uint32_t qi = known != by_key_.end() ? known->second : qp_for(x.src_ip, x.dest_qp, x.dscp, now);
  if (qi == UINT32_MAX) {
    ++table_full_;
    return true;
  }
  Qp& q = *qps_[qi];
  if (is_data(x.opcode)) {
    if (x.ecn == 3) {
      ++q.ce_received;
      if (spec_.dcqcn && q.np.due(now)) {
        if (ctrl_.size() < kMaxCtrl) ctrl_.push_back({qi, 1});
        ++q.cnp_sent;
      }
    }
    const uint64_t delivered = q.resp.counters().messages;
    const RcResponder::Reply r = q.resp.on_data(x.opcode, x.psn, x.ack_req, x.payload);
    if (q.resp.counters().messages != delivered) q.last_rx_msg_ns = now;
    if (r.send && ctrl_.size() < kMaxCtrl) ctrl_.push_back({qi, 0, r.psn, r.msn, r.syndrome});
  } else if (x.opcode == kAcknowledge) {
    q.req.on_ack(x.psn, x.syndrome, now);
    for (const Completion& c : q.req.take_completions()) {
      q.fct.add(c.done_ns - c.post_ns);
      const unsigned cls = std::min<unsigned>(kSizeClasses - 1, 31 - static_cast<unsigned>(std::countl_zero(c.bytes | 1)));
      const uint64_t fct = c.done_ns - c.post_ns;
      fct_by_size_[cls].add(fct);
      // Unloaded: the round trip, the first packet stored and forwarded at each link after the
      // first, and the whole message on the link (headers, FCS, preamble and gap: 24 bytes).
      const uint64_t packets = (c.bytes + spec_.rc.mtu - 1) / spec_.rc.mtu;
      const double wire = static_cast<double>(c.bytes + packets * (kHeaders + kRethLen + 24));
      const double first = static_cast<double>(std::min(c.bytes, spec_.rc.mtu) + kHeaders + kRethLen + 24);
      const double ideal = static_cast<double>(q.spec.base_rtt_ns) + (wire + (q.spec.path_links - 1) * first) * 8 / link_gbps_;
      slowdown_by_size_[cls].add(static_cast<uint64_t>(static_cast<double>(fct) * 1000 / ideal));
      q.acked_bytes += c.bytes;
      q.last_ack_ns = now;
    }
  } else if (x.opcode == kCnp) {
    ++q.cnp_received;
    if (spec_.dcqcn) q.rp.on_cnp(now);
  }
  return true;
}

namespace {
// Completion times in µs: the summary figures and the CDF's steps ([upper edge, messages] of each
// non-empty bucket), from which a plot draws the whole distribution.
nlohmann::json fct_json(const FctCounts& c) {
  nlohmann::json steps = nlohmann::json::array();
  for (const auto& [upper_ns, n] : c.steps()) steps.push_back({upper_ns / 1000, n});
  return {{"mean", c.mean() / 1000},
          {"p50", c.percentile(0.5) / 1000},
          {"p99", c.percentile(0.99) / 1000},
          {"max", static_cast<double>(c.max) / 1000},
          {"cdf", std::move(steps)}};
}
}  // namespace

void RoceNic::stats(nlohmann::json& j) const {
  auto& n = j["nic"];
  n["cc"] = spec_.dcqcn ? "dcqcn" : "none";
  n["mtu"] = spec_.rc.mtu;
  n["reorder"] = spec_.rc.placement ? "placement" : "go_back_n";
  n["bad_frames"] = bad_;
  n["not_for_us"] = foreign_;
  n["qp_table_full"] = table_full_;
  auto& list = n["qps"];
  list = nlohmann::json::array();
  // The host's totals over its QPs.
  uint64_t acked = 0, done = 0, resent = 0, naks_rx = 0, naks_tx = 0, cnp_tx = 0, cnp_rx = 0, rx_bytes = 0, ooo = 0, missing = 0;
  uint64_t first = UINT64_MAX, last = 0;
  const uint32_t count = published_.load(std::memory_order_acquire);
  const std::unique_ptr<Qp>* table = qps_.data();
  std::vector<FctCounts> fct(count);
  FctCounts all;
  for (uint32_t i = 0; i < count; ++i) {
    const Qp& q = *table[i];
    fct[i] = q.fct.snapshot();
    all += fct[i];
    acked += q.acked_bytes;
    done += q.req.counters().messages_done;
    resent += q.req.counters().retransmitted;
    naks_rx += q.req.counters().naks;
    naks_tx += q.resp.counters().naks;
    cnp_tx += q.cnp_sent;
    cnp_rx += q.cnp_received;
    rx_bytes += q.resp.counters().bytes;
    ooo += q.resp.counters().out_of_sequence + q.resp.counters().placed;
    missing += q.resp.counters().missing;
    if (q.first_data_ns) first = std::min(first, q.first_data_ns);
    last = std::max(last, q.last_ack_ns);
  }
  n["totals"] = {{"acked_bytes", acked},
                 {"goodput_gbps", last > first && first != UINT64_MAX ? static_cast<double>(acked) * 8 / static_cast<double>(last - first) : 0.0},
                 {"messages_done", done},
                 {"retransmitted", resent},
                 {"naks_received", naks_rx},
                 {"naks_sent", naks_tx},
                 {"cnp_sent", cnp_tx},
                 {"cnp_received", cnp_rx},
                 {"rx_bytes", rx_bytes},
                 {"out_of_order", ooo},
                 {"missing_psns", missing},
                 {"fct_us", fct_json(all)}};
  auto& by_size = n["totals"]["fct_by_size"];
  by_size = nlohmann::json::array();
  for (unsigned c = 0; c < kSizeClasses; ++c) {
    const FctCounts k = fct_by_size_[c].snapshot();
    if (!k.count) continue;
    // Slowdown in thousandths: the same figures read as slowdowns (x1000 the µs of fct_json).
    const FctCounts sl = slowdown_by_size_[c].snapshot();
    nlohmann::json slj = fct_json(sl);
    by_size.push_back({{"bytes_min", uint64_t{1} << c}, {"bytes_max", (uint64_t{2} << c) - 1}, {"fct_us", fct_json(k)}, {"slowdown", slj}});
  }
  for (uint32_t i = 0; i < count; ++i) {
    const Qp& q = *table[i];
    const RequesterCounters& r = q.req.counters();
    const ResponderCounters& s = q.resp.counters();
    const uint64_t span = q.last_ack_ns > q.first_data_ns ? q.last_ack_ns - q.first_data_ns : 0;
    list.push_back({{"peer", ip_text(q.spec.peer_ip)},
                    {"qpn", q.spec.qpn},
                    {"role", q.spec.depth ? "requester" : "responder"},
                    {"priority", q.spec.priority},
                    {"messages_posted", q.posted},
                    {"messages_done", r.messages_done},
                    {"acked_bytes", q.acked_bytes},
                    {"goodput_gbps", span ? static_cast<double>(q.acked_bytes) * 8 / static_cast<double>(span) : 0.0},
                    {"fct_us", fct_json(fct[i])},
                    {"tx_packets", r.packets},
                    {"retransmitted", r.retransmitted},
                    {"naks_received", r.naks},
                    {"timeouts", r.timeouts},
                    {"rx_packets", s.packets},
                    {"rx_bytes", s.bytes},
                    {"rx_messages", s.messages},
                    {"out_of_sequence", s.out_of_sequence},
                    {"placed_out_of_order", s.placed},
                    {"missing_psns", s.missing},
                    {"duplicates", s.duplicates},
                    {"naks_sent", s.naks},
                    {"acks_sent", s.acks},
                    {"ce_received", q.ce_received},
                    {"cnp_sent", q.cnp_sent},
                    {"cnp_received", q.cnp_received},
                    {"rate_gbps", spec_.dcqcn && q.rp.limiting() ? q.rp.rate_gbps() : q.paced_gbps},
                    {"alpha", q.rp.alpha()},
                    {"rate_cuts", q.rp.counters().cuts},
                    {"tag", q.spec.tag},
                    {"traffic", q.spec.traffic},
                    {"messages", q.spec.messages},
                    {"first_post_ns", q.first_post_ns},
                    {"last_rx_message_ns", q.last_rx_msg_ns}});
  }
}

}  // namespace rs::nic
