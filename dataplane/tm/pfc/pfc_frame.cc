// 802.1Qbb PFC / 802.3x PAUSE wire format: the one place that knows the byte layout.
#include "dataplane/tm/pfc/pfc_frame.h"

#include <cstring>

namespace rs {
namespace {

// Offsets in an untagged MAC control frame.
constexpr uint32_t kOffEtherType = 12;
constexpr uint32_t kOffOpcode = 14;
constexpr uint32_t kOffParams = 16;  // PAUSE: pause time; PFC: class-enable vector, then 8 times

uint16_t load_be16(const uint8_t* p) { return static_cast<uint16_t>(p[0] << 8 | p[1]); }
void store_be16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v >> 8);
  p[1] = static_cast<uint8_t>(v);
}

}  // namespace

MacControlError decode_mac_control(const uint8_t* frame, uint32_t len, PauseFrame& out) {
  // Ethdevs may hand us the minimum frame plus padding (or a trailing FCS), so anything at
  // least 60 bytes long is acceptable; every field we read lies in the first 34 bytes.
  if (len < kMacControlFrameLen) return MacControlError::TooShort;
  if (std::memcmp(frame, kMacControlDst.addr_bytes, RTE_ETHER_ADDR_LEN) != 0) return MacControlError::BadDestination;
  if (load_be16(frame + kOffEtherType) != kEtherTypeMacControl) return MacControlError::BadEtherType;
  const uint16_t op = load_be16(frame + kOffOpcode);
  const uint8_t* params = frame + kOffParams;
  if (op == kMacControlOpPfc) {
    const uint16_t cev = load_be16(params);
    // 802.1Qbb reserves the high octet; a frame that sets it was not built by a conforming peer.
    if (cev >> 8 != 0) return MacControlError::ReservedBits;
    out.pfc = true;
    out.enable = static_cast<uint8_t>(cev);
    for (uint32_t i = 0; i < 8; ++i) out.quanta[i] = load_be16(params + 2 + 2 * i);
    return MacControlError::Ok;
  }
  if (op == kMacControlOpPause) {
    // 802.3x pauses the whole link: modelled as every priority enabled with the same time.
    const uint16_t t = load_be16(params);
    out.pfc = false;
    out.enable = 0xff;
    out.quanta.fill(t);
    return MacControlError::Ok;
  }
  return MacControlError::UnknownOpcode;
}

const char* to_string(MacControlError e) {
  switch (e) {
    case MacControlError::Ok: return "ok";
    case MacControlError::TooShort: return "too_short";
    case MacControlError::BadDestination: return "bad_destination";
    case MacControlError::BadEtherType: return "bad_ethertype";
    case MacControlError::UnknownOpcode: return "unknown_opcode";
    case MacControlError::ReservedBits: return "reserved_bits";
  }
  return "unknown";
}

void encode_pfc(uint8_t* buf, const rte_ether_addr& src, uint8_t enable, const std::array<uint16_t, 8>& quanta) {
  std::memset(buf, 0, kMacControlFrameLen);
  std::memcpy(buf, kMacControlDst.addr_bytes, RTE_ETHER_ADDR_LEN);
  std::memcpy(buf + RTE_ETHER_ADDR_LEN, src.addr_bytes, RTE_ETHER_ADDR_LEN);
  store_be16(buf + kOffEtherType, kEtherTypeMacControl);
  store_be16(buf + kOffOpcode, kMacControlOpPfc);
  store_be16(buf + kOffParams, enable);  // high octet reserved: zero
  for (uint32_t i = 0; i < 8; ++i) store_be16(buf + kOffParams + 2 + 2 * i, quanta[i]);
}

rte_mbuf* make_pfc_mbuf(rte_mempool* pool, const rte_ether_addr& src, uint8_t enable,
                        const std::array<uint16_t, 8>& quanta) {
  rte_mbuf* m = rte_pktmbuf_alloc(pool);
  if (m == nullptr) return nullptr;
  auto* p = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, kMacControlFrameLen));
  if (p == nullptr) {  // a pool whose data room is smaller than a minimum frame
    rte_pktmbuf_free(m);
    return nullptr;
  }
  encode_pfc(p, src, enable, quanta);
  return m;
}

}  // namespace rs
