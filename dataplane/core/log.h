// Logging through fmt, one level for the whole process; never called per packet.
#pragma once
#include <fmt/core.h>

#include <cstdio>
#include <string_view>

namespace rs {

enum class LogLevel { Error = 0, Warn = 1, Info = 2, Debug = 3 };

LogLevel log_level();
void set_log_level(LogLevel l);
bool parse_log_level(std::string_view s, LogLevel& out);

template <typename... Args>
void log(LogLevel l, fmt::format_string<Args...> f, Args&&... args) {
  if (l > log_level()) return;
  static constexpr const char* kTag[] = {"error", "warn", "info", "debug"};
  fmt::print(stderr, "roceswitch: {}: {}\n", kTag[static_cast<int>(l)], fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace rs
