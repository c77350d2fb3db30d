// A MAC address as text, the one way every listing, trace and dump prints it: lower-case hex
// pairs joined by colons (Linux's and SONiC's form).
#pragma once
#include <fmt/core.h>
#include <rte_ether.h>

#include <cstdint>
#include <string>

namespace rs {

inline std::string format_mac(const uint8_t* b) {
  return fmt::format("{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}", b[0], b[1], b[2], b[3], b[4], b[5]);
}
inline std::string format_mac(const rte_ether_addr& a) { return format_mac(a.addr_bytes); }

}  // namespace rs
