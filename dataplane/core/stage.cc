#include "dataplane/core/stage.h"

#include <fmt/core.h>

#include <map>
#include <string>

namespace rs {

std::string Stage::format_trace(const TraceRecord& r) const { return fmt::format("{:#x} {:#x}", r.a, r.b); }

namespace {
std::map<std::string, StageFactory, std::less<>>& registry() {
  static std::map<std::string, StageFactory, std::less<>> r;
  return r;
}
}  // namespace

bool StageRegistry::add(std::string_view name, StageFactory f) {
  registry().emplace(std::string(name), f);
  return true;
}

StageFactory StageRegistry::find(std::string_view name) {
  auto it = registry().find(name);
  return it == registry().end() ? nullptr : it->second;
}

std::vector<std::string_view> StageRegistry::names() {
  std::vector<std::string_view> v;
  for (auto& [k, f] : registry()) v.push_back(k);
  return v;
}

}  // namespace rs
