#include "dataplane/core/log.h"

#include <atomic>

namespace rs {
namespace {
std::atomic<LogLevel> g_level{LogLevel::Info};
}

LogLevel log_level() { return g_level.load(std::memory_order_relaxed); }
void set_log_level(LogLevel l) { g_level.store(l, std::memory_order_relaxed); }

bool parse_log_level(std::string_view s, LogLevel& out) {
  if (s == "error") out = LogLevel::Error;
  else if (s == "warn" || s == "warning") out = LogLevel::Warn;
  else if (s == "info") out = LogLevel::Info;
  else if (s == "debug") out = LogLevel::Debug;
  else return false;
  return true;
}

}  // namespace rs
