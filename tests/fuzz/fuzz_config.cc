// libFuzzer target: the YAML configuration loader, on any text. A config either loads or is
// refused with a ConfigError naming a key path (anything else escaping is a crash); one that
// loads is written back by config dump, and the dump must load again and dump to the same text.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "control/config/config_dump.h"
#include "control/config/config_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  rs::SwitchConfig cfg;
  try {
    cfg = rs::load_config_text(text, "fuzz.yaml");
  } catch (const rs::ConfigError& e) {
    // A refusal names the key and the reason; an unguarded one is the loader's last resort, a
    // check that is missing.
    if (e.path.empty() || e.reason.empty() || e.unguarded) {
      std::fprintf(stderr, "fuzz_config: refused without a key path: %s\n", e.what());
      std::abort();
    }
    return 0;
  }
  const std::string dump = rs::dump_config(cfg);  // a loaded config is always representable
  std::string again;
  try {
    again = rs::dump_config(rs::load_config_text(dump, "dump.yaml"));
  } catch (const rs::ConfigError& e) {
    std::abort();  // the switch refuses its own dump
  }
  if (again != dump) std::abort();
  return 0;
}
