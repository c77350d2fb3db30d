#include "dataplane/fabric/fabric.h"

#include <fmt/core.h>
#include <pthread.h>
#include <rte_lcore.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <stdexcept>
#include <string_view>

namespace rs {

namespace {
// RCU: retired tables are freed every so many steps (the control plane rarely changes them).
constexpr uint64_t kReclaimEvery = 1024;
// A window's most steps: the quiet-stretch jump is decided at its end.
constexpr uint64_t kMaxWindowSteps = 64;

// Waits until `a` is no longer `v` and returns its new value: a spin first (a step is short),
// then asleep until notified.
uint64_t wait_while(const std::atomic<uint64_t>& a, uint64_t v) {
  uint64_t x = a.load(std::memory_order_acquire);
  for (int spin = 0; x == v && spin < 4096; ++spin) {
    __builtin_ia32_pause();
    x = a.load(std::memory_order_acquire);
  }
  while (x == v) {
    a.wait(v, std::memory_order_acquire);
    x = a.load(std::memory_order_acquire);
  }
  return x;
}
}  // namespace

Fabric::Fabric(FabricSpec spec, uint64_t t0_ns) : spec_(std::move(spec)), t0_(t0_ns), now_(t0_ns) {
  if (spec_.step_ns == 0) throw std::runtime_error("fabric: step_ns must be above 0");
  // Each cable port is named by exactly one cable.
  std::vector<std::vector<int>> cabled(spec_.switches.size());
  for (std::size_t s = 0; s < spec_.switches.size(); ++s) cabled[s].assign(spec_.switches[s].cfg.ports.size(), -1);
  for (std::size_t c = 0; c < spec_.cables.size(); ++c) {
    const FabricCable& k = spec_.cables[c];
    for (auto [sw, port] : {std::pair{k.a_switch, k.a_port}, std::pair{k.b_switch, k.b_port}}) {
      if (sw >= spec_.switches.size()) throw std::runtime_error(fmt::format("cable {}: no switch {}", k.name, sw));
      const SwitchConfig& cfg = spec_.switches[sw].cfg;
      const std::string& sn = spec_.switches[sw].name;
      if (port >= cfg.ports.size()) throw std::runtime_error(fmt::format("cable {}: {} has no port {}", k.name, sn, port));
      if (cfg.ports[port].kind != PortKind::Link)
        throw std::runtime_error(fmt::format("cable {}: {} port {} is not a link port", k.name, sn, cfg.ports[port].name));
      if (cabled[sw][port] >= 0)
        throw std::runtime_error(fmt::format("cable {}: {} port {} is already cable {}'s", k.name, sn, cfg.ports[port].name,
                                             spec_.cables[static_cast<std::size_t>(cabled[sw][port])].name));
      cabled[sw][port] = static_cast<int>(c);
    }
    if (!std::is_sorted(k.events.begin(), k.events.end(),
                        [](const auto& x, const auto& y) { return x.first < y.first; }))
      throw std::runtime_error(fmt::format("cable {}: its events are not in time order", k.name));
  }
  for (std::size_t s = 0; s < spec_.switches.size(); ++s)
    for (std::size_t p = 0; p < cabled[s].size(); ++p)
      if (spec_.switches[s].cfg.ports[p].kind == PortKind::Link && cabled[s][p] < 0)
        throw std::runtime_error(fmt::format("{} port {}: a link port that no cable joins", spec_.switches[s].name,
                                             spec_.switches[s].cfg.ports[p].name));
  for (auto& k : spec_.cables) cables_.push_back(std::make_unique<EmulatedLink>(k.name, k.params));
  next_event_.assign(cables_.size(), 0);
  for (std::size_t c = 0; c < spec_.cables.size(); ++c) {
    const FabricCable& k = spec_.cables[c];
    EmulatedLink* link = cables_[c].get();
    spec_.switches[k.a_switch].cfg.ports[k.a_port].make_link = [link] { return link->make_end(0); };
    spec_.switches[k.b_switch].cfg.ports[k.b_port].make_link = [link] { return link->make_end(1); };
  }
  // No polling jitter on a virtual clock: every shaper's bucket is a step or two, so queues
  // drain and hosts send at their link's rate, frame by frame.
  const uint64_t bucket = 2 * spec_.step_ns;
  for (auto& s : spec_.switches)
    for (auto& p : s.cfg.ports) {
      p.egress.bucket_ns = bucket;
      p.host.bucket_ns = bucket;
    }
  // Whole steps strictly under every cable's delay: a frame sent at a window's first step
  // arrives after its last. A cable of no delay leaves windows of one step (threads meet every
  // step); without cables a window still ends in time to notice a quiet fabric.
  window_ns_ = kMaxWindowSteps * spec_.step_ns;
  for (auto& k : spec_.cables)
    window_ns_ = std::min(window_ns_, std::max<uint64_t>(1, (k.params.delay_ns + spec_.step_ns - 1) / spec_.step_ns) * spec_.step_ns);
  for (auto& s : spec_.switches) {
    try {
      switches_.push_back(std::make_unique<Switch>(s.cfg, t0_ns));
    } catch (const std::exception& e) {
      throw std::runtime_error(fmt::format("switch {}: {}", s.name, e.what()));
    }
  }
  // Shares: the heaviest switches first, each to the least loaded thread. A host (its NIC or
  // its flows) weighs more than a cable port.
  const unsigned n = std::clamp<unsigned>(spec_.threads, 1, std::max<std::size_t>(1, switches_.size()));
  std::vector<std::pair<std::size_t, std::size_t>> by_weight;  // (weight, switch)
  for (std::size_t i = 0; i < spec_.switches.size(); ++i) {
    std::size_t w = 0;
    for (const auto& p : spec_.switches[i].cfg.ports) w += p.kind == PortKind::Link ? 1 : 4;
    by_weight.push_back({w, i});
  }
  std::stable_sort(by_weight.begin(), by_weight.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  shares_.assign(n, {});
  thread_of_.assign(switches_.size(), 0);
  std::vector<std::size_t> load(n, 0);
  for (const auto& [w, i] : by_weight) {
    const auto t = static_cast<unsigned>(std::min_element(load.begin(), load.end()) - load.begin());
    load[t] += w;
    shares_[t].push_back(i);
    thread_of_[i] = t;
  }
  for (auto& sh : shares_) std::sort(sh.begin(), sh.end());
  for (unsigned t = 1; t < n; ++t) helpers_.emplace_back([this, t] { helper_loop(t); });
}

Fabric::~Fabric() { stop_helpers(); }

void Fabric::stop_helpers() {
  if (helpers_.empty()) return;
  quit_.store(true, std::memory_order_release);
  go_.fetch_add(1, std::memory_order_release);
  go_.notify_all();
  for (auto& h : helpers_) h.join();
  helpers_.clear();
}

void Fabric::poll_share(unsigned t) {
  for (uint64_t k = 0; k < win_steps_; ++k) {
    const uint64_t now = now_ + k * spec_.step_ns;
    for (std::size_t i : shares_[t]) switches_[i]->poll_all(now);
  }
  if (steps_ / kReclaimEvery != (steps_ + win_steps_) / kReclaimEvery)
    for (std::size_t i : shares_[t]) switches_[i]->reclaim();
}

void Fabric::helper_loop(unsigned t) {
  // A thread inherits its creator's CPUs: under DPDK the main lcore's one CPU, which a helper
  // would share, spinning. It takes every other CPU instead (all of them if there is no other).
  cpu_set_t mine, others;
  CPU_ZERO(&others);
  if (pthread_getaffinity_np(pthread_self(), sizeof mine, &mine) == 0) {
    const long n = sysconf(_SC_NPROCESSORS_ONLN);
    for (long c = 0; c < n && c < CPU_SETSIZE; ++c)
      if (!CPU_ISSET(c, &mine) || CPU_COUNT(&mine) > 1) CPU_SET(c, &others);
    if (pthread_setaffinity_np(pthread_self(), sizeof others, &others) != 0) {
      for (long c = 0; c < n && c < CPU_SETSIZE; ++c) CPU_SET(c, &others);
      pthread_setaffinity_np(pthread_self(), sizeof others, &others);
    }
  }
  // A DPDK thread of its own (an lcore id), so that its frees and allocations use the mbuf
  // pools' per-lcore caches; without one (no id left) it still works, through the pools' rings.
  const bool registered = rte_thread_register() == 0;
  uint64_t seen = 0;
  for (;;) {
    seen = wait_while(go_, seen);
    if (quit_.load(std::memory_order_acquire)) {
      if (registered) rte_thread_unregister();
      return;
    }
    poll_share(t);
    done_.fetch_add(1, std::memory_order_acq_rel);
    done_.notify_one();
  }
}

bool Fabric::quiet() {
  // The cheap questions first: a busy fabric answers no on the first host or cable.
  for (auto& s : switches_)
    for (std::size_t p = 0; p < s->num_ports(); ++p)
      if (s->port(p).idle_until(now_) <= now_) return false;
  for (auto& c : cables_)
    if (c->in_flight()) return false;
  for (auto& s : switches_) {
    const SwitchTotals t = s->totals();
    if (t.queued || t.in_flight || t.held) return false;
  }
  return true;
}

uint64_t Fabric::next_scheduled() const {
  uint64_t t = UINT64_MAX;
  for (std::size_t c = 0; c < cables_.size(); ++c)
    if (next_event_[c] < spec_.cables[c].events.size()) t = std::min(t, t0_ + spec_.cables[c].events[next_event_[c]].first);
  if (!timers_.empty()) t = std::min(t, t0_ + timers_.begin()->first);
  return t;
}

uint64_t Fabric::next_event_after_quiet() {
  uint64_t t = std::min(now_ + std::max(spec_.max_jump_ns, spec_.step_ns), next_scheduled());
  for (auto& s : switches_)
    for (std::size_t p = 0; p < s->num_ports(); ++p) t = std::min(t, s->port(p).idle_until(now_));
  // On a step boundary, so that a jump lands where stepping would have.
  const uint64_t steps = (t - t0_ + spec_.step_ns - 1) / spec_.step_ns;
  return std::max(now_ + spec_.step_ns, t0_ + steps * spec_.step_ns);
}

void Fabric::run_until(uint64_t t_ns) {
  if (stopped_) return;
  while (now_ < t_ns) {
    for (std::size_t c = 0; c < cables_.size(); ++c) {
      auto& ev = spec_.cables[c].events;
      while (next_event_[c] < ev.size() && t0_ + ev[next_event_[c]].first <= now_) cables_[c]->set_up(ev[next_event_[c]++].second);
    }
    while (!timers_.empty() && t0_ + timers_.begin()->first <= now_) {
      auto fn = std::move(timers_.begin()->second);
      timers_.erase(timers_.begin());
      fn();
    }
    // The window: up to window_ns_, ending before the next cable event or timer and at t_ns.
    const uint64_t end = std::min({now_ + std::min(window_ns_, grow_steps_ * spec_.step_ns), t_ns, next_scheduled()});
    win_steps_ = std::max<uint64_t>(1, (end - std::min(end, now_) + spec_.step_ns - 1) / spec_.step_ns);
    if (helpers_.empty()) {
      poll_share(0);
    } else {
      // The helpers' step starts when they see `go_` move; the step ends when all of them have
      // counted themselves done (what they wrote is visible to this thread from then on).
      const uint64_t want = done_.load(std::memory_order_relaxed) + helpers_.size();
      go_.fetch_add(1, std::memory_order_release);
      go_.notify_all();
      poll_share(0);
      for (uint64_t d = done_.load(std::memory_order_acquire); d != want;) d = wait_while(done_, d);
    }
    steps_ += win_steps_;
    now_ += (win_steps_ - 1) * spec_.step_ns;  // the window's last step
    if (quiet()) {
      const uint64_t next = std::min(next_event_after_quiet(), std::max(t_ns, now_ + spec_.step_ns));
      if (next > now_ + spec_.step_ns) ++jumps_, grow_steps_ = 1;
      now_ = next;
    } else {
      grow_steps_ = std::min(grow_steps_ * 2, kMaxWindowSteps);
      now_ += spec_.step_ns;
    }
  }
}

FabricTotals Fabric::totals() const {
  FabricTotals f;
  for (auto& s : switches_) {
    const SwitchTotals t = s->totals();
    f.made += t.mirrored + t.originated + t.replicated;
    f.queued += t.queued;
    f.in_flight += t.in_flight;
    f.dropped += t.dropped;
    f.held += t.held;
    for (std::size_t p = 0; p < s->num_ports(); ++p) {
      // A switch's own PFC frames are not in its books (they never enter a queue); on a cable
      // they reach the far switch, which counts them received and consumed.
      if (std::string_view(s->port(p).kind()) == "link") {
        f.made += s->egress(p).pfc_gen().counters().frames.get();
        continue;
      }
      f.from_hosts += s->rx_packets(p);
      f.to_hosts += s->tx_packets(p);
    }
  }
  for (auto& c : cables_) {
    f.cable_in_flight += c->in_flight();
    f.cable_lost += c->lost();
  }
  return f;
}

void Fabric::shutdown() {
  if (stopped_) return;
  stop_helpers();
  for (auto& s : switches_) s->shutdown(now_);
  stopped_ = true;
}

}  // namespace rs
