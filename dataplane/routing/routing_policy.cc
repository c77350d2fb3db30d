#include "dataplane/routing/routing_policy.h"

namespace rs {

std::vector<RoutingPolicyEntry>& RoutingPolicyRegistry::all() {
  static std::vector<RoutingPolicyEntry> v;
  return v;
}

int RoutingPolicyRegistry::find(std::string_view name) {
  auto& v = all();
  for (std::size_t i = 0; i < v.size(); ++i)
    if (v[i].name == name) return static_cast<int>(i);
  return -1;
}

bool RoutingPolicyRegistry::add(RoutingPolicyEntry e) {
  all().push_back(e);
  return true;
}

}  // namespace rs
