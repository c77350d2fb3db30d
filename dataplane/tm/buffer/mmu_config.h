// Lossless-fabric settings of the traffic manager, resolved from SONiC's names (BUFFER_POOL,
// BUFFER_PROFILE, BUFFER_PG, WRED_PROFILE, PFC_WD, PORT_QOS_MAP) into plain per-port arrays.
// One unit convention everywhere: bytes for buffers and thresholds, nanoseconds for time.
#pragma once
#include <array>
#include <cstdint>

namespace rs {

inline constexpr int8_t kNoDynamicTh = INT8_MIN;  // the queue uses its static limit only

// Shared buffer pool (SONiC BUFFER_POOL): every packet in the switch occupies whole cells.
struct BufferPoolConfig {
  // bytes; 0 (no `buffer.pool.size` given): sized to hold every queue's static limit plus the
  // lossless headroom, so the pool never fills before a queue does and only a configured
  // pool (or a dynamic threshold) brings shared-buffer behaviour in.
  uint64_t size = 0;
  uint32_t cell_size = 256;     // bytes
  uint32_t mtu = 9100;          // for headroom; SONiC's default port MTU
};

// One ingress priority group of one port (SONiC BUFFER_PG + a lossless BUFFER_PROFILE).
// Here xoff/xon are thresholds on the PG's bytes in the switch, and headroom is the
// reservation above xoff that absorbs what is still on the wire after PAUSE is sent.
// (SONiC's profile calls that reservation `xoff`; the thresholds are what one configures.)
struct PgSettings {
  bool lossless = false;   // pfc_enable lists this priority and a PG profile exists
  uint64_t xoff = 0;       // PAUSE is sent when the PG holds >= xoff bytes
  uint64_t xon = 0;        // resume (quanta 0) when it falls to < xon bytes
  uint64_t headroom = 0;   // bytes above xoff before a lossless packet is dropped
  uint64_t headroom_min = 0;  // computed from speed, cable length and MTU (shown in stats)
};

// SONiC WRED_PROFILE, green colour only (the switch does not colour packets).
enum class EcnMode : uint8_t { None, Green, Yellow, Red, GreenYellow, GreenRed, YellowRed, All };
struct WredProfile {
  bool enabled = false;       // a profile is attached to the queue
  bool wred_drop = false;     // wred_green_enable: non-ECT lossy packets dropped by the law
  bool ecn_mark = false;      // ecn mode covers green: ECT packets are marked CE by the law
  uint64_t kmin = 0;          // green_min_threshold, bytes of queue depth
  uint64_t kmax = 0;          // green_max_threshold
  uint32_t pmax_percent = 0;  // green_drop_probability, 0..100
};

enum class PfcwdAction : uint8_t { Drop, Forward, Alert };
// SONiC PFC_WD. Defaults are SONiC's: 200 ms detection and restoration, 200 ms polling.
struct PfcwdConfig {
  bool enabled = false;
  PfcwdAction action = PfcwdAction::Drop;
  uint64_t detection_ns = 200'000'000;
  uint64_t restoration_ns = 200'000'000;
  uint64_t poll_ns = 200'000'000;
};

// Per egress/ingress port (the same physical port).
struct PortLosslessConfig {
  double cable_length_m = 5;                 // SONiC CABLE_LENGTH; drives headroom_min
  std::array<PgSettings, 8> pg{};            // by priority group
  std::array<int8_t, 8> dynamic_th{kNoDynamicTh, kNoDynamicTh, kNoDynamicTh, kNoDynamicTh,
                                   kNoDynamicTh, kNoDynamicTh, kNoDynamicTh, kNoDynamicTh};  // per queue
  // SONiC's queue profile `size`: bytes a queue may always hold, whatever the dynamic threshold
  // or the shared pool say; reserved out of the pool.
  std::array<uint64_t, 8> reserved{};
  std::array<WredProfile, 8> wred{};         // per queue
  uint16_t pfc_quanta = 0xffff;              // pause time we send with XOFF
};

// Switch-wide part.
struct MmuConfig {
  BufferPoolConfig pool;
  uint8_t pfc_enable = 0;                    // bit p: priority p is lossless (PORT_QOS_MAP pfc_enable)
  std::array<uint8_t, 8> tc_to_pg{0, 1, 2, 3, 4, 5, 6, 7};
  std::array<uint8_t, 8> pfc_to_queue{0, 1, 2, 3, 4, 5, 6, 7};  // PFC priority -> paused egress queue
  PfcwdConfig pfcwd;
};

// The peer's response time after it receives PAUSE, in pause quanta (×64 bytes), by speed.
uint32_t response_quanta(double speed_gbps);
// Minimum headroom for a lossless PG: one MTU being sent when PAUSE lands, the round trip on
// the cable (5 ns/m each way) at line rate, and the peer's response time.
uint64_t headroom_min_bytes(double speed_gbps, double cable_length_m, uint32_t mtu);

}  // namespace rs
