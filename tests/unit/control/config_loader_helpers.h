// Shared by the config loader tests (config_loader_valid_test.cc, config_loader_rejected_test.cc):
// small YAML builders for port lists.
#pragma once

#include <string>

namespace rs {

// n ports at `gbps` behind `cable_m` of cable, lossless on 3 and 4 with the built-in profile.
inline std::string many_ports(int n, int gbps, int cable_m, const std::string& pool = "") {
  std::string y = "qos: {pfc_enable: [3, 4]}\nbuffer: {cable_length_m: " + std::to_string(cable_m) + pool + "}\nports:\n";
  for (int i = 0; i < n; ++i)
    y += "  - {name: p" + std::to_string(i) + ", devargs: x, speed_gbps: " + std::to_string(gbps) + "}\n";
  return y;
}

// An emulated host port 'a', then one more port with the given fields, then `rest`.
inline std::string with_port(const std::string& port_fields, const std::string& rest = "") {
  return "ports:\n  - {name: a, host: {ip: 10.0.0.2, mac: \"02:00:00:00:00:aa\"}}\n  - {" + port_fields + "}\n" + rest;
}

inline const std::string kTwoPorts = with_port("name: b, devargs: x");

}  // namespace rs
