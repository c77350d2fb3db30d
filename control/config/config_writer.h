// The config dump's YAML emitter and the text forms it shares between its files (config_dump.cc
// and config_dump_ports.cc): scalars every YAML reader reads back as the same string, doubles
// in their shortest round-trip form, times in the loader's units.
#pragma once
#include <arpa/inet.h>
#include <fmt/core.h>
#include <fmt/format.h>
#include <rte_ether.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>

#include "control/config/config_reader.h"
#include "dataplane/switch/switch_config.h"
#include "dataplane/proto/mac_addr.h"

namespace rs::dump {

[[noreturn]] inline void unrepresentable(const std::string& field, const std::string& why) {
  throw std::invalid_argument(fmt::format("dump_config: {}: {}", field, why));
}

// Plain when every YAML reader takes the scalar for this same string; else double-quoted.
// yaml-cpp alone would accept more, but tools/roceswitch-lab reads configs with PyYAML (YAML
// 1.1), where `yes` is a bool, `0x10` an int and 12:34:56 a base-60 number.
inline bool plain_safe(const std::string& s) {
  static const std::set<std::string> kWords{"y", "n", "yes", "no", "on", "off", "true", "false", "null", "~"};
  std::string lower;
  for (char c : s) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const bool chars = !s.empty() && s[0] != '-' && s[0] != '.' && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("_./-").find(c) != std::string_view::npos;
  });
  // A leading digit reads as a number unless the text is an address or a prefix.
  const bool number = std::isdigit(static_cast<unsigned char>(s[0])) && s.find('/') == s.npos && std::count(s.begin(), s.end(), '.') < 2;
  return chars && !number && !kWords.count(lower);
}

// Shortest text that reads back as the same double (fmt's round-trip form).
inline std::string real(double v) { return fmt::format("{}", v); }
inline std::string ip_text(bool v6, const void* addr) {
  char buf[INET6_ADDRSTRLEN];
  return inet_ntop(v6 ? AF_INET6 : AF_INET, addr, buf, sizeof buf);
}

// The emitter with the few shapes the dump uses. Numbers go in as integers or as real() text.
struct Out {
  YAML::Emitter e;
  Out& key(const char* k) { return e << YAML::Key << k << YAML::Value, *this; }
  Out& ikey(std::size_t i) { return e << YAML::Key << i << YAML::Value, *this; }  // a queue, PG, TC, DSCP...
  template <typename T>
  Out& kv(const char* k, const T& v) { return key(k), e << v, *this; }
  Out& text(const std::string& s) { return (plain_safe(s) ? e << s : e << YAML::DoubleQuoted << s), *this; }
  Out& ks(const char* k, const std::string& s) { return key(k).text(s); }  // a free-form string
  Out& kmac(const char* k, const rte_ether_addr& a) { return key(k), e << YAML::DoubleQuoted << format_mac(a), *this; }
  Out& begin_map(const char* k = nullptr, bool flow = false) {
    if (k) key(k);
    return (flow ? e << YAML::Flow : e) << YAML::BeginMap, *this;
  }
  Out& end_map() { return e << YAML::EndMap, *this; }
  Out& begin_seq(const char* k) { return key(k), e << YAML::BeginSeq, *this; }
  Out& end_seq() { return e << YAML::EndSeq, *this; }
  // A flow list `k: [f(x) for x in r]`.
  template <typename R, typename F>
  Out& list(const char* k, const R& r, F f) {
    key(k), e << YAML::Flow << YAML::BeginSeq;
    for (const auto& x : r) e << f(x);
    return end_seq();
  }
  template <std::size_t N>
  Out& index_map(const char* k, const std::array<uint8_t, N>& m) {
    begin_map(k, true);
    for (std::size_t i = 0; i < N; ++i) ikey(i).e << static_cast<unsigned>(m[i]);
    return end_map();
  }
};

// The loader turns x units into the nearest nanosecond (ConfigReader::to_ns), so the shortest
// text of ns / unit reads back to ns: that quotient is within half an ulp of the exact one, and
// multiplied back it stays well within half a nanosecond of ns over the loader's whole range
// (up to 1e15 ns < 2^53). Checked anyway, as the range is.
inline std::string time_text(uint64_t ns, double unit_ns, double min_units, double max_units, const std::string& field) {
  const double x = static_cast<double>(ns) / unit_ns;
  if (x < min_units || x > max_units)
    unrepresentable(field, fmt::format("{} ns is outside the loader's range [{}, {}] ({} ns each)", ns, min_units, max_units, unit_ns));
  if (ConfigReader::to_ns(x, unit_ns) != ns) unrepresentable(field, fmt::format("{} ns does not round-trip through {}", ns, real(x)));
  return real(x);
}
inline std::string seconds(uint64_t ns, const std::string& field) { return time_text(ns, 1e9, 0, 1e6, field); }

// Sections written by config_dump_ports.cc.
void write_ports(Out& o, const SwitchConfig& cfg);
// copp and neighbours: the switch as a host on its links (config_dump_ports.cc).
void write_host_settings(Out& o, const SwitchConfig& cfg);

}  // namespace rs::dump
