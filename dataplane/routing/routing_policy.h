// The contract a routing policy implements: choose one member of a next-hop group for each
// packet of a burst. A policy is one file under dataplane/routing/policies/ plus one line,
// REGISTER_ROUTING_POLICY(Type, "name"); a config names it per group (and optionally per
// traffic class). docs/routing-policies.md walks through writing one.
//
// Each worker owns one instance per (group, policy choice), made when the group is built and
// carried with the FIB snapshot it belongs to (Fib::policies): the instance's members are its
// per-group state, and only its worker ever touches it, so it needs no lock. The
// nexthop_select stage is the one caller: per burst, once per instance present, with that
// instance's packets in arrival order.
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#ifdef __BMI2__
#include <immintrin.h>
#endif

#include "dataplane/core/counter.h"
#include "dataplane/core/packet_meta.h"
#include "dataplane/core/rng.h"
#include "dataplane/core/types.h"
#include "dataplane/routing/policy_params.h"
#include "dataplane/tm/queue/load_view.h"

namespace rs {

inline constexpr std::size_t kMaxGroupMembers = 64;  // a member set is one 64-bit word
inline constexpr std::size_t kMaxPolicyCounters = 4;

// What a policy knows of its group, copied when the instance is made.
struct PolicyGroup {
  uint32_t id = 0;
  std::vector<uint32_t> nexthop;  // member -> next-hop index in the FIB
  std::vector<uint16_t> port;     // member -> egress port
  std::vector<uint16_t> slot;     // redirection table: hash slot -> member (weights by replication)
  uint32_t mask = 0;              // slot.size() - 1 (a power of two)
  uint16_t size() const { return static_cast<uint16_t>(nexthop.size()); }
};

struct PolicyInit {
  const PolicyGroup& group;
  const ParamValues& params;  // checked against the policy's kParams by the config loader
  uint64_t seed;              // distinct per (worker, group, class): runs repeat for a seed
  uint16_t worker;
  // The switch's seed, the same on every worker: for a hash every worker must compute alike
  // (the parse's flow hash is seeded with it too).
  uint64_t switch_seed = 0;
};

// What one select() call sees besides the packets.
struct SelectEnv {
  const LoadView& load;
  uint64_t now_ns;
  uint64_t up;  // bit m set: member m's port is up. Never 0 (the caller drops those packets).
};

class RoutingPolicy {
 public:
  explicit RoutingPolicy(const PolicyInit& in) : rng_(in.seed), g_(in.group) {}
  virtual ~RoutingPolicy() = default;
  RoutingPolicy(const RoutingPolicy&) = delete;
  RoutingPolicy& operator=(const RoutingPolicy&) = delete;

  // For each of the n packets (of this instance's group and class, in arrival order), a
  // member index into member[i], among those set in env.up. No allocation, lock or syscall:
  // it runs on a worker for every burst.
  virtual void select(const PacketMeta* const* pkts, uint16_t n, const SelectEnv& env, uint16_t* member) = 0;

  const PolicyGroup& group() const { return g_; }
  // The policy's own counters, named by its kCounters (collisions, steered packets...).
  std::array<Counter, kMaxPolicyCounters> counters{};

 protected:
  uint16_t members() const { return g_.size(); }
  uint16_t port_of(uint16_t m) const { return g_.port[m]; }
  // Bytes queued on member m's port in the packet's own egress queue (its class's load).
  uint64_t queue_bytes(const SelectEnv& e, uint16_t m, const PacketMeta& pm) const {
    return e.load.queue_bytes(g_.port[m], pm.queue);
  }
  // The same for every member at once, into bytes[0 .. members()): for a policy that compares
  // members on many packets of a call. The view is a sample either way (an ASIC's quality
  // measure is too), so reading it once a call gives each packet the answer it would get alone.
  void queue_loads(const SelectEnv& e, unsigned q, uint64_t* bytes) const {
    for (uint16_t m = 0; m < g_.size(); ++m) bytes[m] = e.load.queue_bytes(g_.port[m], q);
  }
  // The members of `set` (not 0) with the fewest bytes in queue q.
  uint64_t shortest_queue(const SelectEnv& e, unsigned q, uint64_t set) const {
    std::array<uint64_t, kMaxGroupMembers> bytes;
    queue_loads(e, q, bytes.data());
    return extreme_members<false>(bytes.data(), set);
  }
  uint8_t quality(const SelectEnv& e, uint16_t m) const { return e.load.quality(g_.port[m]); }
  // A uniformly random member among those set in `set` (not 0).
  uint16_t random_member(uint64_t set) {
    const unsigned k = static_cast<unsigned>(__builtin_popcountll(set));
    return nth_member(set, static_cast<unsigned>((uint64_t{rng_.next()} * k) >> 32));
  }
  // Two distinct uniformly random members of `set` (at least two in it), from one draw: the
  // two are found side by side instead of the second waiting for the first. 16 bits of the
  // draw each: a bias under k / 65536 for k members.
  void random_pair(uint64_t set, uint16_t& a, uint16_t& b) {
    const unsigned k = static_cast<unsigned>(__builtin_popcountll(set));
    const uint32_t r = rng_.next();
    const unsigned i = static_cast<unsigned>(((r & 0xFFFFu) * k) >> 16);
    unsigned j = static_cast<unsigned>(((r >> 16) * (k - 1)) >> 16);
    j += j >= i;
    a = nth_member(set, i);
    b = nth_member(set, j);
  }
  static uint16_t nth_member(uint64_t set, unsigned i) {
#ifdef __BMI2__
    // One deposit instead of a loop whose trip count the branch predictor cannot learn.
    return static_cast<uint16_t>(__builtin_ctzll(_pdep_u64(uint64_t{1} << i, set)));
#else
    for (; i; --i) set &= set - 1;
    return static_cast<uint16_t>(__builtin_ctzll(set));
#endif
  }
  // The members of best quality band among `set` (not 0).
  uint64_t best_band(const SelectEnv& e, uint64_t set) const {
    std::array<uint8_t, kMaxGroupMembers> q;
    for (uint16_t m = 0; m < g_.size(); ++m) q[m] = quality(e, m);
    return extreme_members<true>(q.data(), set);
  }
  // Resilient hashing: the redirection table's member for `hash`; when that member is down,
  // a live member picked by the hash, so only the dead member's flows move.
  uint16_t hashed_member(uint32_t hash, uint64_t up) const {
    const uint16_t m = g_.slot[hash & g_.mask];
    if ((up >> m) & 1) [[likely]]
      return m;
    const unsigned k = static_cast<unsigned>(__builtin_popcountll(up));
    return nth_member(up, static_cast<unsigned>((uint64_t{hash * 0x9e3779b1u} * k) >> 32));
  }

  // The members of `set` (not 0) whose value v[m] is the set's least (kMost: its greatest).
  // It loops over every member, not just the set's: a fixed trip count, and no branch on the
  // values (loads, bands), which the branch predictor cannot learn.
  template <bool kMost, typename V>
  uint64_t extreme_members(const V* v, uint64_t set) const {
    constexpr V kNone = kMost ? std::numeric_limits<V>::min() : std::numeric_limits<V>::max();
    V x = kNone;
    for (uint16_t m = 0; m < g_.size(); ++m) {
      const V in = ((set >> m) & 1) ? v[m] : kNone;
      x = kMost ? std::max(x, in) : std::min(x, in);
    }
    uint64_t out = 0;
    for (uint16_t m = 0; m < g_.size(); ++m) out |= uint64_t{v[m] == x} << m;
    return out & set;
  }

  FastRng rng_;

 private:
  friend class NexthopSelect;
  // nexthop_select's bookkeeping, touched by this instance's worker only: where the instance's
  // packets are in the burst being routed, and its members' state under the link state and
  // policy set (FIB snapshot) it last saw, which change far less often than bursts come.
  struct Routing {
    static constexpr uint8_t kNotInBurst = 0xFF;
    uint8_t slot = kNotInBurst;
    uint64_t set_serial = 0;  // PolicySet::serial(); 0: never seen
    uint64_t port_up = 0;
    uint64_t up = 0;      // members whose port is up: what select() is told
    uint64_t usable = 0;  // of those, the ones whose next hop leads to one of the switch's ports
  } routing_;
  PolicyGroup g_;
};

using RoutingPolicyFactory = std::unique_ptr<RoutingPolicy> (*)(const PolicyInit&);

struct RoutingPolicyEntry {
  std::string_view name;
  std::string_view summary;  // one line: what it does and where it comes from
  std::span<const ParamSpec> params;
  std::span<const std::string_view> counters;
  RoutingPolicyFactory make;
  // With these parameters, is the choice always the redirection table's slot at the packet's
  // flow hash (while every member is up)? Then the route stages choose the member inline
  // (grout's reta[hash & mask]) and call the policy only for packets whose member is down.
  bool (*table_by_flow_hash)(const ParamValues&) = nullptr;
};

class RoutingPolicyRegistry {
 public:
  static std::vector<RoutingPolicyEntry>& all();
  static int find(std::string_view name);  // -1 when unknown
  static const RoutingPolicyEntry& at(std::size_t id) { return all()[id]; }
  static bool add(RoutingPolicyEntry e);
  static std::string names();  // "a, b, c" for error messages
};

template <typename T>
RoutingPolicyEntry routing_policy_entry(std::string_view name) {
  static_assert(T::kParams.size() <= kMaxPolicyParams, "too many parameters");
  static_assert(T::kCounters.size() <= kMaxPolicyCounters, "too many counters");
  RoutingPolicyEntry e{name, T::kSummary, T::kParams, T::kCounters,
                       [](const PolicyInit& in) -> std::unique_ptr<RoutingPolicy> { return std::make_unique<T>(in); }};
  if constexpr (requires(const ParamValues& p) { T::table_by_flow_hash(p); }) e.table_by_flow_hash = &T::table_by_flow_hash;
  return e;
}

// A policy type T declares kSummary, kParams (std::array<ParamSpec, N>), kCounters
// (std::array<std::string_view, M>), a constructor from PolicyInit and select(); optionally
// `static bool table_by_flow_hash(const ParamValues&)`.
#define REGISTER_ROUTING_POLICY(Type, name_str) \
  static const bool rs_routing_policy_registered_##Type = ::rs::RoutingPolicyRegistry::add(::rs::routing_policy_entry<Type>(name_str))

}  // namespace rs
