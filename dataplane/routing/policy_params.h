// A routing policy's parameters, declared by the policy (as BESS modules and Click elements
// declare their arguments): the config loader checks a group's values against them, and
// `roceswitch --help-policies` and docs/routing-policies.md list them.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace rs {

enum class ParamType : uint8_t { Int, Real, Bool, Choice };

struct ParamSpec {
  std::string_view name;
  ParamType type;
  double def;
  double min = 0, max = 0;       // Int, Real: the accepted range, inclusive
  std::string_view help = "";
  std::string_view choices = "";  // Choice: the names, '|'-separated; the value is the index
};

inline constexpr std::size_t kMaxPolicyParams = 8;

// The values of one policy choice, in its declaration order.
struct ParamValues {
  std::array<double, kMaxPolicyParams> v{};
  double operator[](std::size_t i) const { return v[i]; }
};

// The defaults of a declaration.
inline ParamValues default_params(std::span<const ParamSpec> spec) {
  ParamValues p;
  for (std::size_t i = 0; i < spec.size() && i < kMaxPolicyParams; ++i) p.v[i] = spec[i].def;
  return p;
}

// Index of `name` in `spec`, or -1.
inline int param_index(std::span<const ParamSpec> spec, std::string_view name) {
  for (std::size_t i = 0; i < spec.size(); ++i)
    if (spec[i].name == name) return static_cast<int>(i);
  return -1;
}

// Index of `name` among a Choice parameter's choices, or -1.
inline int choice_index(const ParamSpec& p, std::string_view name) {
  std::string_view rest = p.choices;
  for (int i = 0; !rest.empty(); ++i) {
    const std::size_t bar = rest.find('|');
    if (rest.substr(0, bar) == name) return i;
    if (bar == std::string_view::npos) break;
    rest.remove_prefix(bar + 1);
  }
  return -1;
}

// The name of a Choice parameter's value i ("" past the last).
inline std::string_view choice_name(const ParamSpec& p, std::size_t i) {
  std::string_view rest = p.choices;
  for (; i && !rest.empty(); --i) rest = rest.find('|') == std::string_view::npos ? std::string_view{} : rest.substr(rest.find('|') + 1);
  return rest.substr(0, rest.find('|'));
}

// A value given as text, checked against its declaration: the value, or the reason it is
// refused (for the config loader's error message).
struct ParsedParam {
  double value = 0;
  std::string error;  // empty: ok
};
ParsedParam parse_param(const ParamSpec& p, const std::string& text);

// "name (type, default D, range [a, b]): help" for --help and the docs.
std::string describe_param(const ParamSpec& p);

}  // namespace rs
