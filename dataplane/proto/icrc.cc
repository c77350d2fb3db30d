#include "dataplane/proto/icrc.h"

#include <isa-l/crc.h>

#include <cstring>

namespace rs {

uint32_t roce_icrc(const uint8_t* l3, std::size_t l3_len, bool ipv6) {
  static const uint8_t kOnes[8] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
  const std::size_t ip_len = ipv6 ? 40 : static_cast<std::size_t>(l3[0] & 0x0F) * 4;
  if (l3_len < ip_len + 8 + 12 + 4) return 0;
  uint8_t hdr[60 + 8 + 12];
  std::memcpy(hdr, l3, ip_len + 8 + 12);
  if (ipv6) {
    hdr[0] |= 0x0F;  // traffic class low nibble
    hdr[1] = 0xFF;   // traffic class high nibble + flow label
    hdr[2] = 0xFF;
    hdr[3] = 0xFF;
    hdr[7] = 0xFF;  // hop limit
  } else {
    hdr[1] = 0xFF;   // TOS
    hdr[8] = 0xFF;   // TTL
    hdr[10] = 0xFF;  // header checksum
    hdr[11] = 0xFF;
  }
  uint8_t* udp = hdr + ip_len;
  udp[6] = 0xFF;
  udp[7] = 0xFF;
  udp[8 + 4] = 0xFF;  // BTH byte 4: FECN/BECN/reserved
  // ISA-L's CRC-32 (zlib's, chainable) picks its widest carry-less-multiply code by CPUID on
  // its own; DPDK's rte_net_crc stays on its 128-bit code unless the EAL allows 512-bit vectors, and
  // this CRC over every emulated frame's payload is a large share of an emulated fabric's CPU.
  const std::size_t head = ip_len + 8 + 12;
  uint32_t crc = crc32_gzip_refl(0, kOnes, sizeof kOnes);
  crc = crc32_gzip_refl(crc, hdr, head);
  return crc32_gzip_refl(crc, l3 + head, l3_len - head - 4);
}

bool roce_icrc_ok(const uint8_t* l3, std::size_t l3_len, bool ipv6) {
  if (l3_len < 4) return false;
  const uint8_t* p = l3 + l3_len - 4;
  uint32_t stored = static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
                    static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
  return stored == roce_icrc(l3, l3_len, ipv6);
}

}  // namespace rs
