// 802.1Qbb PFC and 802.3x PAUSE frames: build them (PFC generation, emulated hosts) and check
// and decode them (PFC reception). Shared by the mac_control stage, the egress side and the
// emulated host so the format lives in one place.
#pragma once
#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <array>
#include <cstdint>

namespace rs {

inline constexpr uint16_t kEtherTypeMacControl = 0x8808;
inline constexpr uint16_t kMacControlOpPause = 0x0001;
inline constexpr uint16_t kMacControlOpPfc = 0x0101;
inline constexpr uint32_t kMacControlFrameLen = 60;  // on the wire 64 with the FCS
inline constexpr rte_ether_addr kMacControlDst{{0x01, 0x80, 0xc2, 0x00, 0x00, 0x01}};

struct PauseFrame {
  bool pfc = true;                     // false: 802.3x PAUSE (all priorities, quanta[0..7] equal)
  uint8_t enable = 0;                  // class-enable vector; PAUSE sets all eight bits
  std::array<uint16_t, 8> quanta{};    // per priority; 0 = resume (XON)
};

// Why a MAC control frame was rejected; Ok means `out` is filled in. There is no "too long":
// ethdevs may deliver padded frames, so any length >= 60 is accepted.
enum class MacControlError : uint8_t { Ok, TooShort, BadDestination, BadEtherType, UnknownOpcode, ReservedBits };

// Checks and decodes a frame that starts at its Ethernet header (untagged, no FCS). `len` is
// the frame length in bytes. Never reads past `len`.
MacControlError decode_mac_control(const uint8_t* frame, uint32_t len, PauseFrame& out);
const char* to_string(MacControlError e);

// Writes the 60-byte frame (padded with zeros) into `buf`.
void encode_pfc(uint8_t* buf, const rte_ether_addr& src, uint8_t enable, const std::array<uint16_t, 8>& quanta);
// Allocates an mbuf holding that frame; nullptr when the pool is empty.
rte_mbuf* make_pfc_mbuf(rte_mempool* pool, const rte_ether_addr& src, uint8_t enable,
                        const std::array<uint16_t, 8>& quanta);

// One quantum is 512 bit times at the receiving link's rate.
inline uint64_t pause_quanta_to_ns(uint32_t quanta, double speed_gbps) {
  return static_cast<uint64_t>(static_cast<double>(quanta) * 512.0 / speed_gbps + 0.5);
}

}  // namespace rs
