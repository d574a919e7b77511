// Small helpers shared by omnigemm-bench and omnigemm-conformance: text formatting, JSON/CSV/
// HTML escaping, time stamps, the command line and fast seeded random fills.
#pragma once

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <string>
#include <vector>

#include "gemm_check.hpp"

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

inline uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Fills every stored element of `m` with a value of magnitude in [0.05, 1] and random sign
// (never 0), from `seed` alone. fp8 codes are drawn directly from the codes in that range
// (fast for the large LLM shapes, and exactly representable by construction).
inline void fill_random(omnigemm::test::HostMatrix& m, uint64_t seed) {
  using omnigemm::Dtype;
  using namespace omnigemm::test;
  uint64_t state = seed;
  const int es = dtype_size(m.dtype);
  const size_t count = m.bytes.size() / size_t(es);
  if (m.dtype == Dtype::fp8_e4m3 || m.dtype == Dtype::fp8_e5m2) {
    std::vector<uint8_t> codes;
    for (int c = 0; c < 128; ++c) {
      const uint8_t code = uint8_t(c);
      const double v = decode(m.dtype, &code);
      if (std::isfinite(v) && v >= 0.05 && v <= 1.0) codes.push_back(code);
    }
    for (size_t i = 0; i < count; ++i) {
      const uint64_t r = splitmix64(state);
      m.bytes[i] = uint8_t(codes[(r >> 1) % codes.size()] | ((r & 1) ? 0x80 : 0));
    }
    return;
  }
  for (size_t i = 0; i < count; ++i) {
    const uint64_t r = splitmix64(state);
    const float mag = 0.05f + 0.95f * float(double(r >> 11) * 0x1.0p-53);
    encode(m.dtype, &m.bytes[i * size_t(es)], (r & 1) ? -mag : mag);
  }
}

}  // namespace omnigemm::bench
