// The emulated RoCE NIC's wire format (IBTA vol. 1 ch. 9 and Annex A17, RoCEv2 over IPv4): the
// reliable-connected packets a ConnectX-class NIC puts on the wire and reads off it.
//   data: Ethernet | IPv4 (DSCP, ECN ECT(0), DF, TTL 64) | UDP (to 4791, checksum 0) | BTH |
//         RETH on the first packet of an RDMA WRITE | payload padded to 4 bytes | ICRC
//   ACK / NAK: ... | BTH (opcode 0x11, the PSN acknowledged) | AETH (syndrome, MSN) | ICRC
//   CNP: ... | BTH (opcode 0x81, the congested QP) | 16 reserved bytes | ICRC; DSCP 48, not ECT
// The UDP source port of a QP is the one Linux gives it (rdma_get_udp_sport: a hash of the
// two QP numbers folded into 0xC000..0xFFFF), so a QP is one ECMP flow, as on real NICs.
#pragma once
#include <rte_ether.h>

#include <cstdint>

namespace rs::nic {

// BTH opcodes of the RC transport (IBTA 9.2, table 35) that the NIC sends.
enum Opcode : uint8_t {
  kSendFirst = 0x00,
  kSendMiddle = 0x01,
  kSendLast = 0x02,
  kSendOnly = 0x04,
  kWriteFirst = 0x06,
  kWriteMiddle = 0x07,
  kWriteLast = 0x08,
  kWriteOnly = 0x0A,
  kAcknowledge = 0x11,
  kCnp = 0x81,
};
inline bool is_first(uint8_t op) { return op == kSendFirst || op == kWriteFirst; }
inline bool is_last(uint8_t op) { return op == kSendLast || op == kSendOnly || op == kWriteLast || op == kWriteOnly; }
inline bool is_data(uint8_t op) { return op <= kWriteOnly && op != 0x03 && op != 0x05 && op != 0x09; }
const char* opcode_name(uint8_t op);

// AETH syndromes (IBTA 9.7.5.1): ACK 000xxxxx (credits; 0x1F: none advertised), NAK 011xxxxx.
inline constexpr uint8_t kAckSyndrome = 0x1F;
inline constexpr uint8_t kNakPsnSequenceError = 0x60;
inline bool is_nak(uint8_t syndrome) { return (syndrome & 0xE0) == 0x60; }

inline constexpr uint32_t kPsnMask = 0xFFFFFF;
inline constexpr uint8_t kCnpDscp = 48;
inline constexpr uint32_t kHeaders = 14 + 20 + 8 + 12 + 4;  // Ethernet to BTH, and the ICRC
inline constexpr uint32_t kRethLen = 16, kAethLen = 4, kCnpReserved = 16;

// Linux's UDP source port for a QP pair (include/rdma/ib_verbs.h: rdma_calc_flow_label, then
// rdma_flow_label_to_udp_sport).
uint16_t roce_udp_sport(uint32_t local_qpn, uint32_t remote_qpn);

// Where a QP's packets go: addresses, the remote QP and the DSCP of its traffic class.
struct QpPath {
  rte_ether_addr src_mac{}, dst_mac{};  // dst: the next hop (the switch port the NIC is cabled to)
  uint32_t src_ip = 0, dst_ip = 0;      // network order
  uint32_t dest_qp = 0;
  uint16_t sport = 0xC000;
  uint8_t dscp = 26;
};

struct DataPacket {
  uint8_t opcode = kSendOnly;
  uint32_t psn = 0;
  uint32_t payload = 0;  // bytes of the message this packet carries
  bool ack_req = false;
  uint64_t va = 0;       // RETH, on the first (or only) packet of a WRITE
  uint32_t rkey = 0;
  uint32_t dma_len = 0;  // the whole message
};

// What a received RoCE packet says (parse).
struct Parsed {
  uint32_t src_ip = 0, dst_ip = 0;  // network order
  uint8_t dscp = 0, ecn = 0;
  uint16_t sport = 0;
  uint8_t opcode = 0;
  uint32_t dest_qp = 0, psn = 0;
  bool ack_req = false;
  uint32_t payload = 0;  // message bytes carried (without the pad)
  bool has_reth = false;
  uint64_t va = 0;
  uint32_t rkey = 0, dma_len = 0;
  bool has_aeth = false;
  uint8_t syndrome = 0;
  uint32_t msn = 0;
};
enum class ParseError : uint8_t { Ok, NotRoce, Truncated, BadIcrc, Unsupported };
const char* parse_error_name(ParseError e);

// Each builder writes one whole frame at `buf` (at most `cap` bytes) and returns its length, or 0
// when it does not fit. The payload bytes are a pattern of the PSN (a receiver never looks).
uint32_t build_data(uint8_t* buf, uint32_t cap, const QpPath& path, const DataPacket& d);
uint32_t build_ack(uint8_t* buf, uint32_t cap, const QpPath& path, uint32_t psn, uint8_t syndrome, uint32_t msn);
// A congestion notification to the sender of a marked packet: `path` leads back to it and its
// dest_qp is the sender's QP.
uint32_t build_cnp(uint8_t* buf, uint32_t cap, const QpPath& path);

// Reads an Ethernet frame (untagged IPv4); checks lengths and the ICRC.
ParseError parse(const uint8_t* frame, uint32_t len, Parsed& out);

}  // namespace rs::nic
