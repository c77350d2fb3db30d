// RoCEv2 invariant CRC (IBTA Annex A17): CRC-32 over 8 bytes of 0xFF, the IP header with the
// variant fields set to ones, the UDP header with checksum ones, the BTH with byte 4 ones, and
// the rest of the packet up to the ICRC. Used by emulated hosts to build and verify packets;
// the switch itself never recomputes it.
#pragma once
#include <cstddef>
#include <cstdint>

namespace rs {

// `l3` points at the IPv4/IPv6 header; `l3_len` covers IP header through the ICRC (the IP
// datagram). Returns the ICRC as it must be stored: little-endian value in host order.
uint32_t roce_icrc(const uint8_t* l3, std::size_t l3_len, bool ipv6);

// True when the last four bytes of the datagram hold the right ICRC.
bool roce_icrc_ok(const uint8_t* l3, std::size_t l3_len, bool ipv6);

}  // namespace rs
