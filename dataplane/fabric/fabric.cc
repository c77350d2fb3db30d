#include "dataplane/fabric/fabric.h"

#include <fmt/core.h>

#include <algorithm>
#include <stdexcept>
#include <string_view>

namespace rs {

namespace {
// RCU: retired tables are freed every so many steps (the control plane rarely changes them).
constexpr uint64_t kReclaimEvery = 1024;
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
  for (auto& s : spec_.switches) {
    try {
      switches_.push_back(std::make_unique<Switch>(s.cfg, t0_ns));
    } catch (const std::exception& e) {
      throw std::runtime_error(fmt::format("switch {}: {}", s.name, e.what()));
    }
  }
}

Fabric::~Fabric() = default;

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

uint64_t Fabric::next_event_after_quiet() {
  uint64_t t = now_ + std::max(spec_.max_jump_ns, spec_.step_ns);
  for (auto& s : switches_)
    for (std::size_t p = 0; p < s->num_ports(); ++p) t = std::min(t, s->port(p).idle_until(now_));
  for (std::size_t c = 0; c < cables_.size(); ++c)
    if (next_event_[c] < spec_.cables[c].events.size()) t = std::min(t, t0_ + spec_.cables[c].events[next_event_[c]].first);
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
    for (auto& s : switches_) s->poll_all(now_);
    if (++steps_ % kReclaimEvery == 0)
      for (auto& s : switches_) s->reclaim();
    if (quiet()) {
      const uint64_t next = std::min(next_event_after_quiet(), std::max(t_ns, now_ + spec_.step_ns));
      if (next > now_ + spec_.step_ns) ++jumps_;
      now_ = next;
    } else {
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
  for (auto& s : switches_) s->shutdown(now_);
  stopped_ = true;
}

}  // namespace rs
