// A vector of packets handed from stage to stage, as VPP's frames and DPDK graph's objs.
#pragma once
#include <rte_mbuf.h>

#include <cstdint>

#include "dataplane/core/types.h"

namespace rs {

struct Burst {
  rte_mbuf* pkts[kBurst];
  uint16_t n = 0;

  void push(rte_mbuf* m) { pkts[n++] = m; }
  void clear() { n = 0; }
  bool empty() const { return n == 0; }
};

}  // namespace rs
