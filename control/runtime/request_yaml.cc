#include "control/runtime/request_yaml.h"

#include <fmt/core.h>

#include <cstdint>
#include <string>

namespace rs {

using json = nlohmann::json;

YAML::Node to_yaml(const json& j) {
  switch (j.type()) {
    case json::value_t::boolean: return YAML::Node(j.get<bool>());
    case json::value_t::number_integer: return YAML::Node(j.get<int64_t>());
    case json::value_t::number_unsigned: return YAML::Node(j.get<uint64_t>());
    case json::value_t::number_float: return YAML::Node(fmt::format("{}", j.get<double>()));
    case json::value_t::string: return YAML::Node(j.get<std::string>());
    case json::value_t::array: {
      YAML::Node n(YAML::NodeType::Sequence);
      for (auto& e : j) n.push_back(to_yaml(e));
      return n;
    }
    case json::value_t::object: {
      YAML::Node n(YAML::NodeType::Map);
      for (auto& [k, v] : j.items()) n[k] = to_yaml(v);
      return n;
    }
    default: return YAML::Node(YAML::NodeType::Null);
  }
}

}  // namespace rs
