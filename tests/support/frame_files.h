// What the tests of frame codecs and of the control plane's frames share to have an independent
// tool judge them: a classic pcap of frames (tshark and scapy read it), the lines a command
// prints, and hex text back to bytes.
#pragma once
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace rs::test {

inline void write_pcap(const std::string& path, const std::vector<std::vector<uint8_t>>& frames) {
  std::ofstream o(path, std::ios::binary);
  const uint32_t hdr[6] = {0xa1b2c3d4, 0x00040002, 0, 0, 65535, 1};  // v2.4, Ethernet
  o.write(reinterpret_cast<const char*>(hdr), sizeof hdr);
  for (const auto& f : frames) {
    const uint32_t rec[4] = {0, 0, static_cast<uint32_t>(f.size()), static_cast<uint32_t>(f.size())};
    o.write(reinterpret_cast<const char*>(rec), sizeof rec);
    o.write(reinterpret_cast<const char*>(f.data()), static_cast<std::streamsize>(f.size()));
  }
}

// The lines `cmd` prints (and its standard error's, unless told not to), without newlines.
inline std::vector<std::string> command_lines(const std::string& cmd, bool with_stderr = true) {
  std::vector<std::string> lines;
  if (std::FILE* p = popen((cmd + (with_stderr ? " 2>&1" : " 2>/dev/null")).c_str(), "r")) {
    std::string line;
    char buf[8192];
    while (std::fgets(buf, sizeof buf, p)) {
      line += buf;
      if (line.back() != '\n') continue;
      line.pop_back();
      lines.push_back(std::move(line));
      line.clear();
    }
    if (!line.empty()) lines.push_back(line);
    pclose(p);
  }
  return lines;
}

inline std::vector<std::string> run_python(const std::string& script_path) {
  return command_lines("/usr/bin/python3 " + script_path);
}

inline std::vector<uint8_t> unhex(const std::string& s) {
  std::vector<uint8_t> out;
  for (std::size_t i = 0; i + 1 < s.size(); i += 2) out.push_back(static_cast<uint8_t>(std::stoi(s.substr(i, 2), nullptr, 16)));
  return out;
}

}  // namespace rs::test
