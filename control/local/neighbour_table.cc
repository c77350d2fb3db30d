// The NUD state machine; see the header for where it follows Linux and where it does not.
#include "control/local/neighbour_table.h"

#include <algorithm>
#include <cstring>

namespace rs {

const char* nud_state_name(NudState s) {
  switch (s) {
    case NudState::Incomplete: return "incomplete";
    case NudState::Reachable: return "reachable";
    case NudState::Stale: return "stale";
    case NudState::Delay: return "delay";
    case NudState::Probe: return "probe";
    case NudState::Failed: return "failed";
  }
  return "?";
}

const char* drop_why_name(DropWhy w) {
  switch (w) {
    case DropWhy::None: return "none";
    case DropWhy::HoldQueueFull: return "hold_queue_full";
    case DropWhy::Failed: return "failed";
    case DropWhy::TableFull: return "table_full";
  }
  return "?";
}

namespace {

bool same_mac(const rte_ether_addr& a, const rte_ether_addr& b) {
  return std::memcmp(a.addr_bytes, b.addr_bytes, RTE_ETHER_ADDR_LEN) == 0;
}

NudAction act(NudAction::Kind kind, const Neighbour& n) {
  NudAction a{};
  a.kind = kind;
  a.key = n.key;
  a.mac = n.mac;
  return a;
}

NudAction packet(NudAction::Kind kind, const Neighbour& n, void* pkt, DropWhy why) {
  NudAction a = act(kind, n);
  if (kind == NudAction::Drop) a.mac = rte_ether_addr{};
  a.pkt = pkt;
  a.why = why;
  return a;
}

}  // namespace

NeighbourTable::NeighbourTable(NudParams p, uint64_t seed) : p_(p), rng_(seed) {}

// Linux's neigh_rand_reach_time: uniform in [base/2, 3*base/2). splitmix64 rather than a
// <random> distribution, whose output differs between standard libraries.
uint64_t NeighbourTable::draw_reachable() {
  const uint64_t base = p_.base_reachable_ns;
  if (base == 0) return 0;
  uint64_t z = (rng_ += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return base / 2 + z % base;
}

NeighbourTable::Map::iterator NeighbourTable::create(const NeighbourKey& k, uint64_t now) {
  Neighbour n;
  n.key = k;
  n.updated_ns = n.used_ns = now;  // as neigh_alloc
  return table_.emplace(k, std::move(n)).first;
}

// --- State entries ---------------------------------------------------------------------------

void NeighbourTable::enter_reachable(Neighbour& n, uint64_t now) {
  n.state = NudState::Reachable;
  n.updated_ns = now;
  n.reachable_ns = draw_reachable();
  n.timer_ns = n.confirmed_ns + n.reachable_ns;
}

// STALE has no timer in Linux; its timer here is the gc deadline neigh_periodic_work applies.
void NeighbourTable::enter_stale(Neighbour& n, uint64_t now) {
  n.state = NudState::Stale;
  n.updated_ns = now;
  n.timer_ns = n.used_ns + p_.gc_stale_ns;
}

void NeighbourTable::enter_delay(Neighbour& n, uint64_t now) {
  n.state = NudState::Delay;
  n.updated_ns = now;
  n.timer_ns = now + p_.delay_first_probe_ns;
}

// __neigh_event_send on an entry without a usable MAC: INCOMPLETE with an immediate probe.
void NeighbourTable::start_resolution(Neighbour& n, uint64_t now, NudActions& out) {
  n.state = NudState::Incomplete;
  n.updated_ns = now;
  n.probes = 0;
  probe_or_fail(n, now, out);
}

// The tail of neigh_timer_handler for INCOMPLETE and PROBE: fail once the probes allowed are
// spent, else send one more (neigh_probe; arp_solicit unicasts while it still knows a MAC).
void NeighbourTable::probe_or_fail(Neighbour& n, uint64_t now, NudActions& out) {
  const bool incomplete = n.state == NudState::Incomplete;
  if (n.probes >= (incomplete ? p_.mcast_probes : p_.ucast_probes)) {
    fail(n, now, out);
    return;
  }
  ++n.probes;
  out.push_back(act(incomplete ? NudAction::ProbeMulticast : NudAction::ProbeUnicast, n));
  ++(incomplete ? counters_.probes_multicast : counters_.probes_unicast);
  n.timer_ns = now + p_.retrans_ns;
}

// neigh_invalidate: the held packets are dropped (the agent may answer them with ICMP
// unreachable, as arp_error_report does) and the forwarding entry goes.
void NeighbourTable::fail(Neighbour& n, uint64_t now, NudActions& out) {
  if (n.has_mac) out.push_back(act(NudAction::Unresolved, n));
  n.has_mac = false;
  n.mac = rte_ether_addr{};
  for (void* pkt : n.held) out.push_back(packet(NudAction::Drop, n, pkt, DropWhy::Failed));
  counters_.hold_dropped += n.held.size();
  held_ -= n.held.size();
  n.held.clear();
  n.state = NudState::Failed;
  n.updated_ns = now;
  n.timer_ns = now + p_.failed_ns;
  ++counters_.failed;
}

void NeighbourTable::hold(Neighbour& n, void* pkt, NudActions& out) {
  if (!pkt) return;
  if (p_.hold_packets == 0) {
    out.push_back(packet(NudAction::Drop, n, pkt, DropWhy::HoldQueueFull));
    ++counters_.hold_dropped;
    return;
  }
  while (n.held.size() >= p_.hold_packets) {
    out.push_back(packet(NudAction::Drop, n, n.held.front(), DropWhy::HoldQueueFull));
    n.held.pop_front();
    --held_;
    ++counters_.hold_dropped;
  }
  n.held.push_back(pkt);
  ++held_;
  ++counters_.held;
}

void NeighbourTable::set_mac(Neighbour& n, const rte_ether_addr& mac, NudActions& out) {
  n.mac = mac;
  n.has_mac = true;
  out.push_back(act(NudAction::Resolved, n));
  ++counters_.resolved;
}

// neigh_update's flush of arp_queue once the entry is valid: in arrival order.
void NeighbourTable::release_held(Neighbour& n, NudActions& out) {
  for (void* pkt : n.held) out.push_back(packet(NudAction::Send, n, pkt, DropWhy::None));
  held_ -= n.held.size();
  n.held.clear();
}

NeighbourTable::Map::iterator NeighbourTable::erase(Map::iterator it, NudActions& out) {
  Neighbour& n = it->second;
  if (n.has_mac) out.push_back(act(NudAction::Unresolved, n));
  for (void* pkt : n.held) out.push_back(packet(NudAction::Drop, n, pkt, DropWhy::Failed));
  counters_.hold_dropped += n.held.size();
  held_ -= n.held.size();
  ++counters_.removed;
  return table_.erase(it);
}

// --- Events ----------------------------------------------------------------------------------

NudActions NeighbourTable::resolve(const NeighbourKey& k, void* pkt, uint64_t now) {
  NudActions out;
  auto it = table_.find(k);
  if (it == table_.end()) {
    if (table_.size() >= p_.max_entries) {
      if (pkt) {
        NudAction a{};
        a.kind = NudAction::Drop;
        a.key = k;
        a.pkt = pkt;
        a.why = DropWhy::TableFull;
        out.push_back(a);
        ++counters_.table_full;
      }
      return out;
    }
    it = create(k, now);
    start_resolution(it->second, now, out);
  } else {
    Neighbour& n = it->second;
    n.used_ns = now;
    if (n.state == NudState::Failed && !n.is_static) start_resolution(n, now, out);
    else if (n.state == NudState::Stale && !n.is_static) enter_delay(n, now);
  }
  Neighbour& n = it->second;
  if (n.state == NudState::Incomplete) {
    hold(n, pkt, out);
  } else if (pkt) {
    // Without a MAC here the entry failed at once: no multicast probes are configured.
    if (n.has_mac) out.push_back(packet(NudAction::Send, n, pkt, DropWhy::None));
    else out.push_back(packet(NudAction::Drop, n, pkt, DropWhy::Failed));
  }
  return out;
}

// neigh_event_send without a packet, as drivers that offload forwarding call it on activity.
NudActions NeighbourTable::used(const NeighbourKey& k, uint64_t now) {
  auto it = table_.find(k);
  if (it == table_.end()) return {};
  Neighbour& n = it->second;
  n.used_ns = now;
  if (n.state == NudState::Stale && !n.is_static) enter_delay(n, now);
  return {};
}

// neigh_update(n, mac, REACHABLE or STALE, override ? OVERRIDE : 0 | WEAK_OVERRIDE), with RFC
// 4861 7.2.5's reading of a clear Override flag.
NudActions NeighbourTable::learn(const NeighbourKey& k, const rte_ether_addr& mac, Learn kind, bool override_mac,
                                 bool create_entry, uint64_t now) {
  NudActions out;
  auto it = table_.find(k);
  if (it == table_.end()) {
    if (!create_entry || table_.size() >= p_.max_entries) return out;
    it = create(k, now);  // INCOMPLETE with nothing held: the update below resolves it
  }
  Neighbour& n = it->second;
  if (n.is_static) return out;
  const bool changed = n.has_mac && !same_mac(n.mac, mac);
  if (changed && !override_mac) {
    // Linux confirms here even so; the RFC says the frame "MUST NOT update the cache".
    if (n.state == NudState::Reachable) enter_stale(n, now);
    return out;
  }
  // A frame that only repeats a MAC we hold asserts nothing about reachability.
  if (kind == Learn::Unsolicited && n.has_mac && !changed) return out;

  const bool was_valid = n.has_mac;
  if (!was_valid || changed) set_mac(n, mac, out);
  if (kind == Learn::SolicitedReply) {
    n.confirmed_ns = now;
    if (n.state != NudState::Reachable) enter_reachable(n, now);
    else n.timer_ns = n.confirmed_ns + n.reachable_ns;  // neigh_timer_handler would re-arm there
    n.probes = 0;
  } else {
    n.confirmed_ns = kNudNever;  // a new MAC is not a confirmed one
    enter_stale(n, now);
  }
  if (!was_valid) release_held(n, out);
  return out;
}

// One run of neigh_timer_handler (REACHABLE, DELAY, PROBE, INCOMPLETE) or of the gc in
// neigh_periodic_work (STALE past used + gc_stale, FAILED). True when the entry must go.
bool NeighbourTable::run_timer(Neighbour& n, uint64_t now, NudActions& out) {
  switch (n.state) {
    case NudState::Reachable:
      if (now < n.confirmed_ns + n.reachable_ns) {
        n.timer_ns = n.confirmed_ns + n.reachable_ns;  // "still alive"
      } else if (now < n.used_ns + p_.delay_first_probe_ns) {
        enter_delay(n, now);  // in use: go straight to DELAY rather than wait in STALE
      } else {
        enter_stale(n, now);
      }
      return false;
    case NudState::Delay:
      // Kept from neigh_timer_handler for confirmations that do not pass through learn(); a
      // solicited reply during DELAY already made the entry REACHABLE.
      if (n.confirmed_ns != kNudNever && now < n.confirmed_ns + p_.delay_first_probe_ns) {
        n.state = NudState::Reachable;
        n.updated_ns = now;
        n.timer_ns = n.confirmed_ns + n.reachable_ns;
        return false;
      }
      n.state = NudState::Probe;
      n.updated_ns = now;
      n.probes = 0;
      probe_or_fail(n, now, out);
      return false;
    case NudState::Incomplete:
    case NudState::Probe:
      probe_or_fail(n, now, out);
      return false;
    case NudState::Stale:
    case NudState::Failed:
      return true;
  }
  return false;
}

NudActions NeighbourTable::tick(uint64_t now) {
  NudActions out;
  for (auto it = table_.begin(); it != table_.end();) {
    Neighbour& n = it->second;
    bool gone = false;
    // A late tick may owe an entry more than one step (REACHABLE -> STALE -> gone); each step
    // moves the state on or the timer past now, so this ends.
    while (!gone && !n.is_static && n.timer_ns <= now) gone = run_timer(n, now, out);
    it = gone ? erase(it, out) : std::next(it);
  }
  return out;
}

// --- Configuration and queries ---------------------------------------------------------------

NudActions NeighbourTable::add_static(const NeighbourKey& k, const rte_ether_addr& mac) {
  NudActions out;
  auto it = table_.find(k);
  if (it == table_.end()) it = create(k, 0);
  Neighbour& n = it->second;
  const bool was_valid = n.has_mac;
  n.is_static = true;
  n.state = NudState::Reachable;
  n.timer_ns = kNudNever;
  n.probes = 0;
  if (!was_valid || !same_mac(n.mac, mac)) set_mac(n, mac, out);
  if (!was_valid) release_held(n, out);
  return out;
}

NudActions NeighbourTable::remove(const NeighbourKey& k) {
  NudActions out;
  auto it = table_.find(k);
  if (it != table_.end()) erase(it, out);
  return out;
}

const Neighbour* NeighbourTable::find(const NeighbourKey& k) const {
  auto it = table_.find(k);
  return it == table_.end() ? nullptr : &it->second;
}

std::vector<const Neighbour*> NeighbourTable::entries() const {
  std::vector<const Neighbour*> v;
  v.reserve(table_.size());
  for (const auto& [k, n] : table_) v.push_back(&n);
  return v;
}

uint64_t NeighbourTable::next_timer() const {
  uint64_t t = kNudNever;
  for (const auto& [k, n] : table_) t = std::min(t, n.timer_ns);
  return t;
}

}  // namespace rs
