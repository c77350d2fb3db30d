// Incremental Internet checksum update (RFC 1624, eqn. 3): HC' = ~(~HC + ~m + m'). rte_net has
// full-header checksums only; a TTL decrement or ECN mark must not re-sum the header.
#pragma once
#include <cstdint>

namespace rs {

// All values in network byte order as stored in the packet.
inline uint16_t csum_update16(uint16_t csum, uint16_t old_word, uint16_t new_word) {
  uint32_t sum = static_cast<uint16_t>(~csum) + static_cast<uint16_t>(~old_word) + new_word;
  sum = (sum & 0xFFFF) + (sum >> 16);
  sum = (sum & 0xFFFF) + (sum >> 16);
  return static_cast<uint16_t>(~sum);
}

}  // namespace rs
