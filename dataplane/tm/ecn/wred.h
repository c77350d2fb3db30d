// ECN marking and WRED at enqueue, on the queue's instantaneous depth (DCQCN's law): below
// Kmin nothing, linear from 0 to Pmax between Kmin and Kmax, always at or above Kmax. ECT
// packets are marked CE; non-ECT packets in lossy queues are dropped by the same law when the
// profile enables WRED, else left to the tail drop. Lossless queues never drop here.
#pragma once
#include <rte_mbuf.h>

#include <cstdint>

#include "dataplane/core/packet_meta.h"
#include "dataplane/core/rng.h"
#include "dataplane/tm/buffer/mmu_config.h"

namespace rs {

enum class EcnVerdict : uint8_t { Pass, Mark, Drop };

// The law's probability scaled to 2^32 (so it compares with one FastRng draw): 0 below kmin,
// 2^32 at or above kmax.
uint64_t wred_threshold(const WredProfile& p, uint64_t depth_bytes);

// ecn: the packet's ECN field (0 = Not-ECT, 1/2 = ECT, 3 = CE already).
inline EcnVerdict wred_decide(const WredProfile& p, uint64_t depth_bytes, uint8_t ecn, bool lossless, FastRng& rng) {
  if (!p.enabled || depth_bytes < p.kmin) return EcnVerdict::Pass;
  const bool ect = ecn != 0;
  if (ect ? !p.ecn_mark : (lossless || !p.wred_drop)) return EcnVerdict::Pass;
  if (ecn == 3) return EcnVerdict::Pass;  // already CE: nothing to change
  if (static_cast<uint64_t>(rng.next()) >= wred_threshold(p, depth_bytes)) return EcnVerdict::Pass;
  return ect ? EcnVerdict::Mark : EcnVerdict::Drop;
}

// Sets ECN to CE in the IPv4 (checksum updated incrementally) or IPv6 header at
// pm.l3_offset and in pm.ecn. The RoCE ICRC masks these bits, so it stays valid.
void mark_ce(rte_mbuf* m, PacketMeta& pm);

}  // namespace rs
