#include "dataplane/nic/roce_wire.h"

#include <rte_byteorder.h>
#include <rte_ip.h>
#include <rte_udp.h>

#include <cstring>

#include "dataplane/proto/icrc.h"

namespace rs::nic {

namespace {
constexpr uint32_t kL3 = 14, kUdp = kL3 + 20, kBth = kUdp + 8, kExt = kBth + 12;
constexpr uint16_t kRocePort = 4791;

void put16(uint8_t* p, uint16_t v) { p[0] = static_cast<uint8_t>(v >> 8), p[1] = static_cast<uint8_t>(v); }
void put24(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v >> 16), p[1] = static_cast<uint8_t>(v >> 8), p[2] = static_cast<uint8_t>(v);
}
void put32(uint8_t* p, uint32_t v) { put16(p, static_cast<uint16_t>(v >> 16)), put16(p + 2, static_cast<uint16_t>(v)); }
uint16_t get16(const uint8_t* p) { return static_cast<uint16_t>(p[0] << 8 | p[1]); }
uint32_t get24(const uint8_t* p) { return uint32_t{p[0]} << 16 | uint32_t{p[1]} << 8 | p[2]; }
uint32_t get32(const uint8_t* p) { return uint32_t{get16(p)} << 16 | get16(p + 2); }

// Ethernet, IPv4, UDP and BTH for a datagram of `l4_len` bytes after the UDP header's start
// (UDP header, BTH, extension headers, payload with its pad, ICRC); the ICRC is left to seal().
void headers(uint8_t* b, const QpPath& path, uint32_t udp_len, uint8_t tos, uint8_t opcode, uint8_t pad, uint32_t psn,
             bool ack_req) {
  std::memcpy(b, &path.dst_mac, 6);
  std::memcpy(b + 6, &path.src_mac, 6);
  put16(b + 12, RTE_ETHER_TYPE_IPV4);
  uint8_t* ip = b + kL3;
  std::memset(ip, 0, 20);
  ip[0] = 0x45;
  ip[1] = tos;
  put16(ip + 2, static_cast<uint16_t>(20 + udp_len));
  put16(ip + 6, 0x4000);  // DF
  ip[8] = 64;
  ip[9] = IPPROTO_UDP;
  std::memcpy(ip + 12, &path.src_ip, 4);
  std::memcpy(ip + 16, &path.dst_ip, 4);
  auto* h = reinterpret_cast<rte_ipv4_hdr*>(ip);
  h->hdr_checksum = rte_ipv4_cksum(h);
  uint8_t* udp = b + kUdp;
  put16(udp, path.sport);
  put16(udp + 2, kRocePort);
  put16(udp + 4, static_cast<uint16_t>(udp_len));
  put16(udp + 6, 0);  // RoCEv2 sends no UDP checksum
  uint8_t* bth = b + kBth;
  bth[0] = opcode;
  bth[1] = static_cast<uint8_t>(pad << 4);  // SE 0, M 0, PadCnt, TVer 0
  put16(bth + 2, 0xFFFF);                   // the default P_Key
  bth[4] = 0;
  put24(bth + 5, path.dest_qp & kPsnMask);
  bth[8] = ack_req ? 0x80 : 0;
  put24(bth + 9, psn & kPsnMask);
}
uint32_t seal(uint8_t* b, uint32_t len) {
  const uint32_t icrc = roce_icrc(b + kL3, len - kL3, false);
  std::memcpy(b + len - 4, &icrc, 4);  // roce_icrc returns it in the order it is stored
  return len;
}
}  // namespace

const char* opcode_name(uint8_t op) {
  switch (op) {
    case kSendFirst: return "SEND_FIRST";
    case kSendMiddle: return "SEND_MIDDLE";
    case kSendLast: return "SEND_LAST";
    case kSendOnly: return "SEND_ONLY";
    case kWriteFirst: return "RDMA_WRITE_FIRST";
    case kWriteMiddle: return "RDMA_WRITE_MIDDLE";
    case kWriteLast: return "RDMA_WRITE_LAST";
    case kWriteOnly: return "RDMA_WRITE_ONLY";
    case kAcknowledge: return "ACKNOWLEDGE";
    case kCnp: return "CNP";
    default: return "?";
  }
}

const char* parse_error_name(ParseError e) {
  switch (e) {
    case ParseError::Ok: return "ok";
    case ParseError::NotRoce: return "not_roce";
    case ParseError::Truncated: return "truncated";
    case ParseError::BadIcrc: return "bad_icrc";
    case ParseError::Unsupported: return "unsupported";
  }
  return "?";
}

uint16_t roce_udp_sport(uint32_t local_qpn, uint32_t remote_qpn) {
  uint64_t v = uint64_t{local_qpn} * remote_qpn;
  v ^= v >> 20;
  v ^= v >> 40;
  const auto fl = static_cast<uint32_t>(v & 0xFFFFF);
  uint32_t low = fl & 0x03FFF;
  low ^= (fl & 0xFC000) >> 14;
  return static_cast<uint16_t>(low | 0xC000);
}

uint32_t build_data(uint8_t* buf, uint32_t cap, const QpPath& path, const DataPacket& d) {
  const bool reth = d.opcode == kWriteFirst || d.opcode == kWriteOnly;
  const uint32_t padded = (d.payload + 3) & ~3u;
  const uint32_t ext = reth ? kRethLen : 0;
  const uint32_t len = kHeaders + ext + padded;
  if (len > cap || len - 14 > 65535) return 0;  // an IPv4 datagram's length is 16 bits
  headers(buf, path, len - kUdp, static_cast<uint8_t>(path.dscp << 2 | 2), d.opcode, static_cast<uint8_t>(padded - d.payload), d.psn,
          d.ack_req);
  uint8_t* p = buf + kExt;
  if (reth) {
    put32(p, static_cast<uint32_t>(d.va >> 32));
    put32(p + 4, static_cast<uint32_t>(d.va));
    put32(p + 8, d.rkey);
    put32(p + 12, d.dma_len);
    p += kRethLen;
  }
  std::memset(p, static_cast<int>(d.psn & 0xFF), padded);
  return seal(buf, len);
}

uint32_t build_ack(uint8_t* buf, uint32_t cap, const QpPath& path, uint32_t psn, uint8_t syndrome, uint32_t msn) {
  const uint32_t len = kHeaders + kAethLen;
  if (len > cap) return 0;
  // ACKs go in the class of the data they answer, ECN-capable as the NIC's other packets.
  headers(buf, path, len - kUdp, static_cast<uint8_t>(path.dscp << 2 | 2), kAcknowledge, 0, psn, false);
  buf[kExt] = syndrome;
  put24(buf + kExt + 1, msn & kPsnMask);
  return seal(buf, len);
}

uint32_t build_cnp(uint8_t* buf, uint32_t cap, const QpPath& path) {
  const uint32_t len = kHeaders + kCnpReserved;
  if (len > cap) return 0;
  headers(buf, path, len - kUdp, static_cast<uint8_t>(kCnpDscp << 2), kCnp, 0, 0, false);
  std::memset(buf + kExt, 0, kCnpReserved);
  return seal(buf, len);
}

ParseError parse(const uint8_t* f, uint32_t len, Parsed& out) {
  out = Parsed{};
  if (len < kL3 + 20 || get16(f + 12) != RTE_ETHER_TYPE_IPV4) return ParseError::NotRoce;
  const uint8_t* ip = f + kL3;
  if (ip[0] != 0x45 || ip[9] != IPPROTO_UDP) return ParseError::NotRoce;
  if (len < kBth) return ParseError::Truncated;
  const uint8_t* udp = f + kUdp;
  if (get16(udp + 2) != kRocePort) return ParseError::NotRoce;
  const uint32_t ip_len = get16(ip + 2), udp_len = get16(udp + 4);
  if (ip_len < 20 + 8 + 12 + 4 || kL3 + ip_len > len || udp_len != ip_len - 20) return ParseError::Truncated;
  if (!roce_icrc_ok(ip, ip_len, false)) return ParseError::BadIcrc;
  const uint8_t* bth = f + kBth;
  std::memcpy(&out.src_ip, ip + 12, 4);
  std::memcpy(&out.dst_ip, ip + 16, 4);
  out.dscp = ip[1] >> 2;
  out.ecn = ip[1] & 3;
  out.sport = get16(udp);
  out.opcode = bth[0];
  out.dest_qp = get24(bth + 5);
  out.ack_req = bth[8] & 0x80;
  out.psn = get24(bth + 9);
  const uint32_t pad = (bth[1] >> 4) & 3;
  uint32_t ext = 0;
  if (out.opcode == kWriteFirst || out.opcode == kWriteOnly) {
    ext = kRethLen;
  } else if (out.opcode == kAcknowledge) {
    ext = kAethLen;
  } else if (out.opcode == kCnp) {
    ext = kCnpReserved;
  } else if (!is_data(out.opcode)) {
    return ParseError::Unsupported;
  }
  const uint32_t fixed = 8 + 12 + ext + 4;
  if (udp_len < fixed + pad) return ParseError::Truncated;
  const uint8_t* x = f + kExt;
  if (out.opcode == kWriteFirst || out.opcode == kWriteOnly) {
    out.has_reth = true;
    out.va = uint64_t{get32(x)} << 32 | get32(x + 4);
    out.rkey = get32(x + 8);
    out.dma_len = get32(x + 12);
  } else if (out.opcode == kAcknowledge) {
    out.has_aeth = true;
    out.syndrome = x[0];
    out.msn = get24(x + 1);
  }
  out.payload = out.opcode == kCnp ? 0 : udp_len - fixed - pad;
  return ParseError::Ok;
}

}  // namespace rs::nic
