// A fabric on one machine: whole switches (each a Switch, the same data-plane code that forwards
// on real NICs) joined by emulated cables (emulated_link.h), with emulated hosts and NICs on
// their host ports, all on one virtual clock.
//
// Virtual time: the clock advances by `step_ns` while anything is in motion and jumps over
// quiet stretches (nothing queued, nothing on a cable, no host about to send) to the next thing
// that will happen. Nothing reads the machine's clock, and each switch and cable draws from its
// own seeded generator, so the same spec gives the same counters on every run, however slowly
// the machine runs it. A step is the resolution of the emulation: a cable's arrivals and a
// shaper's departures fall on step boundaries (an event between two boundaries happens at the
// next one).
//
// Windows: cables are the only thing switches share, and a frame sent at t arrives after
// t + the cable's delay. So the fabric runs in windows of steps no longer than the shortest
// cable's delay: nothing sent in a window arrives in it, and within a window each switch can be
// polled through all the window's steps without looking at any other (conservative
// synchronisation, docs/fabric.md). Threads: the switches are shared out among `threads`
// threads, which poll theirs through a window and meet at its end; whichever thread runs first,
// no switch sees in a window what another sent in it, so the results are a single thread's.
// Cable events, the control plane's timers and the quiet-stretch jumps happen between windows
// (a window ends at the next event or timer).
#pragma once
#include <nlohmann/json.hpp>

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <thread>
#include <string>
#include <vector>

#include "dataplane/fabric/emulated_link.h"
#include "dataplane/switch/switch.h"

namespace rs {

struct FabricCable {
  std::string name;
  uint16_t a_switch = 0, a_port = 0, b_switch = 0, b_port = 0;
  LinkParams params;
  // Scheduled cuts and repairs: (time after the start, up), in time order.
  std::vector<std::pair<uint64_t, bool>> events;
};

struct FabricSwitch {
  std::string name;
  SwitchConfig cfg;  // its cable ports have kind Link; the fabric connects them
};

struct FabricSpec {
  std::vector<FabricSwitch> switches;
  std::vector<FabricCable> cables;
  uint64_t step_ns = 100;
  // The longest jump over a quiet stretch: timers that nothing announces (PFC refresh, DCQCN,
  // retransmission) still run at least this often.
  uint64_t max_jump_ns = 10'000;
  // Threads that poll the switches (each switch always by the same one). Results do not depend
  // on it: see Fabric's comment.
  unsigned threads = 1;
};

// The books of the whole fabric, end to end: what hosts sent into it (and what the switches
// made: mirror copies, control frames, flood copies, PFC frames to each other) was delivered to hosts, is queued, in a
// worker ring or held, was dropped (counted), is on a cable, or was lost on one.
struct FabricTotals {
  uint64_t from_hosts = 0, made = 0;
  uint64_t to_hosts = 0, queued = 0, in_flight = 0, dropped = 0, held = 0;
  uint64_t cable_in_flight = 0, cable_lost = 0;
  bool balanced() const {
    return from_hosts + made == to_hosts + queued + in_flight + dropped + held + cable_in_flight + cable_lost;
  }
};

class Fabric {
 public:
  // Builds every cable and switch or throws std::runtime_error naming what is wrong.
  Fabric(FabricSpec spec, uint64_t t0_ns);
  ~Fabric();
  Fabric(const Fabric&) = delete;
  Fabric& operator=(const Fabric&) = delete;

  // Runs the fabric until the virtual clock reaches `t_ns`.
  void run_until(uint64_t t_ns);
  // The fabric's control plane: `fn` runs on the thread that calls run_until when the clock
  // reaches `t_ns` after the start (on the step boundary at or after it), after that step's
  // cable events and before its polls, while no switch is being polled. Same time: in the order
  // given. A quiet fabric's clock does not jump over it.
  void at(uint64_t t_ns, std::function<void()> fn) { timers_.emplace(t_ns, std::move(fn)); }
  const FabricSpec& spec() const { return spec_; }
  uint64_t now() const { return now_; }
  uint64_t start() const { return t0_; }
  uint64_t steps() const { return steps_; }   // polls of the whole fabric so far
  uint64_t window_ns() const { return window_ns_; }
  uint64_t jumps() const { return jumps_; }   // quiet stretches skipped

  std::size_t num_switches() const { return switches_.size(); }
  Switch& at(std::size_t i) { return *switches_[i]; }
  const Switch& at(std::size_t i) const { return *switches_[i]; }
  const std::string& switch_name(std::size_t i) const { return spec_.switches[i].name; }
  std::size_t num_cables() const { return cables_.size(); }
  EmulatedLink& cable(std::size_t i) { return *cables_[i]; }
  const EmulatedLink& cable(std::size_t i) const { return *cables_[i]; }
  const FabricCable& cable_spec(std::size_t i) const { return spec_.cables[i]; }

  unsigned threads() const { return static_cast<unsigned>(shares_.size()); }
  // Which thread polls switch i (0: the caller of run_until).
  unsigned thread_of(std::size_t i) const { return thread_of_[i]; }

  FabricTotals totals() const;
  // Stops every switch (what is still queued is counted dropped, as a switch's shutdown does).
  void shutdown();

 private:
  bool quiet();
  uint64_t next_scheduled() const;  // the next cable event or timer (UINT64_MAX: none)
  uint64_t next_event_after_quiet();
  void poll_share(unsigned t);  // thread t's switches through the window: win_steps_ steps from now_
  void helper_loop(unsigned t);
  void stop_helpers();

  FabricSpec spec_;
  uint64_t t0_, now_;
  uint64_t steps_ = 0, jumps_ = 0;
  uint64_t window_ns_ = 0;  // the longest window: whole steps, under every cable's delay
  uint64_t win_steps_ = 0;  // the current window's (written before the helpers are released)
  // Windows start at one step after a jump and double while the fabric is busy: a quiet fabric
  // that wakes for a timer is quiet again a step later, and jumps then.
  uint64_t grow_steps_ = 1;
  std::vector<std::unique_ptr<EmulatedLink>> cables_;  // before the switches: they outlive them
  std::vector<std::unique_ptr<Switch>> switches_;
  std::vector<std::size_t> next_event_;  // per cable: its next scheduled event
  std::multimap<uint64_t, std::function<void()>> timers_;  // at(): time after the start
  bool stopped_ = false;
  // Threads: each one's switches; helpers 1.. wait for a new step number in `go_`, poll their
  // share and count themselves done in `done_` (step numbers only grow; 0 never runs).
  std::vector<std::vector<std::size_t>> shares_;
  std::vector<unsigned> thread_of_;
  std::vector<std::thread> helpers_;
  alignas(64) std::atomic<uint64_t> go_{0};
  alignas(64) std::atomic<uint64_t> done_{0};
  std::atomic<bool> quit_{false};
};

}  // namespace rs
