// An IPv4 or IPv6 address as the control plane keys things by (router interfaces, neighbours,
// next hops by IP): one type for both families, ordered, printable.
#pragma once
#include <arpa/inet.h>

#include <array>
#include <compare>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

namespace rs {

struct IpAddr {
  bool v6 = false;
  std::array<uint8_t, 16> b{};  // IPv4 in b[0..3], network order; the rest zero
  auto operator<=>(const IpAddr&) const = default;

  static IpAddr v4(uint32_t be) {
    IpAddr a;
    std::memcpy(a.b.data(), &be, 4);
    return a;
  }
  static IpAddr v6_of(const uint8_t* p) {
    IpAddr a;
    a.v6 = true;
    std::memcpy(a.b.data(), p, 16);
    return a;
  }
  uint32_t v4_be() const {
    uint32_t x;
    std::memcpy(&x, b.data(), 4);
    return x;
  }
  // Whether the first `depth` bits equal those of `prefix` (same family).
  bool in(const IpAddr& prefix, uint8_t depth) const {
    if (v6 != prefix.v6) return false;
    for (unsigned i = 0; i < depth / 8u; ++i)
      if (b[i] != prefix.b[i]) return false;
    if (depth % 8 == 0) return true;
    const uint8_t mask = static_cast<uint8_t>(0xFF00u >> (depth % 8));
    return (b[depth / 8] & mask) == (prefix.b[depth / 8] & mask);
  }
};

inline std::string format_ip(const IpAddr& a) {
  char s[INET6_ADDRSTRLEN];
  inet_ntop(a.v6 ? AF_INET6 : AF_INET, a.b.data(), s, sizeof s);
  return s;
}

inline std::optional<IpAddr> parse_ip(std::string_view text) {
  const std::string t(text);
  IpAddr a;
  if (inet_pton(AF_INET, t.c_str(), a.b.data()) == 1) return a;
  a.v6 = true;
  if (inet_pton(AF_INET6, t.c_str(), a.b.data()) == 1) return a;
  return std::nullopt;
}

}  // namespace rs
