// The emulated RoCE NIC of a host port (ConnectX-class, RoCEv2 over IPv4): its queue pairs, each
// an RC requester and responder (rc_qp.h, go-back-N) with DCQCN's reaction point (dcqcn.h), and
// its notification point. On the host's transmit side it makes, in this order, the ACKs, NAKs and
// CNPs it owes, then the data of its QPs in turn, each QP paced at its DCQCN rate (its own cap,
// when given, below that) and every frame within the link; a priority the switch paused by PFC
// sends nothing. On the receive side it takes the RoCE frames for it: data to the QP's
// responder (answered as the responder says; a CE-marked packet earns its sender a CNP, paced
// per QP), ACKs and NAKs to the requester, CNPs to the reaction point.
// A QP is (peer address, QP number), the same number at both ends (as SoftRoCE's capture shows
// two hosts on QP 0x11); a host answers data for a QP it does not have by making one (a
// listening peer). Messages: each QP posts `messages` of `message_bytes` (0: for ever), keeping
// `depth` outstanding (perftest's tx-depth), at most one every `interval`.
#pragma once
#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>
#include <vector>

#include "dataplane/nic/dcqcn.h"
#include "dataplane/nic/fct_histogram.h"
#include "dataplane/nic/rc_qp.h"
#include "dataplane/tm/queue/shaper.h"

namespace rs::nic {

struct NicSpec {
  bool enabled = false;  // the host has a NIC (`host.nic` or `host.qps` given)
  RcConfig rc;           // mtu, ack_req_every, ack_every, retransmit_ns, placement (reorder)
  bool dcqcn = true;     // cc: dcqcn; false: cc none (fixed rate, CE marks counted only)
  DcqcnConfig cc;
  // The pacers' bucket in line time (Shaper::configure); 0: the default. Set by whoever runs
  // the NIC on a virtual clock, not a config key (so not compared).
  uint64_t bucket_ns = 0;
  bool operator==(const NicSpec& o) const {
    return enabled == o.enabled && rc.mtu == o.rc.mtu && rc.ack_req_every == o.rc.ack_req_every && rc.ack_every == o.rc.ack_every &&
           rc.retransmit_ns == o.rc.retransmit_ns && rc.max_outstanding == o.rc.max_outstanding && rc.placement == o.rc.placement &&
           dcqcn == o.dcqcn && cc == o.cc;
  }
};

struct QpSpec {
  uint32_t peer_ip = 0;  // network order
  uint32_t qpn = 0x11;
  uint8_t dscp = 26;
  int8_t priority = -1;  // the PFC priority it pauses on; -1: the switch's maps decide (set at start)
  uint32_t message_bytes = 65536;
  uint64_t messages = 0;  // 0: for ever
  uint32_t depth = 1;     // messages outstanding at once
  uint64_t interval_ns = 0;
  bool write = true;      // RDMA WRITE; false: SEND
  double rate_gbps = 0;   // a cap below DCQCN's rate; 0: none
  uint64_t start_ns = 0, stop_ns = UINT64_MAX;
  // A collective's step (collective.h): message m goes only once the QP `gate` of the same host
  // (an index into its qps) has received m - gate_lag + 1 messages, if m >= gate_lag.
  static constexpr uint32_t kNoGate = UINT32_MAX;
  uint32_t gate = kNoGate;
  uint32_t gate_lag = 1;
  uint16_t tag = 0;  // the collective it belongs to (1-based; 0: none): made by the loader, not dumped
  uint16_t traffic = 0;  // the traffic pattern that made it (1-based; 0: none; traffic.h), not dumped
  // The path to the peer, for each message's FCT slowdown (its completion time over the unloaded
  // one): the round trip of an empty frame and the links a packet is stored and forwarded on (a
  // fabric knows them; 0 and 2: unknown, one switch). Set by the loader, not dumped.
  uint64_t base_rtt_ns = 0;
  uint8_t path_links = 2;
  // A pattern's open-loop messages (flow sizes drawn from a distribution): message k is
  // `sizes[k]` bytes, posted at `post_at_ns[k]` whatever is outstanding; then `messages` is
  // their count. Empty: every message is `message_bytes`, posted as `depth` and `interval` allow.
  std::vector<uint32_t> sizes;
  std::vector<uint64_t> post_at_ns;
  bool operator==(const QpSpec&) const = default;
};

class RoceNic {
 public:
  // `gateway` is the MAC of the switch port the host is cabled to; `priority_of_dscp` the PFC
  // priority the switch gives each DSCP (a QP without its own, and a listening QP, pause on it).
  RoceNic(const NicSpec& spec, const std::vector<QpSpec>& qps, uint32_t ip, rte_ether_addr mac, rte_ether_addr gateway,
          double link_gbps, const std::array<uint8_t, 64>& priority_of_dscp, uint64_t now);

  // Frames to send at `now`, at most `n`, within `link` (the host's link shaper: refilled by the
  // caller, consumed here) and not on a priority paused until after `now` (`pause_until`).
  uint16_t transmit(rte_mbuf** pkts, uint16_t n, uint64_t now, Shaper& link, const std::array<uint64_t, 8>& pause_until,
                    rte_mempool* pool);
  // A received frame; false when it is not RoCE for this NIC (the host counts it its own way).
  bool receive(const uint8_t* frame, uint32_t len, uint64_t now);
  // Whether some QP has data to send or a timer running (the host is backlogged).
  bool active(uint64_t now) const;
  // The earliest time the NIC may send anything unprompted: `now` when active, else its next
  // message's post time or its first retransmit deadline (UINT64_MAX: none). What arrives for
  // it (ACKs, a collective's data, CNPs) is on the fabric's wires, which say when themselves;
  // DCQCN's timers catch up exactly whenever the NIC next runs. So a fabric on virtual time may
  // jump to this instant without changing what happens.
  uint64_t next_event(uint64_t now) const;

  // Any thread, while the worker runs: what it reads is each QP's counters as they stand.
  void stats(nlohmann::json& j) const;
  uint64_t bad_frames() const { return bad_; }

 private:
  struct Qp {
    QpSpec spec;
    QpPath path;
    RcRequester req;
    RcResponder resp;
    DcqcnRp rp;
    CnpPacer np;
    Shaper pace;
    double paced_gbps = 0;
    uint64_t posted = 0, next_post_ns = 0;
    uint64_t cnp_sent = 0, cnp_received = 0, ce_received = 0, naks_sent = 0;
    uint64_t first_data_ns = 0, last_ack_ns = 0, acked_bytes = 0;
    uint64_t first_post_ns = 0, last_rx_msg_ns = 0;
    FctHistogram fct;  // message completion times (post to last ACK)
    Qp(const QpSpec& s, const QpPath& p, const NicSpec& nic, double link_gbps, uint64_t now);
  };
  struct Ctrl {
    uint32_t qp;  // index
    uint8_t kind; // 0 ACK/NAK, 1 CNP
    uint32_t psn = 0, msn = 0;
    uint8_t syndrome = 0;
  };
  uint32_t qp_for(uint32_t peer_ip, uint32_t qpn, uint8_t dscp, uint64_t now);  // made when new; UINT32_MAX: table full
  uint32_t add_qp(const QpSpec& s, uint64_t now);
  void post_messages(Qp& q, uint64_t now);
  rte_mbuf* frame(rte_mempool* pool, uint32_t cap, uint32_t& len);

  NicSpec spec_;
  uint32_t ip_;
  rte_ether_addr mac_, gateway_;
  double link_gbps_;
  std::array<uint8_t, 64> prio_;
  // The QPs, never moved; the table never reallocates (kMaxQps reserved), and `published_` says
  // how many are whole, so the stats may read them while the worker adds listening ones.
  static constexpr std::size_t kMaxQps = 4096;
  std::vector<std::unique_ptr<Qp>> qps_;
  std::atomic<uint32_t> published_{0};
  std::unordered_map<uint64_t, uint32_t> by_key_;
  std::deque<Ctrl> ctrl_;
  std::size_t rr_ = 0;
  // One poll is one instant (as for the host's flows): at most a bucket of the link's bytes go
  // in it, so time a stalled worker makes up reaches the wire over several polls, each of which
  // can carry the switch's PFC back first.
  uint64_t poll_ns_ = UINT64_MAX, poll_bytes_ = 0;
  uint64_t bad_ = 0, foreign_ = 0, table_full_ = 0;
  std::vector<uint8_t> scratch_;
  // Completion times by message size, the host's (over its QPs): class c holds messages of
  // [2^c, 2^(c+1)) bytes, so that FCT slowdown can be read by flow size as the congestion-
  // control papers plot it.
  static constexpr unsigned kSizeClasses = 32;
  std::array<FctHistogram, kSizeClasses> fct_by_size_;
  std::array<FctHistogram, kSizeClasses> slowdown_by_size_;  // in thousandths
};

}  // namespace rs::nic
