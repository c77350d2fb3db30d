// PFC watchdog state machine (SONiC semantics): detect a queue stuck paused with packets,
// restore once the peer has stopped sending XOFF. Pure logic on injected times, so it is
// tested tick by tick without a clock.
#include "dataplane/tm/pfc/pfc_watchdog.h"

#include <algorithm>

namespace rs {

PfcWatchdogQueue::Event PfcWatchdogQueue::tick(const PfcwdConfig& cfg, uint64_t now, uint64_t stalled_since,
                                               uint64_t last_xoff_ns) {
  if (!cfg.enabled) return Event::None;
  if (!storm_) {
    // Strictly longer than the detection time; a stall stamped after `now` (the owner read
    // its clock later than ours) is not a stall yet rather than an unsigned wrap-around.
    if (stalled_since != 0 && now > stalled_since && now - stalled_since > cfg.detection_ns) {
      storm_ = true;
      storm_since_ = now;
      ++detected_;
      return Event::StormDetected;
    }
    return Event::None;
  }
  // Quiet time counts from the later of the storm's start and the last XOFF: XOFFs that
  // arrived before detection are what caused the storm and must not cut the quiet time short.
  const uint64_t quiet_from = std::max(last_xoff_ns, storm_since_);
  if (now > quiet_from && now - quiet_from > cfg.restoration_ns) {
    storm_ = false;
    ++restored_;
    return Event::StormRestored;
  }
  return Event::None;
}

bool PfcWatchdogQueue::reset(uint64_t /*now*/) {
  // storm_started_ns() keeps the last storm's start for stats; only the state is left.
  if (!storm_) return false;
  storm_ = false;
  ++restored_;
  return true;
}

}  // namespace rs
