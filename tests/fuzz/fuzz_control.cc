// libFuzzer target: one control-protocol request (a JSON line: an operation or a transaction)
// against a running switch; control_fuzz.h says what must hold after it.
#include <cstdint>
#include <string>

#include "tests/fuzz/control_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  rs::fuzz::control_fuzz().handle(std::string(reinterpret_cast<const char*>(data), size));
  return 0;
}
