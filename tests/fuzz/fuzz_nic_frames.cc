// libFuzzer target: the frames the emulated RoCE NIC (dataplane/nic) receives. One input is a
// byte of options (bit 0: out-of-order placement, with a reorder window of 8 and a NAK after 2
// placed past a gap, instead of go-back-N; bit 1: SENDs instead of RDMA WRITEs; bits 2-4: the
// messages to send, less one), then records [ctl][length: 2 bytes, big endian][frame]; ctl's
// top two bits say how the frame is fixed up before the NIC sees it (0: made a RoCEv2 IPv4
// packet to the NIC, lengths from the frame's, ICRC good; 1: the same, and from the peer's QP
// 0x11, so it reaches the requester; 2: only the ICRC written, over the IP length the frame
// claims; 3: as it is) and its low six bits a delay of virtual time (1 us steps, then 32 us
// steps up to ~1 ms).
//   - Codec (the whole input, and each record's frame): what parse() accepts is built again with
//     the matching builder (build_data / build_ack / build_cnp, on a QpPath of the parsed
//     addresses, UDP port, DSCP and QP) and must parse back to the same fields: the payload bytes
//     are the builder's pattern, so fields are compared, not bytes; the rebuilt frame has the
//     input's IP length exactly when the input was canonical (a data packet's pad makes its
//     payload a multiple of 4; an ACK or CNP carries nothing after its header). A build fits a
//     capacity of exactly its length, and not one byte less.
//   - Transport: a RoceNic (MTU 1024, DCQCN, a 20 us retransmission timer, at most 4 PSNs
//     outstanding) at 10.0.0.2 whose one requester QP 0x11 sends 1-8 messages of 3000 bytes to
//     10.0.0.3; the records are received in turn, time advancing, with transmit() called after
//     each. Every frame transmitted parses, comes from the NIC; its data is the requester's, each
//     packet's opcode, payload, AckReq and RETH as the message's segmentation says, its PSN within
//     the window [una, una + 4) of a shadow of the first unacknowledged PSN kept from the ACKs and
//     NAKs fed (IBTA 9.7.5: an ACK of p in [una, sent) acknowledges through p, a NAK
//     PSN-sequence-error of p in [una, sent] through p - 1); its ACKs and NAKs have syndrome
//     ACK or PSN sequence error; its CNPs DSCP 48, not ECT. After the input: stats() makes JSON
//     without throwing, the requester's completed messages and first sends agree with the shadow,
//     rates and alpha are in range, and the mbuf pool is back to where it started.
// A violation aborts with what broke.
#include <fmt/core.h>
#include <rte_byteorder.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "dataplane/nic/roce_nic.h"
#include "dataplane/nic/roce_wire.h"
#include "dataplane/proto/icrc.h"
#include "tests/support/eal_env.h"

namespace {

using namespace rs::nic;

constexpr uint64_t kUs = 1000;
constexpr uint32_t kQpn = 0x11, kMsgBytes = 3000, kMtu = 1024, kWindow = 4, kAckReqEvery = 2;
constexpr uint32_t kPerMsg = (kMsgBytes + kMtu - 1) / kMtu;
constexpr uint32_t kFirstPsn = (kQpn * 2654435761u) & kPsnMask;  // as both ends derive it (roce_nic.cc)
constexpr double kLinkGbps = 25;
constexpr rte_ether_addr kMac{{0x02, 0, 0, 0, 0, 0xaa}}, kGateway{{0x02, 0, 0, 0, 0, 0x10}};
constexpr uint32_t kBuf = 70000;  // any frame parse accepts, built again

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "fuzz_nic_frames: %s\n", what.c_str());
  std::abort();
}
void check(bool ok, const char* what) {
  if (!ok) fail(what);
}

uint16_t be16(const uint8_t* p) { return static_cast<uint16_t>(p[0] << 8 | p[1]); }
void put16(uint8_t* p, uint32_t v) { p[0] = static_cast<uint8_t>(v >> 8), p[1] = static_cast<uint8_t>(v); }
constexpr uint32_t kNicIp = RTE_BE32(0x0a000002), kPeerIp = RTE_BE32(0x0a000003);  // 10.0.0.2, 10.0.0.3

uint8_t g_a[kBuf], g_b[kBuf];

// A build at exactly its length gives the same frame; one byte less gives 0.
template <typename Build>
uint32_t built(Build&& build) {
  const uint32_t n = build(g_a, kBuf);
  check(n != 0, "a builder refused a packet parse accepted");
  check(build(g_b, n - 1) == 0, "a build fit a capacity shorter than its frame");
  check(build(g_b, n) == n && std::memcmp(g_a, g_b, n) == 0, "a build at exactly its capacity differs");
  return n;
}

void codec(const uint8_t* f, std::size_t size) {
  if (size > kBuf) return;
  const auto len = static_cast<uint32_t>(size);
  Parsed x;
  const ParseError e = parse(f, len, x);
  check(std::strcmp(parse_error_name(e), "?") != 0, "parse_error_name");
  if (e != ParseError::Ok) return;
  const uint32_t ip_len = be16(f + 16), udp_len = be16(f + 38), pad = (f[43] >> 4) & 3u;
  const uint32_t ext = x.opcode == kCnp ? kCnpReserved : x.has_reth ? kRethLen : x.has_aeth ? kAethLen : 0;
  check(14 + ip_len <= len && udp_len + 20 == ip_len, "parse accepted lengths that do not fit");
  check(x.opcode == kCnp ? x.payload == 0 : x.payload + pad + 24 + ext == udp_len, "parsed payload does not add up");
  check(x.has_reth == (x.opcode == kWriteFirst || x.opcode == kWriteOnly) &&
            x.has_aeth == (x.opcode == kAcknowledge),
        "extension headers for the opcode");
  QpPath path;
  std::memcpy(&path.dst_mac, f, 6);
  std::memcpy(&path.src_mac, f + 6, 6);
  path.src_ip = x.src_ip, path.dst_ip = x.dst_ip, path.dest_qp = x.dest_qp, path.sport = x.sport, path.dscp = x.dscp;
  uint32_t n, rebuilt_udp = 24 + ext;
  if (is_data(x.opcode)) {
    rebuilt_udp += (x.payload + 3) & ~3u;
    // build_data refuses a packet whose IP length would pass 65535 (checked in roce_wire_test).
    if (rebuilt_udp + 20 > 0xFFFF) return;
    const DataPacket d{x.opcode, x.psn, x.payload, x.ack_req, x.va, x.rkey, x.dma_len};
    n = built([&](uint8_t* b, uint32_t cap) { return build_data(b, cap, path, d); });
  } else if (x.opcode == kAcknowledge) {
    n = built([&](uint8_t* b, uint32_t cap) { return build_ack(b, cap, path, x.psn, x.syndrome, x.msn); });
  } else {
    check(x.opcode == kCnp, "parse accepted an opcode the NIC does not know");
    n = built([&](uint8_t* b, uint32_t cap) { return build_cnp(b, cap, path); });
  }
  check(n == 14 + 20 + rebuilt_udp, "a built frame's length");
  Parsed y;
  if (const ParseError e2 = parse(g_a, n, y); e2 != ParseError::Ok)
    fail(fmt::format("a built {} does not parse: {}", opcode_name(x.opcode), parse_error_name(e2)));
  check(std::memcmp(g_a, f, 12) == 0, "a built frame's MAC addresses");
  check(y.src_ip == x.src_ip && y.dst_ip == x.dst_ip && y.sport == x.sport && y.opcode == x.opcode && y.dest_qp == x.dest_qp,
        "a built frame parses back with other addresses, port, opcode or QP");
  if (x.opcode == kCnp) {
    check(y.dscp == kCnpDscp && y.ecn == 0 && y.psn == 0 && y.payload == 0, "a built CNP's class or PSN");
  } else {
    check(y.dscp == x.dscp && y.ecn == 2 && y.psn == x.psn, "a built packet's DSCP, ECN or PSN");
  }
  if (is_data(x.opcode))
    check(y.ack_req == x.ack_req && y.payload == x.payload && y.has_reth == x.has_reth && y.va == x.va && y.rkey == x.rkey &&
              y.dma_len == x.dma_len && !y.has_aeth,
          "a built data packet parses back different");
  if (x.opcode == kAcknowledge)
    check(y.has_aeth && y.syndrome == x.syndrome && y.msn == x.msn && y.payload == 0 && !y.ack_req, "a built ACK parses back different");
  const bool canonical = is_data(x.opcode) ? (x.payload + pad) % 4 == 0 : udp_len == 24 + ext;
  check((n == 14 + ip_len) == canonical, "a rebuilt frame's length against the input's IP length");
}

// Makes the frame what the NIC reads (see the header): mode 0 to us, 1 from the peer's QP too,
// 2 the ICRC only, 3 nothing.
void fix_up(std::vector<uint8_t>& v, unsigned mode) {
  const std::size_t len = v.size();
  if (mode == 3 || len < kHeaders || len - 14 > 0xFFFF) return;
  uint8_t* f = v.data();
  uint8_t* ip = f + 14;
  std::size_t ip_len = len - 14;
  if (mode == 2) {
    ip_len = be16(ip + 2);
    if (be16(f + 12) != 0x0800 || ip[0] != 0x45 || ip_len < kHeaders - 14 || 14 + ip_len > len) return;
  } else {
    put16(f + 12, 0x0800);
    ip[0] = 0x45;
    put16(ip + 2, static_cast<uint32_t>(ip_len));
    ip[9] = 17;
    std::memcpy(ip + 16, &kNicIp, 4);
    put16(ip + 22, 4791);
    put16(ip + 24, static_cast<uint32_t>(ip_len - 20));
    if (mode == 1) {
      std::memcpy(ip + 12, &kPeerIp, 4);
      f[47] = 0, f[48] = 0, f[49] = kQpn;  // BTH destination QP
    }
  }
  const uint32_t c = rs::roce_icrc(ip, ip_len, false);
  std::memcpy(ip + ip_len - 4, &c, 4);  // as roce_icrc_ok reads it
}

struct Run {
  bool write = true;
  uint32_t msgs = 1;
  std::unique_ptr<RoceNic> nic;
  rs::Shaper link;
  uint64_t now = 0;
  int64_t una = 0, sent = 0;  // the requester's, relative to kFirstPsn (the shadow)
};
unsigned g_base = 0;
const std::array<uint64_t, 8> kNoPause{};

// The shadow's view of a frame before the NIC receives it: ACKs and NAKs for the requester.
void shadow_rx(Run& r, const uint8_t* f, std::size_t len) {
  Parsed x;
  if (parse(f, static_cast<uint32_t>(len), x) != ParseError::Ok || x.dst_ip != kNicIp || x.src_ip != kPeerIp || x.dest_qp != kQpn ||
      x.opcode != kAcknowledge)
    return;
  const uint32_t ahead = (x.psn - kFirstPsn - static_cast<uint32_t>(r.una)) & kPsnMask;
  const int64_t p = ahead < (kPsnMask + 1) / 2 ? r.una + ahead : r.una - static_cast<int64_t>((kPsnMask + 1) - ahead);
  if (!is_nak(x.syndrome)) {
    if (p >= r.una && p < r.sent) r.una = p + 1;
  } else if (x.syndrome == kNakPsnSequenceError && p >= r.una && p <= r.sent) {
    r.una = p;
  }
}

void check_tx(Run& r, const rte_mbuf* m) {
  check(m->nb_segs == 1 && m->pkt_len == m->data_len, "a transmitted frame in segments");
  const auto* f = rte_pktmbuf_mtod(m, const uint8_t*);
  Parsed x;
  if (const ParseError e = parse(f, m->pkt_len, x); e != ParseError::Ok) fail(fmt::format("a transmitted frame: {}", parse_error_name(e)));
  check(m->pkt_len == 14 + be16(f + 16), "a transmitted frame with bytes past its IP length");
  check(std::memcmp(f, &kGateway, 6) == 0 && std::memcmp(f + 6, &kMac, 6) == 0 && x.src_ip == kNicIp, "a transmitted frame's addresses");
  if (is_data(x.opcode)) {
    check(x.dst_ip == kPeerIp && x.dest_qp == kQpn, "data from a QP that posts nothing");
    const int64_t k = (x.psn - kFirstPsn) & kPsnMask;
    if (k >= r.msgs * kPerMsg) fail(fmt::format("data PSN {} past the {} packets posted", k, r.msgs * kPerMsg));
    if (k < r.una || k >= r.una + kWindow) fail(fmt::format("data PSN {} outside the window [{}, {})", k, r.una, r.una + kWindow));
    const auto i = static_cast<uint32_t>(k % kPerMsg), msg = static_cast<uint32_t>(k / kPerMsg);
    const bool first = i == 0, last = i + 1 == kPerMsg;
    const uint8_t op = r.write ? (first ? kWriteFirst : last ? kWriteLast : kWriteMiddle) : (first ? kSendFirst : last ? kSendLast : kSendMiddle);
    check(x.opcode == op, "a data packet's opcode");
    check(x.payload == std::min(kMtu, kMsgBytes - i * kMtu), "a data packet's payload");
    check(x.ack_req == (last || (i + 1) % kAckReqEvery == 0), "a data packet's AckReq");
    check(x.has_reth == (first && r.write) && (!x.has_reth || (x.va == uint64_t{msg} << 32 && x.rkey == 0x1000 && x.dma_len == kMsgBytes)),
          "a data packet's RETH");
    check(x.dscp == 26 && x.ecn == 2, "a data packet's class");
    r.sent = std::max(r.sent, k + 1);
  } else if (x.opcode == kAcknowledge) {
    check(x.syndrome == kAckSyndrome || x.syndrome == kNakPsnSequenceError, "an ACK's syndrome");
  } else {
    check(x.opcode == kCnp && x.dscp == kCnpDscp && x.ecn == 0, "a CNP's class, or an opcode the NIC never sends");
  }
}

void step(Run& r) {
  r.link.refill(r.now, r.nic->active(r.now));
  for (int round = 0; round < 8; ++round) {
    rte_mbuf* pkts[16];
    const uint16_t got = r.nic->transmit(pkts, 16, r.now, r.link, kNoPause, rs::test::test_pool());
    check(got <= 16, "transmit returned more than asked");
    for (uint16_t i = 0; i < got; ++i) {
      check_tx(r, pkts[i]);
      rte_pktmbuf_free(pkts[i]);
    }
    if (got < 16) break;
  }
}

void check_stats(const Run& r) {
  nlohmann::json j;
  try {
    r.nic->stats(j);  // (not dumped: its strings are addresses, and serialising was 40% of the time)
    const auto& q = j.at("nic").at("qps").at(0);
    check(q.at("role") == "requester" && q.at("peer") == "10.0.0.3" && q.at("qpn") == kQpn, "stats: the requester first");
    if (q.at("messages_done").get<int64_t>() != r.una / kPerMsg)
      fail(fmt::format("stats: {} messages done, the shadow acknowledged {} PSNs", q.at("messages_done").get<int64_t>(), r.una));
    if (q.at("tx_packets").get<int64_t>() - q.at("retransmitted").get<int64_t>() != r.sent)
      fail(fmt::format("stats: {} packets sent, {} resent, the wire saw {} PSNs", q.at("tx_packets").get<int64_t>(),
                       q.at("retransmitted").get<int64_t>(), r.sent));
    check(q.at("messages_posted").get<uint64_t>() <= r.msgs, "stats: more messages posted than asked");
    check(j.at("nic").at("qp_table_full").get<uint64_t>() == 0, "stats: the QP table filled");
    check(j.at("nic").at("totals").at("retransmitted") == q.at("retransmitted") || j.at("nic").at("qps").size() > 1,
          "stats: one QP's totals are not its own");
    for (const auto& p : j.at("nic").at("qps")) {
      const double rate = p.at("rate_gbps").get<double>(), alpha = p.at("alpha").get<double>();
      check(std::isfinite(rate) && rate > 0 && rate <= kLinkGbps, "stats: a rate out of range");
      check(alpha >= 0 && alpha <= 1, "stats: alpha out of range");
    }
  } catch (const std::exception& e) {
    fail(fmt::format("stats: {}", e.what()));
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  rs::test::init_test_eal();
  g_base = rte_mempool_in_use_count(rs::test::test_pool());
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  codec(data, size);
  if (size == 0) return 0;
  const uint8_t options = data[0];
  NicSpec spec;  // DCQCN on, its defaults
  spec.enabled = true;
  spec.rc = {.mtu = kMtu, .ack_req_every = kAckReqEvery, .retransmit_ns = 20 * kUs, .max_outstanding = kWindow,
             .placement = (options & 1) != 0, .reorder_window = 8, .nak_after = 2};
  const QpSpec q{.peer_ip = kPeerIp, .qpn = kQpn, .message_bytes = kMsgBytes, .messages = 1u + ((options >> 2) & 7u), .depth = 2,
                 .write = !(options & 2)};
  std::array<uint8_t, 64> prio{};
  prio[26] = 3, prio[kCnpDscp] = 6;
  Run r;
  r.write = q.write;
  r.msgs = static_cast<uint32_t>(q.messages);
  r.now = 1000 * kUs;
  r.nic = std::make_unique<RoceNic>(spec, std::vector<QpSpec>{q}, kNicIp, kMac, kGateway, kLinkGbps, prio, r.now);
  r.link.configure(kLinkGbps, r.now);
  step(r);
  std::size_t at = 1;
  std::vector<uint8_t> f;
  for (int records = 0; at + 3 <= size && records < 256; ++records) {
    const unsigned ctl = data[at], d = ctl & 0x3F;
    const std::size_t len = std::min<std::size_t>(be16(data + at + 1), size - at - 3);
    at += 3;
    f.assign(data + at, data + at + len);
    at += len;
    fix_up(f, ctl >> 6);
    codec(f.data(), f.size());
    r.now += d < 32 ? d * kUs : (d - 31) * 32 * kUs;
    shadow_rx(r, f.data(), f.size());
    Parsed x;
    const bool roce = parse(f.data(), static_cast<uint32_t>(f.size()), x) != ParseError::NotRoce;
    check(r.nic->receive(f.data(), static_cast<uint32_t>(f.size()), r.now) == roce, "receive() and parse() disagree on RoCE");
    step(r);
  }
  // Past the retransmission timer: what is outstanding goes again.
  r.now += 100 * kUs;
  step(r);
  check_stats(r);
  r.nic.reset();
  if (const unsigned n = rte_mempool_in_use_count(rs::test::test_pool()); n != g_base)
    fail(fmt::format("mbufs leaked: {} in use, {} at the start", n, g_base));
  return 0;
}
