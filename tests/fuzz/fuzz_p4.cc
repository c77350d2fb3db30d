// libFuzzer target: the P4_16 subset parser behind the conformance test, on any text. It
// parses or throws ParseError; whatever it parses compares with the registry without a crash.
#include <cstdint>
#include <string_view>

#include "control/p4/p4_schema.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const rs::p4::Program p = rs::p4::parse_p4(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.p4");
    (void)rs::p4::compare(p, rs::p4::registry());
  } catch (const rs::p4::ParseError&) {
  }
  return 0;
}
