// drill: DRILL(d, m) (Ghorbani et al., "DRILL: Micro Load Balancing for Low-latency Data
// Center Networks", SIGCOMM'17). Per packet, the power of d choices with memory: sample d
// distinct random live members, add the m least loaded members remembered from the packets
// before, and send the packet to the one with the fewest bytes queued in the packet's own
// queue; then remember the m least loaded of those. Two samples already avoid the worst queue
// almost always; the memory keeps a good member in sight between samples. The paper's
// d = 2, m = 1 is the default.
//
// Ties go to the earliest sample (a random member), never to the memory, so equal queues get
// equal shares: the load view changes less often than packets come.
#include <algorithm>
#include <array>

#include "dataplane/routing/routing_policy.h"

namespace rs {
namespace {

class Drill final : public RoutingPolicy {
 public:
  static constexpr std::string_view kSummary =
      "per packet, the shortest queue among d random members and m remembered ones (DRILL, SIGCOMM'17)";
  enum Param { D, M };
  static constexpr std::array<ParamSpec, 2> kParams = {{
      {"d", ParamType::Int, 2, 1, 8, "random live members sampled per packet"},
      {"m", ParamType::Int, 1, 0, 4, "least loaded members remembered from one packet to the next"},
  }};
  enum Ctr { FromMemory };
  static constexpr std::array<std::string_view, 1> kCounters = {"from_memory"};  // packets sent to a remembered member

  explicit Drill(const PolicyInit& in)
      : RoutingPolicy(in), d_(static_cast<unsigned>(in.params[D])), m_(static_cast<unsigned>(in.params[M])) {}

  void select(const PacketMeta* const* pkts, uint16_t n, const SelectEnv& env, uint16_t* member) override {
    if (m_ > 1) run<true>(pkts, n, env, member);
    else run<false>(pkts, n, env, member);
  }

 private:
  static constexpr unsigned kMaxD = 8, kMaxM = 4;
  struct Cand {
    uint64_t bytes;
    uint16_t m;
    bool remembered;
  };
  // kSorted: more than one member is remembered, so the candidates are kept sorted (least
  // loaded first). Else only the least loaded matters, found without a branch on the loads,
  // which are as good as random to the branch predictor.
  template <bool kSorted>
  void run(const PacketMeta* const* pkts, uint16_t n, const SelectEnv& env, uint16_t* member) {
    // Each egress queue's load on every member, read once per call for the queues its packets use.
    std::array<std::array<uint64_t, kMaxGroupMembers>, 8> bytes;
    unsigned have = 0;
    uint32_t from_memory = 0;
    // Locals, written back at the end: a store to member[] may alias the policy's fields and
    // env as far as the compiler knows, and would make it reload them for every packet.
    const uint64_t up = env.up;
    // When at most one member is kept (!kSorted): that member, and whether there is one; the
    // sorted form keeps its members in memory_ itself.
    uint16_t last = memory_[0];
    unsigned remembered = mem_n_;
    for (uint16_t i = 0; i < n; ++i) {
      const unsigned q = pkts[i]->queue & 7u;
      if (!((have >> q) & 1)) {
        queue_loads(env, q, bytes[q].data());
        have |= 1u << q;
      }
      const uint64_t* b = bytes[q].data();
      // The candidates: the samples (distinct; every live member when there are no more than
      // d), then the remembered members still live and not sampled. The least loaded wins,
      // the earliest of equals: a sample before the memory.
      std::array<Cand, kMaxD + kMaxM> c;
      Cand best{UINT64_MAX, 0, false};
      unsigned k = 0;
      uint64_t taken = 0;
      auto consider = [&](Cand x) {
        if constexpr (kSorted) insert(c, k, x);
        best = x.bytes < best.bytes ? x : best;
        ++k;
      };
      unsigned s = 0;
      if (d_ >= 2 && (up & (up - 1))) {
        uint16_t m0, m1;
        random_pair(up, m0, m1);
        taken = uint64_t{1} << m0 | uint64_t{1} << m1;
        consider({b[m0], m0, false});
        consider({b[m1], m1, false});
        s = 2;
      }
      for (; s < d_ && taken != up; ++s) {
        const uint16_t mb = random_member(up & ~taken);
        taken |= uint64_t{1} << mb;
        consider({b[mb], mb, false});
      }
      if constexpr (kSorted) {
        for (unsigned j = 0; j < mem_n_; ++j)
          if (((up & ~taken) >> memory_[j]) & 1) {
            taken |= uint64_t{1} << memory_[j];
            consider({b[memory_[j]], memory_[j], true});
          }
      } else if (remembered) {
        // Not live or already sampled: no candidate (never less loaded than a sample). In
        // masks: a compiler would branch on the comparison here.
        const uint16_t r = last;
        const uint64_t fresh = ((up & ~taken) >> r) & 1;
        const uint64_t win = uint64_t{0} - uint64_t{(b[r] | (fresh - 1)) < best.bytes};
        best.m = static_cast<uint16_t>((best.m & ~win) | (r & win));
        best.remembered = win & 1;
        k += static_cast<unsigned>(fresh);
      }
      member[i] = best.m;
      from_memory += best.remembered;
      if constexpr (kSorted) {
        mem_n_ = std::min(m_, k);
        for (unsigned j = 0; j < mem_n_; ++j) memory_[j] = c[j].m;
      } else {
        remembered = std::min(m_, k);
        last = best.m;
      }
    }
    if constexpr (!kSorted) {
      mem_n_ = remembered;
      memory_[0] = last;
    }
    if (from_memory) counters[FromMemory].add(from_memory);
  }
  // Insertion into c[0..k), after every candidate with as few bytes: ties keep their order.
  static void insert(std::array<Cand, kMaxD + kMaxM>& c, unsigned k, Cand x) {
    for (; k > 0 && c[k - 1].bytes > x.bytes; --k) c[k] = c[k - 1];
    c[k] = x;
  }
  unsigned d_, m_;
  std::array<uint16_t, kMaxM> memory_{};
  unsigned mem_n_ = 0;
};

REGISTER_ROUTING_POLICY(Drill, "drill");

}  // namespace
}  // namespace rs
