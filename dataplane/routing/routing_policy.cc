#include "dataplane/routing/routing_policy.h"

#include <fmt/core.h>

#include <cmath>
#include <cstdlib>

namespace rs {

std::vector<RoutingPolicyEntry>& RoutingPolicyRegistry::all() {
  static std::vector<RoutingPolicyEntry> v;
  return v;
}

int RoutingPolicyRegistry::find(std::string_view name) {
  if (name == "ecmp_hash") name = "ecmp";  // its name until the policies became many: old configs keep working
  auto& v = all();
  for (std::size_t i = 0; i < v.size(); ++i)
    if (v[i].name == name) return static_cast<int>(i);
  return -1;
}

bool RoutingPolicyRegistry::add(RoutingPolicyEntry e) {
  all().push_back(e);
  return true;
}

std::string RoutingPolicyRegistry::names() {
  std::string s;
  for (auto& e : all()) s += (s.empty() ? "" : ", ") + std::string(e.name);
  return s;
}

ParsedParam parse_param(const ParamSpec& p, const std::string& text) {
  ParsedParam r;
  switch (p.type) {
    case ParamType::Bool:
      if (text == "true" || text == "yes" || text == "on") r.value = 1;
      else if (text == "false" || text == "no" || text == "off") r.value = 0;
      else r.error = fmt::format("expected true or false, got '{}'", text);
      return r;
    case ParamType::Choice: {
      const int i = choice_index(p, text);
      if (i < 0) r.error = fmt::format("expected one of {}, got '{}'", p.choices, text);
      r.value = i;
      return r;
    }
    case ParamType::Int:
    case ParamType::Real: {
      char* end = nullptr;
      const double v = std::strtod(text.c_str(), &end);
      if (text.empty() || *end != '\0' || !std::isfinite(v)) {
        r.error = fmt::format("expected a number, got '{}'", text);
      } else if (p.type == ParamType::Int && v != std::floor(v)) {
        r.error = fmt::format("expected an integer, got '{}'", text);
      } else if (v < p.min || v > p.max) {
        r.error = fmt::format("{} is out of range [{}, {}]", text, p.min, p.max);
      }
      r.value = v;
      return r;
    }
  }
  return r;
}

std::string describe_param(const ParamSpec& p) {
  switch (p.type) {
    case ParamType::Bool:
      return fmt::format("{} (bool, default {}): {}", p.name, p.def != 0 ? "true" : "false", p.help);
    case ParamType::Choice:
      return fmt::format("{} ({}, default {}): {}", p.name, p.choices, choice_name(p, static_cast<std::size_t>(p.def)), p.help);
    case ParamType::Int:
    case ParamType::Real:
      return fmt::format("{} ({}, default {}, range [{}, {}]): {}", p.name, p.type == ParamType::Int ? "int" : "real", p.def,
                         p.min, p.max, p.help);
  }
  return std::string(p.name);
}

}  // namespace rs
