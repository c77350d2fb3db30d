// The routing policy registry as the routing tests walk it: which policies the suites cover,
// an entry by name, a Choice parameter's names, a value as a config would write it, every
// policy at every parameter setting worth a run (the contract's cases), and a group's live
// members as nexthop_select computes them.
#pragma once
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "dataplane/routing/routing_policy.h"
#include "dataplane/switch/switch_config.h"

namespace rs::test {

// Every registered policy but those a test binary registers for itself ("test_*").
inline bool in_suite(std::string_view name) { return !name.starts_with("test_"); }
inline const RoutingPolicyEntry& entry(const std::string& name) {
  return RoutingPolicyRegistry::at(static_cast<std::size_t>(RoutingPolicyRegistry::find(name)));
}
inline std::string number(double v) { return fmt::format("{}", v); }
inline std::vector<std::string> choices_of(const ParamSpec& p) {
  std::vector<std::string> v;
  for (std::string_view rest = p.choices; !rest.empty();) {
    const std::size_t bar = rest.find('|');
    v.emplace_back(rest.substr(0, bar));
    rest = bar == rest.npos ? std::string_view{} : rest.substr(bar + 1);
  }
  return v;
}

// One policy at one set of parameters.
struct Case {
  std::string policy, label;
  PolicySpec spec;
};
inline void PrintTo(const Case& c, std::ostream* os) { *os << c.policy << " " << c.label; }


// Each registered policy at its defaults, and at every other value of each Bool and Choice
// parameter and the ends of each Int and Real range (one parameter moved at a time).
inline std::vector<Case> policy_cases() {
  std::vector<Case> v;
  for (auto& e : RoutingPolicyRegistry::all()) {
    if (!in_suite(e.name)) continue;
    const std::string name(e.name);
    v.push_back({name, "defaults", {name, {}}});
    for (const ParamSpec& p : e.params) {
      std::vector<std::pair<std::string, double>> alt;
      if (p.type == ParamType::Bool) alt.push_back({p.def != 0 ? "false" : "true", p.def != 0 ? 0 : 1});
      if (p.type == ParamType::Choice) {
        const auto c = choices_of(p);
        for (std::size_t i = 0; i < c.size(); ++i)
          if (static_cast<double>(i) != p.def) alt.push_back({c[i], static_cast<double>(i)});
      }
      if (p.type == ParamType::Int || p.type == ParamType::Real)
        for (double x : {p.min, p.max})
          if (std::isfinite(x) && x != p.def) alt.push_back({number(x), x});
      for (auto& [text, x] : alt) v.push_back({name, fmt::format("{}_{}", p.name, text), {name, {{std::string(p.name), x}}}});
    }
  }
  return v;
}
// A case's test name: the policy and its label, alphanumerics only.
inline std::string case_name(const ::testing::TestParamInfo<Case>& p) {
  std::string s = p.param.policy + "_" + p.param.label;
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

// Members whose port is up, as nexthop_select computes them.
inline uint64_t live_members(const PolicyGroup& g, uint64_t port_up) {
  uint64_t up = 0;
  for (uint16_t m = 0; m < g.size(); ++m) up |= ((port_up >> (g.port[m] & 63)) & 1) << m;
  return up;
}

}  // namespace rs::test
