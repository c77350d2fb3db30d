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

  void select(PacketMeta* const* pkts, uint16_t n, const SelectEnv& env, uint16_t* member) override {
    uint32_t from_memory = 0;
    for (uint16_t i = 0; i < n; ++i) {
      // The candidates, kept least loaded first: the samples (distinct; every live member
      // when there are no more than d), then the remembered members still live and not sampled.
      std::array<Cand, kMaxD + kMaxM> c;
      unsigned k = 0;
      uint64_t taken = 0;
      for (unsigned s = 0; s < d_ && taken != env.up; ++s) {
        const uint16_t mb = random_member(env.up & ~taken);
        taken |= uint64_t{1} << mb;
        insert(c, k++, {queue_bytes(env, mb, *pkts[i]), mb, false});
      }
      for (unsigned j = 0; j < mem_n_; ++j)
        if (((env.up & ~taken) >> memory_[j]) & 1) {
          taken |= uint64_t{1} << memory_[j];
          insert(c, k++, {queue_bytes(env, memory_[j], *pkts[i]), memory_[j], true});
        }
      member[i] = c[0].m;
      from_memory += c[0].remembered;
      mem_n_ = std::min(m_, k);
      for (unsigned j = 0; j < mem_n_; ++j) memory_[j] = c[j].m;
    }
    if (from_memory) counters[FromMemory].add(from_memory);
  }

 private:
  static constexpr unsigned kMaxD = 8, kMaxM = 4;
  struct Cand {
    uint64_t bytes;
    uint16_t m;
    bool remembered;
  };
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
