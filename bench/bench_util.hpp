// Small helpers shared by omnigemm-bench and omnigemm-conformance: text formatting, JSON/CSV/
// HTML escaping, time stamps and the command line.
#pragma once

#include <cmath>
#include <cstdio>
#include <ctime>
#include <string>
#include <vector>

namespace omnigemm::bench {

inline std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

inline std::string json_escape(const std::string& s) {
  std::string r;
  for (char c : s) {
    switch (c) {
      case '"': r += "\\\""; break;
      case '\\': r += "\\\\"; break;
      case '\n': r += "\\n"; break;
      case '\t': r += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) r += fmt("\\u%04x", c);
        else r += c;
    }
  }
  return r;
}
inline std::string jstr(const std::string& s) { return "\"" + json_escape(s) + "\""; }
// JSON number; non-finite values become null (JSON has no NaN).
inline std::string jnum(double v) { return std::isfinite(v) ? fmt("%.6g", v) : "null"; }

inline std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string r = "\"";
  for (char c : s) r += c == '"' ? std::string("\"\"") : std::string(1, c);
  return r + "\"";
}

inline std::string html_escape(const std::string& s) {
  std::string r;
  for (char c : s) {
    switch (c) {
      case '<': r += "&lt;"; break;
      case '>': r += "&gt;"; break;
      case '&': r += "&amp;"; break;
      case '"': r += "&quot;"; break;
      default: r += c;
    }
  }
  return r;
}

inline std::string utc_now() {
  std::time_t t = std::time(nullptr);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", std::gmtime(&t));
  return buf;
}
inline std::string utc_date() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&t));
  return buf;
}

inline std::string command_line(int argc, char** argv) {
  std::string r;
  for (int i = 0; i < argc; ++i) r += (i ? " " : "") + std::string(argv[i]);
  return r;
}

inline std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> r;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(sep, start);
    if (end == std::string::npos) end = s.size();
    if (end > start) r.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return r;
}

}  // namespace omnigemm::bench
