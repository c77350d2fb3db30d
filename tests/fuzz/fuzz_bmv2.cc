// libFuzzer target: a BMv2 simple_switch_CLI command file (one command a line) run as one
// p4.cli transaction against a running switch; control_fuzz.h says what must hold after it.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <sstream>
#include <string>

#include "tests/fuzz/control_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  nlohmann::json lines = nlohmann::json::array();
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  // Bytes that are not UTF-8 cannot be a JSON string: such a file is refused by the client.
  std::string req;
  try {
    req = nlohmann::json{{"id", 1}, {"op", "p4.cli"}, {"lines", lines}}.dump();
  } catch (const nlohmann::json::type_error&) {
    return 0;
  }
  rs::fuzz::control_fuzz().handle(req);
  return 0;
}
