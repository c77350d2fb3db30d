// RFC 1071's Internet checksum as the tests compute it, written apart from the switch's own code
// (dataplane/proto) so that a test checks the codecs against something they do not share.
#pragma once
#include <cstddef>
#include <cstdint>

namespace rs::test {

// The one's-complement sum of `n` bytes as 16-bit big-endian words (an odd last byte padded),
// added to `s`; not folded.
inline uint32_t sum16(const uint8_t* p, std::size_t n, uint32_t s = 0) {
  for (std::size_t i = 0; i + 1 < n; i += 2) s += static_cast<uint32_t>(p[i] << 8 | p[i + 1]);
  if (n & 1) s += static_cast<uint32_t>(p[n - 1] << 8);
  return s;
}
// The checksum field's value: the folded sum, complemented (0 over data that holds a right one).
inline uint16_t fold(uint32_t s) {
  while (s >> 16) s = (s & 0xFFFF) + (s >> 16);
  return static_cast<uint16_t>(~s);
}

}  // namespace rs::test
