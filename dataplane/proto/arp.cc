// ARP wire format (RFC 826) and the shared Ethernet framing: the one place that knows their
// byte layout.
#include "dataplane/proto/arp.h"

#include <cstring>

namespace rs::proto {
namespace {

// Offsets in the ARP packet (from its first byte).
constexpr uint32_t kOffHtype = 0;
constexpr uint32_t kOffPtype = 2;
constexpr uint32_t kOffHlen = 4;
constexpr uint32_t kOffPlen = 5;
constexpr uint32_t kOffOp = 6;
constexpr uint32_t kOffSha = 8;
constexpr uint32_t kOffSpa = 14;
constexpr uint32_t kOffTha = 18;
constexpr uint32_t kOffTpa = 24;

constexpr uint16_t kHtypeEthernet = 1;

}  // namespace

const char* arp_error_name(ArpError e) {
  switch (e) {
    case ArpError::Ok: return "ok";
    case ArpError::Short: return "short";
    case ArpError::BadHardware: return "bad_hardware";
    case ArpError::BadProtocol: return "bad_protocol";
    case ArpError::BadOpcode: return "bad_opcode";
  }
  return "unknown";
}

ArpError parse_arp(const uint8_t* frame, uint32_t len, uint16_t l3_offset, ArpPacket& out) {
  // Subtraction only after the offset is known to lie inside the frame: no wrap-around.
  if (l3_offset > len || len - l3_offset < kArpLen) return ArpError::Short;
  const uint8_t* p = frame + l3_offset;
  if (load_be16(p + kOffHtype) != kHtypeEthernet || p[kOffHlen] != RTE_ETHER_ADDR_LEN) return ArpError::BadHardware;
  if (load_be16(p + kOffPtype) != RTE_ETHER_TYPE_IPV4 || p[kOffPlen] != 4) return ArpError::BadProtocol;
  const uint16_t op = load_be16(p + kOffOp);
  if (op != kArpOpRequest && op != kArpOpReply) return ArpError::BadOpcode;
  out.op = op;
  std::memcpy(out.sha.addr_bytes, p + kOffSha, RTE_ETHER_ADDR_LEN);
  std::memcpy(&out.spa, p + kOffSpa, 4);
  std::memcpy(out.tha.addr_bytes, p + kOffTha, RTE_ETHER_ADDR_LEN);
  std::memcpy(&out.tpa, p + kOffTpa, 4);
  return ArpError::Ok;
}

uint32_t build_arp(uint8_t* buf, uint32_t cap, const rte_ether_addr& eth_dst, const rte_ether_addr& eth_src,
                   const ArpPacket& a) {
  uint32_t frame_len = 0;
  uint8_t* p = start_frame(buf, cap, eth_dst, eth_src, RTE_ETHER_TYPE_ARP, kArpLen, frame_len);
  if (p == nullptr) return 0;
  store_be16(p + kOffHtype, kHtypeEthernet);
  store_be16(p + kOffPtype, RTE_ETHER_TYPE_IPV4);
  p[kOffHlen] = RTE_ETHER_ADDR_LEN;
  p[kOffPlen] = 4;
  store_be16(p + kOffOp, a.op);
  std::memcpy(p + kOffSha, a.sha.addr_bytes, RTE_ETHER_ADDR_LEN);
  std::memcpy(p + kOffSpa, &a.spa, 4);
  std::memcpy(p + kOffTha, a.tha.addr_bytes, RTE_ETHER_ADDR_LEN);
  std::memcpy(p + kOffTpa, &a.tpa, 4);
  return frame_len;
}

uint8_t* start_frame(uint8_t* buf, uint32_t cap, const rte_ether_addr& dst, const rte_ether_addr& src,
                     uint16_t ether_type, uint32_t l3_len, uint32_t& frame_len) {
  frame_len = 0;
  // Compared before adding so a huge l3_len cannot wrap the sum.
  if (cap < kEthHeaderLen || l3_len > cap - kEthHeaderLen) return nullptr;
  const uint32_t used = kEthHeaderLen + l3_len;
  const uint32_t padded = used < kMinFrameLen ? kMinFrameLen : used;
  if (padded > cap) return nullptr;
  std::memcpy(buf, dst.addr_bytes, RTE_ETHER_ADDR_LEN);
  std::memcpy(buf + RTE_ETHER_ADDR_LEN, src.addr_bytes, RTE_ETHER_ADDR_LEN);
  store_be16(buf + 2 * RTE_ETHER_ADDR_LEN, ether_type);
  std::memset(buf + used, 0, padded - used);
  frame_len = padded;
  return buf + kEthHeaderLen;
}

}  // namespace rs::proto
