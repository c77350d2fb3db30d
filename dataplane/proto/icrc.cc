#include "dataplane/proto/icrc.h"

#include <rte_net_crc.h>
#include <zlib.h>

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
  uLong crc = crc32(0L, kOnes, sizeof kOnes);
  crc = crc32(crc, hdr, static_cast<uInt>(ip_len + 8 + 12));
  // The rest (the payload, most of the bytes) by DPDK's carry-less-multiply CRC, which starts
  // afresh: zlib joins the two CRCs. The join for a length is computed once per thread and
  // kept while packets keep that length (most are a full MTU).
  const auto rest = static_cast<uint32_t>(l3_len - (ip_len + 8 + 12) - 4);
  thread_local uint32_t op_len = UINT32_MAX;
  thread_local uLong op = 0;
  if (op_len != rest) op = crc32_combine_gen(static_cast<z_off_t>(rest)), op_len = rest;
  // DPDK picks its CRC code on the first call, racing other threads' first calls: picked here
  // once, under C++'s thread-safe static initialisation.
  static const bool picked = (rte_net_crc_set_alg(RTE_NET_CRC_AVX512), true);
  (void)picked;
  const uLong tail = rte_net_crc_calc(l3 + ip_len + 8 + 12, rest, RTE_NET_CRC32_ETH);
  return static_cast<uint32_t>(crc32_combine_op(crc, tail, op));
}

bool roce_icrc_ok(const uint8_t* l3, std::size_t l3_len, bool ipv6) {
  if (l3_len < 4) return false;
  const uint8_t* p = l3 + l3_len - 4;
  uint32_t stored = static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
                    static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
  return stored == roce_icrc(l3, l3_len, ipv6);
}

}  // namespace rs
