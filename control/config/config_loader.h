// Reads the YAML files people write into a validated SwitchConfig. Every error names the
// file, the line, the key path and the reason; nothing is applied until the whole file is
// valid (the Switch is only built from a complete SwitchConfig).
#pragma once
#include <yaml-cpp/yaml.h>

#include <stdexcept>
#include <string>

#include "dataplane/switch/switch_config.h"

namespace rs {

class ConfigError : public std::runtime_error {
 public:
  ConfigError(const std::string& file, int line, const std::string& path, const std::string& reason);
  std::string file, path, reason;
  int line;
  // A read no check guarded (yaml-cpp's own exception, path "(structure)"): fuzz_config fails on
  // it so that the missing check gets written. A flag, as a key may be named anything.
  bool unguarded = false;
};

SwitchConfig load_config_text(const std::string& yaml_text, const std::string& source);
// The same from a parsed document (its nodes keep their lines in `source`). `fabric`: a switch
// of a fabric, whose ports may also be `kind: link` (cables the fabric joins; docs/fabric.md).
SwitchConfig load_config_node(const YAML::Node& root, const std::string& source, bool fabric);
SwitchConfig load_config_file(const std::string& path);

}  // namespace rs
