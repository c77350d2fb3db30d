// The switch's neighbour table (the ARP and ND cache) as pure logic: Linux's NUD state machine
// (net/core/neighbour.c: __neigh_event_send, neigh_update, neigh_timer_handler,
// neigh_periodic_work; net/ipv4/arp.c: arp_solicit, arp_process) and RFC 4861 section 7.3,
// driven by calls that carry the time. Every call returns the actions the agent carries out, in
// order: the agent parses ARP/ND frames, sends the probes, programs the forwarding table and
// owns the held packets; this class only decides. One thread (the control thread) uses it.
// Every packet given to resolve() comes back exactly once, as a Send or a Drop, in that call's
// actions or a later call's (remove() included), so the agent can count what it holds.
//
// Where it differs from Linux, and why:
//  - No per-table periodic gc: a STALE entry is removed when its gc deadline (last use plus
//    gc_stale_ns) passes and a FAILED one failed_ns after it failed, each an ordinary timer, so
//    next_timer() alone tells the agent when to wake.
//  - No app probes (no user-space resolver) and no mcast_reprobes (PROBE only unicasts), so an
//    INCOMPLETE entry sends mcast_probes multicast probes and a PROBE entry ucast_probes unicast
//    ones. Linux starts INCOMPLETE's probe count at ucast_probes against a limit of
//    ucast + app + mcast, which comes to the same mcast_probes broadcasts.
//  - No ARP locktime: the agent decides override_mac (always true for ARP).
//  - The reachable time is drawn per entry each time it becomes REACHABLE (Linux draws one per
//    interface every 300 s), so entries confirmed together do not all expire together.
//  - A table at max_entries refuses new entries instead of forcing a gc.
//  - Deadlines are reached at their instant (Linux keeps an entry alive at exactly
//    confirmed + reachable), so a timer is due when now >= timer_ns.
#pragma once
#include <rte_ether.h>

#include <compare>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <vector>

#include "dataplane/proto/ip_addr.h"  // IpAddr, format_ip, parse_ip

namespace rs {

struct NeighbourKey {
  uint16_t iface = 0;  // the interface: a port, or a VLAN's (svi_iface, switch_config.h)
  IpAddr ip;
  auto operator<=>(const NeighbourKey&) const = default;
};

enum class NudState : uint8_t { Incomplete, Reachable, Stale, Delay, Probe, Failed };
const char* nud_state_name(NudState s);  // "incomplete", "reachable", "stale", ...

// The states in which the entry has a usable MAC (Linux's NUD_VALID): forwarding is programmed
// exactly while an entry is in one of them.
inline bool nud_valid(NudState s) { return s != NudState::Incomplete && s != NudState::Failed; }

inline constexpr uint64_t kNudNever = UINT64_MAX;

struct NudParams {
  uint64_t base_reachable_ns = 30'000'000'000;
  uint64_t delay_first_probe_ns = 5'000'000'000;
  uint64_t retrans_ns = 1'000'000'000;
  uint32_t ucast_probes = 3;
  uint32_t mcast_probes = 3;
  uint64_t gc_stale_ns = 60'000'000'000;
  // How long a FAILED entry stays before removal. Linux drops it at the next gc pass; here it
  // carries nothing a new packet needs (a packet to it restarts resolution just as for an
  // absent entry), so it is kept only briefly, for show commands, and its slot comes back soon.
  uint64_t failed_ns = 1'000'000'000;
  uint32_t hold_packets = 3;  // per unresolved neighbour (Linux's unres_qlen)
  uint32_t max_entries = 1024;
};

struct Neighbour {
  NeighbourKey key;
  NudState state = NudState::Incomplete;
  rte_ether_addr mac{};
  bool has_mac = false;       // == nud_valid(state): `mac` is the one forwarding holds
  uint64_t updated_ns = 0;    // last change of state or MAC
  uint64_t confirmed_ns = kNudNever;  // last reachability confirmation for this MAC
  uint64_t used_ns = 0;       // last packet or traffic through the entry
  uint32_t probes = 0;        // sent in the current INCOMPLETE or PROBE episode
  uint64_t timer_ns = kNudNever;  // next timer; kNudNever for static entries
  uint64_t reachable_ns = 0;  // randomised reachable time, drawn on entering REACHABLE
  std::deque<void*> held;     // packets waiting for resolution (INCOMPLETE only), oldest first
  bool is_static = false;
};

enum class DropWhy : uint8_t {
  None,
  HoldQueueFull,  // the oldest held packet pushed out by a new one, as Linux does
  Failed,         // resolution failed, or the entry was removed
  TableFull,      // no room for a new entry
};
const char* drop_why_name(DropWhy w);  // "none", "hold_queue_full", "failed", "table_full"

struct NudAction {
  enum Kind : uint8_t {
    ProbeMulticast,  // broadcast ARP request / multicast NS
    ProbeUnicast,    // to `mac`, the known MAC
    Resolved,        // the entry has usable `mac` (first time, or changed): program forwarding
    Unresolved,      // the entry lost its MAC (failed or removed; `mac` the old one): unprogram
    Send,            // held or new packet `pkt` may go now, to `mac`
    Drop,            // `pkt` must be dropped, for `why`
  } kind;
  NeighbourKey key;
  rte_ether_addr mac{};
  void* pkt = nullptr;
  DropWhy why = DropWhy::None;
};
using NudActions = std::vector<NudAction>;

struct NudCounters {
  uint64_t probes_multicast = 0;
  uint64_t probes_unicast = 0;
  uint64_t resolved = 0;      // Resolved actions
  uint64_t failed = 0;        // entries that went FAILED
  uint64_t removed = 0;       // entries removed (gc, FAILED expiry, remove())
  uint64_t held = 0;          // packets ever put on a hold queue
  uint64_t hold_dropped = 0;  // held packets dropped (queue full, failure, removal)
  uint64_t table_full = 0;    // packets dropped for want of a free entry
};

class NeighbourTable {
 public:
  // `seed` drives the reachable-time draw (uniform in [0.5, 1.5) x base_reachable_ns, as
  // neigh_rand_reach_time); the same seed and calls give the same actions.
  explicit NeighbourTable(NudParams p = {}, uint64_t seed = 1);

  // A packet needs this neighbour (a glean), as __neigh_event_send. Absent: create INCOMPLETE,
  // ProbeMulticast, hold `pkt`. INCOMPLETE: hold `pkt` (a full queue drops its oldest).
  // REACHABLE/DELAY/PROBE: Send `pkt`; STALE: Send and go DELAY. FAILED: restart resolution
  // (INCOMPLETE, ProbeMulticast) and hold `pkt` like the first packet, as Linux does: the
  // entry's failure was a past episode and the packet gets the same chance as any first one.
  // `pkt` may be null (resolution only).
  NudActions resolve(const NeighbourKey& k, void* pkt, uint64_t now);

  // Traffic used the entry (the agent reads forwarding counters): STALE -> DELAY.
  NudActions used(const NeighbourKey& k, uint64_t now);

  // A frame from the neighbour gave its MAC, as neigh_update with RFC 4861 7.2.5's override
  // rule. SolicitedReply (unicast ARP reply, NA with S) -> REACHABLE. Unsolicited (ARP request,
  // gratuitous ARP, NS with SLLA, NA without S) -> STALE when the MAC is new or changed or the
  // entry was unresolved, otherwise nothing. override_mac false (NA without O) keeps a known
  // different MAC: a REACHABLE entry goes STALE, any other ignores the frame. Absent entries are
  // created only when `create`. Held packets go (Send) once the entry is resolved.
  enum class Learn : uint8_t { SolicitedReply, Unsolicited };
  NudActions learn(const NeighbourKey& k, const rte_ether_addr& mac, Learn kind, bool override_mac,
                   bool create, uint64_t now);

  // Runs every due timer (see neigh_timer_handler in the .cc), entries in key order.
  NudActions tick(uint64_t now);

  // A configured neighbour: REACHABLE for ever, immune to timers and learning. Replaces a
  // dynamic entry (its held packets go). Not refused by max_entries: the config bounds it.
  // Takes no time: a new static entry's times stay 0.
  NudActions add_static(const NeighbourKey& k, const rte_ether_addr& mac);
  // Unresolved (if programmed) and Drop(Failed) of held packets; static entries too.
  NudActions remove(const NeighbourKey& k);

  const Neighbour* find(const NeighbourKey& k) const;
  std::vector<const Neighbour*> entries() const;  // sorted by key
  uint64_t next_timer() const;                    // earliest timer_ns, kNudNever when none
  std::size_t size() const { return table_.size(); }
  std::size_t held_packets() const { return held_; }
  const NudCounters& counters() const { return counters_; }
  const NudParams& params() const { return p_; }
  // New parameters (the control plane's system.set): timers already running keep their
  // deadlines, the next ones and the limits follow these.
  void set_params(const NudParams& p) { p_ = p; }

 private:
  using Map = std::map<NeighbourKey, Neighbour>;
  Map::iterator create(const NeighbourKey& k, uint64_t now);
  bool run_timer(Neighbour& n, uint64_t now, NudActions& out);
  void start_resolution(Neighbour& n, uint64_t now, NudActions& out);
  void probe_or_fail(Neighbour& n, uint64_t now, NudActions& out);
  void fail(Neighbour& n, uint64_t now, NudActions& out);
  void hold(Neighbour& n, void* pkt, NudActions& out);
  void set_mac(Neighbour& n, const rte_ether_addr& mac, NudActions& out);
  void release_held(Neighbour& n, NudActions& out);
  void enter_reachable(Neighbour& n, uint64_t now);  // after confirmed_ns is set
  void enter_stale(Neighbour& n, uint64_t now);
  void enter_delay(Neighbour& n, uint64_t now);
  Map::iterator erase(Map::iterator it, NudActions& out);
  uint64_t draw_reachable();

  NudParams p_;
  uint64_t rng_;
  Map table_;
  std::size_t held_ = 0;
  NudCounters counters_;
};

}  // namespace rs
