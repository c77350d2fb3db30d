// DCQCN's marking law on instantaneous queue depth, and the CE mark itself (IPv4 with an
// incremental checksum, IPv6 traffic class). Called per packet at enqueue: no allocation.
#include "dataplane/tm/ecn/wred.h"

#include <algorithm>
#include <cstring>

#include "dataplane/proto/checksum.h"

namespace rs {
namespace {
constexpr uint64_t kOne = 1ull << 32;  // probability 1 in the scale of one FastRng draw
constexpr uint8_t kEcnCe = 3;
}  // namespace

uint64_t wred_threshold(const WredProfile& p, uint64_t depth_bytes) {
  if (depth_bytes < p.kmin) return 0;
  // Also covers kmax <= kmin (rejected by validation): never reaches the division below.
  if (depth_bytes >= p.kmax) return kOne;
  const uint64_t pmax = std::min<uint32_t>(p.pmax_percent, 100);
  // (depth - kmin) * pmax * 2^32 needs up to 64 + 7 + 32 bits: do it in 128.
  const unsigned __int128 num = static_cast<unsigned __int128>(depth_bytes - p.kmin) * pmax * kOne;
  const unsigned __int128 den = static_cast<unsigned __int128>(p.kmax - p.kmin) * 100;
  return static_cast<uint64_t>(num / den);
}

void mark_ce(rte_mbuf* m, PacketMeta& pm) {
  uint8_t* l3 = rte_pktmbuf_mtod_offset(m, uint8_t*, pm.l3_offset);
  if (pm.l3 == L3Type::Ipv4) {
    // TOS shares its 16-bit checksum word with version/IHL (bytes 0-1); the checksum is at 10.
    uint16_t old_word, csum;
    std::memcpy(&old_word, l3, 2);
    std::memcpy(&csum, l3 + 10, 2);
    l3[1] |= kEcnCe;
    uint16_t new_word;
    std::memcpy(&new_word, l3, 2);
    if (new_word != old_word) {
      csum = csum_update16(csum, old_word, new_word);
      std::memcpy(l3 + 10, &csum, 2);
    }
  } else if (pm.l3 == L3Type::Ipv6) {
    // version(4) | traffic class(8) | flow label(20): ECN, the low two bits of the traffic
    // class, are bits 5-4 of the second byte. IPv6 has no header checksum.
    l3[1] |= kEcnCe << 4;
  } else {
    return;  // no IP header: nothing to mark (wred_decide only marks ECT, i.e. IP, packets)
  }
  pm.ecn = kEcnCe;
}

}  // namespace rs
