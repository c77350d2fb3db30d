// The Prometheus text format parsed as Prometheus would, and checked on the way: HELP before
// TYPE, valid metric and label names, escapes, no family split, no duplicate series. Shared by
// prometheus_test (the text) and metrics_http_test (the body /metrics serves).
#pragma once
#include <cstddef>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace rs::test {

struct Sample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};
struct Exposition {
  std::map<std::string, std::string> type, help;
  std::vector<Sample> samples;
  std::vector<std::string> errors;
  std::optional<double> get(const std::string& name, const std::map<std::string, std::string>& labels) const {
    for (const Sample& s : samples)
      if (s.name == name && s.labels == labels) return s.value;
    return std::nullopt;
  }
  std::map<std::string, double> counters() const {
    std::map<std::string, double> out;
    for (const Sample& s : samples)
      if (type.count(s.name) && type.at(s.name) == "counter") {
        std::string key = s.name;
        for (auto& [k, v] : s.labels) key += "|" + k + "=" + v;
        out[key] = s.value;
      }
    return out;
  }
};

inline Exposition parse(const std::string& text) {
  Exposition e;
  static const std::regex name_re("^[a-zA-Z_:][a-zA-Z0-9_:]*$");
  static const std::regex label_re("^[a-zA-Z_][a-zA-Z0-9_]*$");
  std::string current;  // the family the last TYPE line declared
  std::set<std::string> closed, series;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) {
      e.errors.push_back("last line has no newline");
      end = text.size();
    }
    const std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    if (line.rfind("# HELP ", 0) == 0) {
      const std::string rest = line.substr(7);
      const std::string n = rest.substr(0, rest.find(' '));
      if (e.help.count(n)) e.errors.push_back("HELP twice: " + n);
      e.help[n] = rest.substr(rest.find(' ') + 1);
      if (!current.empty()) closed.insert(current);
      continue;
    }
    if (line.rfind("# TYPE ", 0) == 0) {
      std::istringstream is(line.substr(7));
      std::string n, t;
      is >> n >> t;
      if (e.type.count(n)) e.errors.push_back("TYPE twice: " + n);
      if (!e.help.count(n)) e.errors.push_back("TYPE before HELP: " + n);
      if (t != "counter" && t != "gauge") e.errors.push_back("type " + t);
      if (!std::regex_match(n, name_re)) e.errors.push_back("bad name " + n);
      e.type[n] = t;
      current = n;
      continue;
    }
    if (line.empty() || line[0] == '#') {
      e.errors.push_back("unexpected line: " + line);
      continue;
    }
    Sample s;
    std::size_t i = 0;
    while (i < line.size() && line[i] != '{' && line[i] != ' ') ++i;
    s.name = line.substr(0, i);
    if (s.name != current) e.errors.push_back("sample outside its family (or family split): " + line);
    if (closed.count(s.name)) e.errors.push_back("family split: " + s.name);
    if (i < line.size() && line[i] == '{') {
      ++i;
      while (i < line.size() && line[i] != '}') {
        const std::size_t eq = line.find('=', i);
        const std::string k = line.substr(i, eq - i);
        if (!std::regex_match(k, label_re)) e.errors.push_back("bad label name " + k);
        i = eq + 1;
        if (line[i] != '"') e.errors.push_back("label value not quoted: " + line);
        ++i;
        std::string v;
        for (; i < line.size() && line[i] != '"'; ++i) {
          if (line[i] == '\\') {
            ++i;
            if (line[i] == 'n') v += '\n';
            else if (line[i] == '\\' || line[i] == '"') v += line[i];
            else e.errors.push_back("bad escape in " + line);
          } else {
            v += line[i];
          }
        }
        ++i;  // closing quote
        s.labels[k] = v;
        if (line[i] == ',') ++i;
      }
      ++i;  // }
    }
    if (i >= line.size() || line[i] != ' ') {
      e.errors.push_back("no value: " + line);
      continue;
    }
    s.value = std::stod(line.substr(i + 1));
    std::string key = s.name;
    for (auto& [k, v] : s.labels) key += "|" + k + "=" + v;
    if (!series.insert(key).second) e.errors.push_back("duplicate series: " + line);
    e.samples.push_back(s);
  }
  return e;
}

}  // namespace rs::test
