// The routing policy registry as the routing tests walk it: which policies the suites cover,
// an entry by name, a Choice parameter's names, a value as a config would write it.
#pragma once
#include <fmt/core.h>

#include <string>
#include <string_view>
#include <vector>

#include "dataplane/routing/routing_policy.h"

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

}  // namespace rs::test
