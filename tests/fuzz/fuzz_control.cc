// libFuzzer target: one control-protocol request (a JSON line: an operation or a transaction)
// against a running switch; control_fuzz.h says what must hold after it.
#include <cstdint>
#include <string>

#include "tests/fuzz/control_fuzz.h"

namespace {
rs::fuzz::ControlFuzz* g_fuzz = nullptr;
}

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  g_fuzz = new rs::fuzz::ControlFuzz;
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  g_fuzz->handle(std::string(reinterpret_cast<const char*>(data), size));
  return 0;
}
