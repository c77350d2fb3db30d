// What the config loader refuses in a group's routing policy, naming the key path: every
// parameter of every registered policy out of range or of the wrong type (and, at its good
// values, accepted and kept), unknown policies and parameters, and per-class policies for
// classes that do not exist.
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "control/config/config_loader.h"
#include "dataplane/switch/switch_config.h"
#include "tests/unit/routing/registry_view.h"

namespace rs::test {
namespace {

// --- What the config loader refuses, with its key path ---------------------------------------

std::string config(const std::string& policy_yaml, const std::string& extra = "") {
  return "ports:\n  - {name: a, host: {ip: 10.0.0.2, mac: \"02:00:00:00:00:aa\"}}\n  - {name: b, devargs: x}\n"
         "nexthop_groups:\n  - {name: g, policy: " + policy_yaml + extra +
         ", members: [{port: a, mac: \"02:00:00:00:00:01\"}, {port: b, mac: \"02:00:00:00:00:02\"}]}\n";
}

// The message of the ConfigError loading `yaml` throws (its path in *path), or "" if accepted.
std::string rejection(const std::string& yaml, std::string* path = nullptr) {
  try {
    load_config_text(yaml, "bad.yaml");
  } catch (const ConfigError& e) {
    if (path) *path = e.path;
    return e.what();
  }
  return "";
}

// A value just outside [min, max] on one side, exactly representable apart from it.
double outside(double end, double dir) {
  const double v = end + dir;
  return v != end ? v : std::nextafter(end, dir * std::numeric_limits<double>::infinity());
}

TEST(PolicyConfig, EveryParameterOutOfRangeOrOfTheWrongTypeIsRejectedWithItsPath) {
  int checked = 0;
  for (auto& e : RoutingPolicyRegistry::all()) {
    if (!in_suite(e.name)) continue;
    for (const ParamSpec& p : e.params) {
      SCOPED_TRACE(fmt::format("{}.{}", e.name, p.name));
      const std::string path = fmt::format("nexthop_groups[0].policy.{}", p.name);
      auto with = [&](const std::string& v) { return config(fmt::format("{{name: {}, {}: {}}}", e.name, p.name, v)); };
      std::vector<std::pair<std::string, double>> good;  // text, the value it means
      std::vector<std::string> bad;
      if (p.type == ParamType::Int || p.type == ParamType::Real) {
        for (double x : {p.min, p.max, p.def})
          if (std::isfinite(x)) good.push_back({number(x), x});
        if (std::isfinite(p.min)) bad.push_back(number(outside(p.min, -1)));
        if (std::isfinite(p.max)) bad.push_back(number(outside(p.max, +1)));
        bad.push_back("\"many\"");
        if (p.type == ParamType::Int && p.max - p.min >= 1) bad.push_back(number(p.min + 0.5));
        // A config built without the loader is held to the same ranges.
        for (double x : {outside(p.min, -1), outside(p.max, +1)})
          if (std::isfinite(x)) {
            EXPECT_THROW(resolve_policy(PolicySpec{std::string(e.name), {{std::string(p.name), x}}}, "g"), std::runtime_error);
          }
      } else if (p.type == ParamType::Bool) {
        good = {{"true", 1}, {"false", 0}};
        bad = {"7", "maybe"};
      } else {
        const auto c = choices_of(p);
        for (std::size_t i = 0; i < c.size(); ++i) good.push_back({c[i], static_cast<double>(i)});
        for (const char* x : {"7", "-1", "no_such_choice"})
          if (choice_index(p, x) < 0) bad.push_back(x);
      }
      for (auto& [text, value] : good) {
        try {  // accepted, and kept for the group
          const SwitchConfig c = load_config_text(with(text), "good.yaml");
          const auto want = std::vector<std::pair<std::string, double>>{{std::string(p.name), value}};
          EXPECT_EQ(c.groups.at(0).policy.params, want) << "value " << text;
        } catch (const ConfigError& x) {
          ADD_FAILURE() << "value " << text << ": " << x.what();
        }
      }
      for (auto& v : bad) {
        std::string got;
        const std::string msg = rejection(with(v), &got);
        EXPECT_EQ(got, path) << "value " << v << ": " << msg;
        EXPECT_NE(msg.find(path), std::string::npos) << msg;
        // The same value for one class only.
        const std::string by_tc = config("ecmp", fmt::format(", policy_by_tc: {{3: {{name: {}, {}: {}}}}}", e.name, p.name, v));
        got.clear();
        rejection(by_tc, &got);
        EXPECT_EQ(got, fmt::format("nexthop_groups[0].policy_by_tc.3.{}", p.name)) << "value " << v;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 0) << "no Int, Real, Bool or Choice parameter registered";
}

TEST(PolicyConfig, UnknownPoliciesParametersAndClassesAreRejectedWithTheirPath) {
  struct Bad {
    std::string yaml, path, reason;
  };
  std::vector<Bad> bad = {
      {config("no_such_policy"), "nexthop_groups[0].policy", "unknown routing policy 'no_such_policy'"},
      {config("{name: no_such_policy}"), "nexthop_groups[0].policy.name", "unknown routing policy"},
      {config("{dest_qp: true}"), "nexthop_groups[0].policy.name", "missing"},
      {config("ecmp", ", policy_by_tc: {9: spray}"), "nexthop_groups[0].policy_by_tc.9", "not a traffic class"},
      {config("ecmp", ", policy_by_tc: {-1: ecmp}"), "nexthop_groups[0].policy_by_tc.-1", "not a traffic class"},
      {config("ecmp", ", policy_by_tc: {voice: ecmp}"), "nexthop_groups[0].policy_by_tc.voice", "not a traffic class"},
      {config("ecmp", ", policy_by_tc: {3: no_such_policy}"), "nexthop_groups[0].policy_by_tc.3", "unknown routing policy"},
  };
  for (auto& e : RoutingPolicyRegistry::all())
    if (in_suite(e.name))
      bad.push_back({config(fmt::format("{{name: {}, no_such_param: 1}}", e.name)), "nexthop_groups[0].policy.no_such_param",
                     fmt::format("policy '{}' has no parameter 'no_such_param'", e.name)});
  for (auto& b : bad) {
    std::string path;
    const std::string msg = rejection(b.yaml, &path);
    EXPECT_EQ(path, b.path) << b.yaml << msg;
    EXPECT_NE(msg.find(b.reason), std::string::npos) << msg;
  }
  // Every registered policy (and a per-class one) loads by name.
  for (auto& e : RoutingPolicyRegistry::all()) EXPECT_EQ(rejection(config(std::string(e.name), ", policy_by_tc: {3: ecmp}")), "") << e.name;
}

TEST(PolicyConfig, EcmpHashIsStillEcmp) {
  // The policy's name before there were several: configs written then still load, as ecmp.
  const SwitchConfig cfg = load_config_text(config("ecmp_hash"), "old.yaml");
  ASSERT_EQ(cfg.groups.size(), 1u);
  EXPECT_EQ(resolve_policy(cfg.groups[0].policy, "old").policy, RoutingPolicyRegistry::find("ecmp"));
}

}  // namespace
}  // namespace rs::test
