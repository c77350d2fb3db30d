// PFC watchdog state machine for one lossless (egress port, queue), SONiC's semantics. It is
// ticked from the owner worker's housekeeping every poll interval, never per packet.
//  - Storm: the queue has been paused *and* holding packets continuously for longer than the
//    detection time. `stalled_since` is when that started (0: not stalled now), so detection
//    lands in (T_detect, T_detect + T_poll].
//  - Restoration: in a storm, no PAUSE with a non-zero time (XOFF) arrived for longer than the
//    restoration time. XON frames (time 0) never count as PAUSE.
//  - The action is applied by the owner: drop (flush, drop arrivals, stop sending PFC for the
//    PG), forward (ignore received PAUSE), alert (count only).
#pragma once
#include <cstdint>

#include "dataplane/tm/buffer/mmu_config.h"

namespace rs {

class PfcWatchdogQueue {
 public:
  enum class Event : uint8_t { None, StormDetected, StormRestored };

  // now: tick time. stalled_since: start of the current paused-with-packets period, 0 if not.
  // last_xoff_ns: arrival time of the last XOFF for this priority (0: never).
  Event tick(const PfcwdConfig& cfg, uint64_t now, uint64_t stalled_since, uint64_t last_xoff_ns);
  // Stop or reconfiguration: leaves the storm state; returns true if a storm was ended.
  bool reset(uint64_t now);

  bool in_storm() const { return storm_; }
  uint64_t storms_detected() const { return detected_; }
  uint64_t storms_restored() const { return restored_; }
  uint64_t storm_started_ns() const { return storm_since_; }

 private:
  bool storm_ = false;
  uint64_t storm_since_ = 0;
  uint64_t detected_ = 0;
  uint64_t restored_ = 0;
};

}  // namespace rs
