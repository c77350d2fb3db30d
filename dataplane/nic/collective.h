// The collectives of a training step as NCCL's ring algorithm moves their data, over emulated
// NICs: each becomes queue pairs on its ranks' hosts (roce_nic.h), and its figures are read as
// nccl-tests prints them.
//   - AllReduce: the buffer in n chunks; 2(n - 1) steps around the ring (n - 1 reduce-scatter,
//     n - 1 all-gather), each rank sending one chunk to its right neighbour per step, and a step
//     going only once the chunk it forwards came from the left one;
//   - AllGather and ReduceScatter: the n - 1 steps of one half;
//   - all-to-all: each rank sends a chunk to every other rank at once.
// A chunk goes in `slices` messages (NCCL's pipelining of a step), each slice of a step waiting
// for the same slice of the step before. nccl-tests' figures: algbw = size / time; busbw =
// algbw x 2(n - 1)/n for AllReduce, x (n - 1)/n for the others.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "dataplane/nic/roce_nic.h"

namespace rs::nic {

enum class CollectiveOp : uint8_t { AllReduce, AllGather, ReduceScatter, AllToAll };
const char* collective_name(CollectiveOp op);  // "allreduce", ...
bool collective_of(const std::string& name, CollectiveOp& op);
double busbw_factor(CollectiveOp op, std::size_t ranks);

struct CollectiveSpec {
  CollectiveOp op = CollectiveOp::AllReduce;
  std::vector<uint16_t> ports;  // the ranks' switch ports, in ring order
  uint64_t size_bytes = 0;      // nccl-tests' size: the buffer (AllGather: the gathered result)
  uint32_t slices = 4;
  uint32_t qpn = 0x800;         // the ring's QP number (all-to-all: the first of its pairs')
  uint8_t dscp = 26;
  uint64_t start_ns = 0;
  bool operator==(const CollectiveSpec&) const = default;
};

// One rank: its host's address and its queue pairs (the collective's are appended).
struct Rank {
  uint32_t ip;  // network order
  std::vector<QpSpec>* qps;
};
// Adds the collective's queue pairs, tagged `tag`, to its ranks.
void expand_collective(const CollectiveSpec& c, uint16_t tag, const std::vector<Rank>& ranks);

}  // namespace rs::nic
