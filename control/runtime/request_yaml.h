// Requests are read by the YAML configuration's readers (control/config): the JSON of a request
// is turned into the YAML tree the file would have had, so its fields are checked as a file's.
#pragma once
#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

namespace rs {

YAML::Node to_yaml(const nlohmann::json& j);

}  // namespace rs
