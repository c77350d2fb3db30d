// Typed, path-aware reads of YAML nodes for the config loader: every failure throws a
// ConfigError naming the file, the line, the key path and the reason.
#pragma once
#include <arpa/inet.h>
#include <fmt/core.h>
#include <rte_ether.h>
#include <yaml-cpp/yaml.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <stdexcept>
#include <string>

#include "control/config/config_loader.h"

namespace rs {

class ConfigReader {
 public:
  explicit ConfigReader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const YAML::Node& n, const std::string& path, const std::string& why) const {
    const int line = n.IsDefined() && n.Mark().line >= 0 ? n.Mark().line + 1 : 0;
    throw ConfigError(file_, line, path, why);
  }

  void map(const YAML::Node& n, const std::string& path) const {
    if (!n.IsMap()) fail(n, path, "expected a map");
  }
  void seq(const YAML::Node& n, const std::string& path) const {
    if (!n.IsSequence()) fail(n, path, "expected a list");
  }
  void keys(const YAML::Node& n, const std::string& path, std::initializer_list<const char*> allowed) const {
    map(n, path);
    for (auto kv : n) {
      const auto k = key(kv.first, path);
      bool ok = false;
      for (auto a : allowed) ok |= (k == a);
      if (!ok) {
        std::string list;
        for (auto a : allowed) list += std::string(list.empty() ? "" : ", ") + a;
        fail(kv.first, join(path, k.empty() ? "\"\"" : k), fmt::format("unknown key (allowed: {})", list));  // an empty key, shown
      }
    }
  }
  static std::string join(const std::string& path, const std::string& k) { return path.empty() ? k : path + "." + k; }
  // A map's key as a name: YAML allows a list or a map there (`? [a, b]: 1`), a config does not.
  std::string key(const YAML::Node& k, const std::string& path) const {
    if (!k.IsScalar()) fail(k, path.empty() ? "(top level)" : path, "a key must be a name, not a list or a map");
    return k.as<std::string>();
  }

  std::string str(const YAML::Node& n, const std::string& path) const {
    if (!n.IsScalar()) fail(n, path, "expected a string");
    return n.as<std::string>();
  }
  double real(const YAML::Node& n, const std::string& path, double lo, double hi) const {
    double v;
    if (!n.IsScalar() || !YAML::convert<double>::decode(n, v) || std::isnan(v)) fail(n, path, "expected a number");
    if (v < lo || v > hi) fail(n, path, fmt::format("out of range [{}, {}], got {}", lo, hi, n.as<std::string>()));
    return v;
  }
  // A time given in units of `unit_ns` nanoseconds (1e9: seconds, 1e3: microseconds), within
  // [lo, hi] units, as the nearest whole nanosecond: 1.001 s is 1001000000 ns (x * 1e9 is
  // 1000999999.9999999, which a truncation would keep).
  uint64_t nanoseconds(const YAML::Node& n, const std::string& path, double lo, double hi, double unit_ns) const {
    return to_ns(real(n, path, lo, hi), unit_ns);
  }
  static uint64_t to_ns(double units, double unit_ns) { return static_cast<uint64_t>(std::llround(units * unit_ns)); }
  int64_t integer(const YAML::Node& n, const std::string& path, int64_t lo, int64_t hi) const {
    int64_t v;
    if (!n.IsScalar() || !YAML::convert<int64_t>::decode(n, v)) fail(n, path, "expected an integer");
    if (v < lo || v > hi) fail(n, path, fmt::format("out of range [{}, {}], got {}", lo, hi, v));
    return v;
  }
  bool boolean(const YAML::Node& n, const std::string& path) const {
    bool v;
    if (!n.IsScalar() || !YAML::convert<bool>::decode(n, v)) fail(n, path, "expected true or false");
    return v;
  }
  // A {key: value} map of small integers applied over `arr` (keys 0..keys_max, values 0..values_max).
  template <std::size_t N>
  void index_map(const YAML::Node& n, const std::string& path, int keys_max, int values_max, std::array<uint8_t, N>& arr) const {
    static_assert(N > 0);
    map(n, path);
    for (auto kv : n) {
      const auto k = integer(kv.first, path, 0, keys_max);
      arr[static_cast<std::size_t>(k)] = static_cast<uint8_t>(integer(kv.second, fmt::format("{}.{}", path, k), 0, values_max));
    }
  }
  rte_ether_addr mac(const YAML::Node& n, const std::string& path) const {
    const std::string s = str(n, path);
    rte_ether_addr a{};
    if (rte_ether_unformat_addr(s.c_str(), &a) != 0) fail(n, path, fmt::format("not a MAC address: '{}'", s));
    return a;
  }
  uint32_t ipv4(const YAML::Node& n, const std::string& path) const {
    const std::string s = str(n, path);
    in_addr a{};
    if (inet_pton(AF_INET, s.c_str(), &a) != 1) fail(n, path, fmt::format("not an IPv4 address: '{}'", s));
    return a.s_addr;
  }
  RouteSpec prefix(const YAML::Node& n, const std::string& path) const {
    RouteSpec r;
    if (const std::string why = parse_prefix(str(n, path), false, r); !why.empty()) fail(n, path, why);
    return r;
  }
  // The text form both readers share (the control protocol's route operations call it on a
  // JSON string directly): "" when `s` is a prefix, else why not. `strict`: refuse host bits.
  static std::string parse_prefix(const std::string& s, bool strict, RouteSpec& r) {
    r = RouteSpec{};
    const auto slash = s.find('/');
    const std::string addr = s.substr(0, slash);
    int max_len;
    if (addr.find(':') != std::string::npos) {
      r.ipv6 = true;
      max_len = 128;
      if (inet_pton(AF_INET6, addr.c_str(), r.addr) != 1) return fmt::format("not an IPv6 prefix: '{}'", s);
    } else {
      max_len = 32;
      if (inet_pton(AF_INET, addr.c_str(), r.addr) != 1) return fmt::format("not an IPv4 prefix: '{}'", s);
    }
    int len = max_len;
    if (slash != std::string::npos) {
      try {
        std::size_t used = 0;
        len = std::stoi(s.substr(slash + 1), &used);
        if (used != s.size() - slash - 1) throw std::invalid_argument("trailing");
      } catch (const std::exception&) {
        return fmt::format("bad prefix length in '{}'", s);
      }
    }
    if (len < 0 || len > max_len) return fmt::format("prefix length {} out of range", len);
    r.depth = static_cast<uint8_t>(len);
    if (strict) {
      const RouteSpec m = masked(r);
      if (std::memcmp(r.addr, m.addr, sizeof r.addr) != 0)
        return fmt::format("{} has host bits set (did you mean {}?)", s, prefix_text(m));
    }
    return "";
  }

  // A route's prefix, as prefix() reads it, refused when it has host bits set (bits beyond its
  // length), as Linux's `ip route` refuses them ("Invalid prefix for given prefix length"):
  // `10.0.0.1/24 has host bits set (did you mean 10.0.0.0/24?)`. Routes in a file and route.add
  // use it; route.list's filter and P4 match keys take any prefix (prefix()).
  RouteSpec route_prefix(const YAML::Node& n, const std::string& path) const {
    RouteSpec r;
    if (const std::string why = parse_prefix(str(n, path), true, r); !why.empty()) fail(n, path, why);
    return r;
  }
  // r with the bits beyond its length cleared.
  static RouteSpec masked(RouteSpec r) {
    for (int b = r.depth; b < (r.ipv6 ? 128 : 32); ++b) r.addr[b / 8] &= static_cast<uint8_t>(~(0x80 >> (b % 8)));
    return r;
  }
  // "10.0.0.0/24", "2001:db8::/32": the address as inet_ntop writes it, and the length.
  static std::string prefix_text(const RouteSpec& r) {
    char buf[INET6_ADDRSTRLEN]{};
    inet_ntop(r.ipv6 ? AF_INET6 : AF_INET, r.addr, buf, sizeof buf);
    return fmt::format("{}/{}", buf, r.depth);
  }

  // A scalar for all eight queues, or a list of eight.
  template <typename F>
  void per_queue(const YAML::Node& n, const std::string& path, F set) const {
    if (n.IsSequence()) {
      if (n.size() != 8) fail(n, path, fmt::format("expected 8 values (one per queue), got {}", n.size()));
      for (int q = 0; q < 8; ++q) set(q, n[q], fmt::format("{}[{}]", path, q));
    } else {
      for (int q = 0; q < 8; ++q) set(q, n, path);
    }
  }

 private:
  std::string file_;
};

}  // namespace rs
