// The forwarding information base: LPM tables (P4 ipv4_lpm / ipv6_lpm), next hops and
// next-hop groups (ecmp_group / ecmp_member). Immutable once published: the control plane
// builds a new Fib and swaps one pointer; workers read it between quiescent states.
#pragma once
#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_lpm.h>
#include <rte_lpm6.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace rs {

struct NextHop {
  uint16_t port;
  rte_ether_addr mac;
};

// A next hop as one word, as it lies in memory (port, then MAC): what the fast path's rewrite
// and Fib::group_words() load in one go.
static_assert(sizeof(NextHop) == 8 && offsetof(NextHop, port) == 0 && offsetof(NextHop, mac) == 2);
[[gnu::always_inline]] inline uint64_t nexthop_word(const NextHop& nh) {
  uint64_t w;
  std::memcpy(&w, &nh, sizeof(w));
  return w;
}

struct NextHopGroup {
  std::string name;
  uint16_t policy = 0;             // index into the routing policy registry
  uint32_t mask = 0;               // table.size() - 1; the table size is a power of two
  std::vector<uint32_t> members;   // next-hop indices
  std::vector<uint32_t> table;     // redirection table: hash slot -> next-hop index
  std::vector<uint64_t> words;     // the same table as next-hop words (Fib::add_group fills it)
};

struct RouteSpec {
  bool ipv6 = false;
  uint8_t addr[16]{};  // IPv4 in the first 4 bytes, network order
  uint8_t depth = 0;
  uint32_t group = 0;
};

class Fib {
 public:
  Fib();
  ~Fib();
  Fib(const Fib&) = delete;
  Fib& operator=(const Fib&) = delete;

  // Start-up / control-plane side. Throws std::runtime_error with a reason on failure.
  uint32_t add_nexthop(const NextHop& nh);
  uint32_t add_group(NextHopGroup g);  // fills table by replication of members when empty
  void add_route(const RouteSpec& r, uint32_t max_routes_hint = 4096);

  // Fast-path side.
  // Inline: called once per packet.
  bool lookup4(uint32_t dst_be, uint32_t& group) const { return v4_view().lookup(dst_be, group); }
  // lookup4() over values copied out of the Fib: a burst loop keeps them in registers instead
  // of reloading them after every byte store it makes (a byte store may alias the Fib).
  struct V4View {
    rte_lpm* lpm;
    int64_t default_group;
    bool lookup(uint32_t dst_be, uint32_t& group) const { return lpm && lookup_in_lpm(dst_be, group); }
    // lookup() for a caller that checked once that lpm exists (it does whenever any IPv4
    // route does, the default included).
    // A prefix up to /24 (every route of a typical fabric) is answered by its tbl24 entry
    // alone: valid and not extended is one mask and one compare, where rte_lpm_lookup tests
    // the two bits apart. The rest (tbl8 groups, misses) goes through rte_lpm_lookup.
    [[gnu::always_inline]] bool lookup_in_lpm(uint32_t dst_be, uint32_t& group) const {
      const uint32_t ip = rte_be_to_cpu_32(dst_be);
      uint32_t e;
      static_assert(sizeof(lpm->tbl24[0]) == sizeof(e));
      __builtin_memcpy(&e, &lpm->tbl24[ip >> 8], sizeof(e));
      if ((e & RTE_LPM_VALID_EXT_ENTRY_BITMASK) == RTE_LPM_LOOKUP_SUCCESS) [[likely]] {
        group = e & 0x00FFFFFF;
        return true;
      }
      return lookup_slow(ip, group);
    }
    bool lookup_slow(uint32_t ip, uint32_t& group) const {
      if (rte_lpm_lookup(lpm, ip, &group) == 0) return true;
      if (default_group < 0) return false;
      group = static_cast<uint32_t>(default_group);
      return true;
    }
  };
  V4View v4_view() const { return {v4_, default_v4_}; }
  bool lookup6(const uint8_t dst[16], uint32_t& group) const {
    if (v6_ && rte_lpm6_lookup(v6_, dst, &group) == 0) return true;
    if (default_v6_ < 0) return false;
    group = static_cast<uint32_t>(default_v6_);
    return true;
  }
  const NextHopGroup& group(uint32_t id) const { return groups_[id]; }
  const NextHopGroup* group_table() const { return groups_.data(); }
  // A group as the fast path's inline ECMP reads it: the redirection table holding each slot's
  // next hop as one word (port and MAC, as NextHop lies in memory), 16 bytes a group. The
  // member is then two dependent loads, not four (group, its table, the slot, the next hop).
  struct GroupWords {
    const uint64_t* words;
    uint32_t mask;
  };
  const GroupWords* group_words() const { return group_words_.data(); }
  const NextHop& nexthop(uint32_t id) const { return nexthops_[id]; }
  const NextHop* nexthop_table() const { return nexthops_.data(); }
  std::size_t num_groups() const { return groups_.size(); }
  std::size_t num_nexthops() const { return nexthops_.size(); }
  std::size_t num_routes() const { return routes_; }
  // The routing policy every group uses, or -1 when groups differ (or there are none): with one
  // policy, nexthop_group hands it the whole burst at once.
  int uniform_policy() const { return uniform_policy_; }

  // Builds the redirection table: each member gets table_size / members slots (weights by
  // replication), interleaved so a power-of-two mask spreads flows evenly.
  static std::vector<uint32_t> build_table(const std::vector<uint32_t>& members, uint32_t size);

 private:
  void ensure_v4(uint32_t max_routes);
  void ensure_v6(uint32_t max_routes);

  rte_lpm* v4_ = nullptr;
  // rte_lpm and rte_lpm6 take depths from 1: the default routes (/0) live here; -1 = none.
  int64_t default_v4_ = -1;
  int64_t default_v6_ = -1;
  rte_lpm6* v6_ = nullptr;
  std::vector<NextHop> nexthops_;
  std::vector<NextHopGroup> groups_;
  // One per group, into groups_[i].words: a vector's buffer stays put when groups_ moves it.
  std::vector<GroupWords> group_words_;
  std::size_t routes_ = 0;
  int uniform_policy_ = -1;
};

}  // namespace rs
