// PFC watchdog state machine, driven tick by tick on a simulated clock: storms start at
// arbitrary (non-aligned) times, and detection / restoration must land in their windows
// (T, T + T_poll] every time. Also the failure modes operators hit: short stalls, flapping,
// XON-only traffic, stale storms after stop, counters that drift, a disabled watchdog firing.
#include "dataplane/tm/pfc/pfc_watchdog.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>

#include "tests/support/constants.h"
#include "tests/support/seeded_rng.h"

namespace rs {
namespace {

using Event = PfcWatchdogQueue::Event;
using test::kMs;
using test::kUs;

using test::Rng;  // seeded: the same storms on every machine

PfcwdConfig sonic_defaults() {
  PfcwdConfig c;
  c.enabled = true;
  return c;  // 200 ms detection, restoration and polling
}

// Intervals that are not multiples of each other, so the windows are exercised off-grid.
PfcwdConfig odd_intervals() {
  PfcwdConfig c;
  c.enabled = true;
  c.detection_ns = 35 * kMs + 123;
  c.restoration_ns = 50 * kMs + 7;
  c.poll_ns = 10 * kMs + 3;
  return c;
}

// Periodic XOFFs from `first` every `period` until `last` (inclusive); the latest one at or
// before `now`, 0 if none yet.
struct XoffTrain {
  uint64_t first, period, last;
  uint64_t latest(uint64_t now) const {
    const uint64_t t = std::min(now, last);
    if (t < first) return 0;
    return first + (t - first) / period * period;
  }
};

// One storm at a random time: the queue stalls at `s` under periodic XOFFs; the drop action
// flushes it at detection (no longer stalled) while the peer keeps sending XOFF for a random
// while after. Checks both windows and returns nothing: failures are reported in place.
void one_storm(const PfcwdConfig& cfg, Rng& rng, PfcWatchdogQueue& wd, uint64_t& now) {
  const uint64_t s = now + rng.between(1, 3 * cfg.poll_ns);  // anywhere between ticks
  const XoffTrain xoff{s, rng.between(50 * kUs, 300 * kUs), 0};
  uint64_t detected_at = 0;
  for (int i = 0; i < 1000 && !detected_at; ++i) {
    now += cfg.poll_ns;
    const uint64_t stalled = now >= s ? s : 0;
    XoffTrain live = xoff;
    live.last = now;
    if (wd.tick(cfg, now, stalled, live.latest(now)) == Event::StormDetected) detected_at = now;
  }
  ASSERT_NE(detected_at, 0u);
  EXPECT_GT(detected_at - s, cfg.detection_ns);
  EXPECT_LE(detected_at - s, cfg.detection_ns + cfg.poll_ns);
  EXPECT_TRUE(wd.in_storm());
  EXPECT_EQ(wd.storm_started_ns(), detected_at);

  // The peer keeps pausing for 0 .. 3 restoration times more, then stops.
  XoffTrain after = xoff;
  after.last = detected_at + rng.between(0, 3 * cfg.restoration_ns);
  const uint64_t last_xoff = after.latest(after.last);
  const uint64_t quiet_from = std::max(last_xoff, detected_at);
  uint64_t restored_at = 0;
  for (int i = 0; i < 1000 && !restored_at; ++i) {
    now += cfg.poll_ns;
    if (wd.tick(cfg, now, 0, after.latest(now)) == Event::StormRestored) restored_at = now;
  }
  ASSERT_NE(restored_at, 0u);
  EXPECT_GT(restored_at - quiet_from, cfg.restoration_ns);
  EXPECT_LE(restored_at - quiet_from, cfg.restoration_ns + cfg.poll_ns);
  EXPECT_FALSE(wd.in_storm());
}

TEST(PfcWatchdog, DetectionAndRestorationWindows) {
  for (const auto& cfg : {sonic_defaults(), odd_intervals()}) {
    Rng rng(42);
    PfcWatchdogQueue wd;
    uint64_t now = rng.between(1, cfg.poll_ns);  // the tick grid itself is off zero
    constexpr int kStorms = 2000;
    for (int i = 0; i < kStorms; ++i) {
      one_storm(cfg, rng, wd, now);
      if (::testing::Test::HasFailure()) return;
    }
    // Counters are exact: one detection and one restoration per storm, nothing else.
    EXPECT_EQ(wd.storms_detected(), static_cast<uint64_t>(kStorms));
    EXPECT_EQ(wd.storms_restored(), static_cast<uint64_t>(kStorms));
  }
}

TEST(PfcWatchdog, DetectionIsStrictlyAfterTheDetectionTime) {
  const auto cfg = sonic_defaults();
  PfcWatchdogQueue wd;
  const uint64_t s = 1'000;
  EXPECT_EQ(wd.tick(cfg, s + cfg.detection_ns, s, s), Event::None) << "exactly T_detect is not a storm";
  EXPECT_EQ(wd.tick(cfg, s + cfg.detection_ns + 1, s, s), Event::StormDetected);
  const uint64_t d = s + cfg.detection_ns + 1;
  EXPECT_EQ(wd.tick(cfg, d + cfg.restoration_ns, 0, s), Event::None) << "exactly T_restore is not quiet enough";
  EXPECT_EQ(wd.tick(cfg, d + cfg.restoration_ns + 1, 0, s), Event::StormRestored);
}

TEST(PfcWatchdog, ShortStallsNeverTrigger) {
  for (const auto& cfg : {sonic_defaults(), odd_intervals()}) {
    Rng rng(7);
    PfcWatchdogQueue wd;
    uint64_t now = rng.between(1, cfg.poll_ns);
    for (int i = 0; i < 2000; ++i) {
      // A stall of up to exactly T_detect, then the queue drains or the pause ends.
      const uint64_t s = now + rng.between(1, cfg.poll_ns);
      const uint64_t len = rng.between(1, cfg.detection_ns);
      const uint64_t end = s + len;
      while (now < end + cfg.poll_ns) {
        now += cfg.poll_ns;
        const uint64_t stalled = now >= s && now < end ? s : 0;
        ASSERT_EQ(wd.tick(cfg, now, stalled, stalled ? now - 1 : s), Event::None)
            << "stall of " << len << " ns triggered";
      }
    }
    EXPECT_EQ(wd.storms_detected(), 0u);
    EXPECT_FALSE(wd.in_storm());
  }
}

TEST(PfcWatchdog, FlappingNeverTriggers) {
  // Paused-with-packets periods shorter than T_detect separated by short drains, under a
  // steady XOFF train, for 60 s of simulated time: each stall restarts the clock.
  for (const auto& cfg : {sonic_defaults(), odd_intervals()}) {
    Rng rng(99);
    PfcWatchdogQueue wd;
    uint64_t now = 5;
    uint64_t stall_start = 0, stall_end = 0, gap_end = 0;
    const uint64_t tick_step = std::max<uint64_t>(cfg.poll_ns / 20, 1);  // tick far more often than needed
    while (now < 60'000 * kMs) {
      now += tick_step;
      if (now >= gap_end && (stall_start == 0 || now >= stall_end)) {
        if (stall_start != 0) {  // end of a stall: drain for a little while
          stall_start = 0;
          gap_end = now + rng.between(1, 5 * kMs);
        } else {
          stall_start = now;
          stall_end = now + rng.between(1, cfg.detection_ns - tick_step);
        }
      }
      ASSERT_EQ(wd.tick(cfg, now, stall_start, now - 1), Event::None) << "flapping queue declared stormed";
    }
    EXPECT_EQ(wd.storms_detected(), 0u);
  }
}

TEST(PfcWatchdog, XonOnlyTrafficLetsItRestore) {
  // After detection the peer sends only XON (time 0) frames: they never advance last_xoff,
  // so the storm restores T_restore after detection (or after the last real XOFF).
  const auto cfg = odd_intervals();
  Rng rng(5);
  for (int rep = 0; rep < 500; ++rep) {
    PfcWatchdogQueue wd;
    const uint64_t s = rng.between(1, 10 * cfg.poll_ns);
    const uint64_t last_xoff = s + rng.between(0, cfg.detection_ns);  // XOFFs stop before detection
    uint64_t now = rng.between(1, cfg.poll_ns), detected = 0, restored = 0;
    while (!restored) {
      now += cfg.poll_ns;
      const uint64_t stalled = now >= s && !detected ? s : 0;
      const uint64_t lx = now >= last_xoff ? last_xoff : (now >= s ? now : 0);
      const Event e = wd.tick(cfg, now, stalled, lx);
      if (e == Event::StormDetected) detected = now;
      if (e == Event::StormRestored) restored = now;
      ASSERT_LT(now, s + 100 * cfg.poll_ns) << "never restored";
    }
    ASSERT_NE(detected, 0u);
    const uint64_t quiet_from = std::max(detected, last_xoff);
    EXPECT_GT(restored - quiet_from, cfg.restoration_ns);
    EXPECT_LE(restored - quiet_from, cfg.restoration_ns + cfg.poll_ns);
  }
}

TEST(PfcWatchdog, SteadyXoffKeepsTheStorm) {
  // XOFFs arriving more often than T_restore: never restored, however long.
  const auto cfg = sonic_defaults();
  PfcWatchdogQueue wd;
  uint64_t now = 17;
  const uint64_t s = 100;
  while (!wd.in_storm()) {
    now += cfg.poll_ns;
    wd.tick(cfg, now, now >= s ? s : 0, now);
  }
  for (int i = 0; i < 10'000; ++i) {
    now += cfg.poll_ns;
    const uint64_t lx = now - (static_cast<uint64_t>(i) * 7919 % cfg.restoration_ns);  // within T_restore
    ASSERT_EQ(wd.tick(cfg, now, 0, lx), Event::None);
  }
  EXPECT_TRUE(wd.in_storm());
  EXPECT_EQ(wd.storms_restored(), 0u);
}

TEST(PfcWatchdog, ResetDuringAStorm) {
  const auto cfg = sonic_defaults();
  PfcWatchdogQueue wd;
  EXPECT_FALSE(wd.reset(5)) << "nothing to end";
  EXPECT_EQ(wd.storms_restored(), 0u);

  const uint64_t s = 1'234'567;
  uint64_t now = 3;
  while (!wd.in_storm()) {
    now += cfg.poll_ns;
    wd.tick(cfg, now, now >= s ? s : 0, now);
  }
  EXPECT_TRUE(wd.reset(now + 1));
  EXPECT_FALSE(wd.in_storm());
  EXPECT_EQ(wd.storms_detected(), 1u);
  EXPECT_EQ(wd.storms_restored(), 1u) << "a storm ended by stop counts as restored";
  EXPECT_FALSE(wd.reset(now + 2)) << "a second reset ends nothing";
  EXPECT_EQ(wd.storms_restored(), 1u);
  // No stale state: with the queue idle and XOFFs still fresh, nothing happens; no restore event.
  for (int i = 0; i < 10; ++i) {
    now += cfg.poll_ns;
    EXPECT_EQ(wd.tick(cfg, now, 0, now), Event::None);
  }
  // A new stall after restart is detected on its own timing.
  const uint64_t s2 = now + 12'345;
  uint64_t detected = 0;
  while (!detected) {
    now += cfg.poll_ns;
    if (wd.tick(cfg, now, now >= s2 ? s2 : 0, now) == Event::StormDetected) detected = now;
  }
  EXPECT_GT(detected - s2, cfg.detection_ns);
  EXPECT_LE(detected - s2, cfg.detection_ns + cfg.poll_ns);
  EXPECT_EQ(wd.storms_detected(), 2u);
}

TEST(PfcWatchdog, DisabledNeverFires) {
  PfcwdConfig cfg = sonic_defaults();
  cfg.enabled = false;
  PfcWatchdogQueue wd;
  uint64_t now = 1;
  for (int i = 0; i < 10'000; ++i) {
    now += cfg.poll_ns;
    ASSERT_EQ(wd.tick(cfg, now, 1, i % 2 ? now : 0), Event::None);
  }
  EXPECT_FALSE(wd.in_storm());
  EXPECT_EQ(wd.storms_detected(), 0u);
  EXPECT_EQ(wd.storms_restored(), 0u);
}

TEST(PfcWatchdog, StallStampedAfterNowIsNotAStorm) {
  // The owner may read its clock after the housekeeping tick took `now`: no wrap-around.
  const auto cfg = sonic_defaults();
  PfcWatchdogQueue wd;
  EXPECT_EQ(wd.tick(cfg, 1'000, 1'001, 0), Event::None);
  EXPECT_FALSE(wd.in_storm());
}

}  // namespace
}  // namespace rs
