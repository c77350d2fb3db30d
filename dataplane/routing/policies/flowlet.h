// The flowlet table both flowlet policies share (flowlet_random.cc, flowlet_quality.cc say
// what each does): indexed by the flow hash, as a switch's flowlet table is; each slot keeps
// the whole hash as a tag, so flows that share a slot are counted. They share its member too
// (a switch's flowlet table does the same): moving one would end the other's flowlet early.
// A new flowlet takes a random live member, or with kByQuality one of the best quality band.
#pragma once
#include <bit>
#include <vector>

#include "dataplane/routing/routing_policy.h"

namespace rs {

template <bool kByQuality>
class Flowlet final : public RoutingPolicy {
 public:
  static constexpr std::string_view kSummary =
      kByQuality ? "a flow keeps its member within a flowlet; a new flowlet takes the best quality band (SAI ARS FLOWLET_QUALITY)"
                 : "a flow keeps its member within a flowlet; after an idle gap a random live member (LetFlow, NSDI'17)";
  enum Param { FlowTableSize, IdleTimeUs };
  static constexpr std::array<ParamSpec, 2> kParams = {{
      {"flow_table_size", ParamType::Int, 4096, 64, 1 << 20, "flowlet table slots (rounded up to a power of two)"},
      {"idle_time_us", ParamType::Int, 256, 1, 1e6, "a gap longer than this ends a flowlet (SAI_ARS_ATTR_IDLE_TIME)"},
  }};
  enum Ctr { Flowlets, Collisions, SteeredAway };
  static constexpr std::array<std::string_view, 3> kCounters = {"flowlets", "collisions", "steered_away"};

  explicit Flowlet(const PolicyInit& in)
      : RoutingPolicy(in),
        table_(std::bit_ceil(static_cast<uint32_t>(in.params[FlowTableSize]))),
        mask_(static_cast<uint32_t>(table_.size() - 1)),
        idle_ns_(static_cast<uint64_t>(in.params[IdleTimeUs]) * 1000) {}

  void select(const PacketMeta* const* pkts, uint16_t n, const SelectEnv& env, uint16_t* member) override {
    std::array<uint32_t, kCounters.size()> tally{};
    for (uint16_t i = 0; i < n; ++i) {
      const uint32_t h = pkts[i]->flow_hash;
      Slot& s = table_[h & mask_];
      const bool active = s.member != kFree && env.now_ns <= s.last_ns + idle_ns_;
      tally[Collisions] += active && s.tag != h;
      bool fresh = !active;
      if (active && !((env.up >> s.member) & 1)) {
        fresh = true;  // its path is gone: a reorder is the lesser harm
        ++tally[SteeredAway];
      }
      if (fresh) {
        s = Slot{h, random_member(kByQuality ? best_band(env, env.up) : env.up), env.now_ns};
        ++tally[Flowlets];
      }
      s.last_ns = env.now_ns;
      member[i] = s.member;
    }
    add_tallies(counters.data(), tally);
  }

 private:
  static constexpr uint16_t kFree = UINT16_MAX;
  struct Slot {
    uint32_t tag = 0;  // the flow hash of the flowlet that took the slot
    uint16_t member = kFree;
    uint64_t last_ns = 0;
  };
  std::vector<Slot> table_;
  uint32_t mask_;
  uint64_t idle_ns_;
};

}  // namespace rs
