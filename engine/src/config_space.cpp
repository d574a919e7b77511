#include "config_space.hpp"

#include <charconv>
#include <cstdio>

namespace omnigemm::detail {

namespace {

// Reads a non-negative decimal at text[pos...]; advances pos.
bool read_int(std::string_view text, size_t& pos, int& out) {
  const char* first = text.data() + pos;
  const char* last = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(first, last, out);
  if (ec != std::errc() || ptr == first) return false;
  pos += size_t(ptr - first);
  return true;
}

bool is_lower(char c) { return c >= 'a' && c <= 'z'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Family and form names: a lower-case letter, then lower-case letters, digits and '_'.
bool valid_name(std::string_view s) {
  if (s.empty() || !is_lower(s[0])) return false;
  for (char c : s)
    if (!is_lower(c) && !is_digit(c) && c != '_') return false;
  return true;
}

// The parser behind parse() and parse_error(): fills `c` or says why not.
bool parse_config(std::string_view text, Config& c, std::string& why) {
  c = Config{};
  size_t pos = 0;
  if (const size_t colon = text.find(':'); colon != std::string_view::npos) {
    const std::string_view family = text.substr(0, colon);
    if (!valid_name(family) || family.size() >= size_t(ShortName::kCapacity - 1)) {
      why = "the family name before ':' must be a short lower-case name such as sm90_wgmma";
      return false;
    }
    c.family = ShortName(family);
    pos = colon + 1;
  }
  auto expect = [&](char ch) {
    if (pos < text.size() && text[pos] == ch) { ++pos; return true; }
    return false;
  };
  if (!read_int(text, pos, c.block_m) || !expect('x') || !read_int(text, pos, c.block_n) || !expect('x') ||
      !read_int(text, pos, c.block_k)) {
    why = "expected BLOCK_MxBLOCK_NxBLOCK_K, e.g. 128x128x32";
    return false;
  }
  // Optional fields, each at most once, in any order: "-<letter><int>" or "-<form name>".
  unsigned seen = 0;
  while (pos < text.size()) {
    if (!expect('-') || pos >= text.size()) {
      why = "fields after the tile are '-' followed by g, s, w, e or k and a number, or by a form name";
      return false;
    }
    size_t end = text.find('-', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view token = text.substr(pos, end - pos);
    bool numeric = token.size() >= 2 && is_lower(token[0]);
    for (size_t i = 1; numeric && i < token.size(); ++i) numeric = is_digit(token[i]);
    if (!numeric) {
      // A form name has two or more characters: a lone letter is a numeric field's key.
      if ((seen & 64u) || token.size() < 2 || !valid_name(token) || token.size() >= size_t(ShortName::kCapacity - 1)) {
        why = (seen & 64u) ? "a config names at most one form" : "'" + std::string(token) + "' is not a field or a form name";
        return false;
      }
      seen |= 64u;
      c.form = ShortName(token);
      pos = end;
      continue;
    }
    const char key = token[0];
    ++pos;
    int value = 0;
    const char* keys = "gswek";
    const char* where = std::char_traits<char>::find(keys, 5, key);
    if (!where || !read_int(text, pos, value) || pos != end) {
      why = "unknown field '-" + std::string(token) + "' (g, s, w, e, k; the old -x<n> variants are family names now)";
      return false;
    }
    const unsigned bit = 1u << unsigned(where - keys);
    if (seen & bit) {
      why = std::string("field -") + key + " given twice";
      return false;
    }
    seen |= bit;
    switch (key) {
      case 'g': c.group_m = value; break;
      case 's': c.stages = value; break;
      case 'w': c.warps = value; break;
      case 'e': c.waves_per_eu = value; break;
      case 'k': c.split_k = value; break;
    }
  }
  return config_well_formed(c, &why);
}

}  // namespace

std::string Config::to_string() const {
  char buf[128];
  int n = std::snprintf(buf, sizeof buf, "%dx%dx%d-g%d-s%d-w%d", block_m, block_n, block_k, group_m, stages, warps);
  std::string s;
  if (!family.empty()) (s += family.view()) += ':';
  s.append(buf, size_t(n));
  if (waves_per_eu != 0) s += "-e" + std::to_string(waves_per_eu);
  if (split_k != 1) s += "-k" + std::to_string(split_k);
  if (!form.empty()) (s += '-') += form.view();
  return s;
}

std::optional<Config> Config::parse(std::string_view text) {
  Config c;
  std::string why;
  if (!parse_config(text, c, why)) return std::nullopt;
  return c;
}

std::string Config::parse_error(std::string_view text) {
  Config c;
  std::string why;
  return parse_config(text, c, why) ? std::string() : why;
}

bool config_well_formed(const Config& c, std::string* why) {
  auto fail = [&](const char* msg) {
    if (why) *why = c.to_string() + ": " + msg;
    return false;
  };
  if (c.family.too_long() || c.form.too_long()) return fail("family and form names have at most 22 characters");
  if (!c.family.empty() && !valid_name(c.family.view())) return fail("the family name must be lower-case letters, digits and '_'");
  if (!c.form.empty() && (c.form.view().size() < 2 || !valid_name(c.form.view())))
    return fail("the form name must be two or more lower-case letters, digits and '_'");
  if (c.block_m <= 0 || c.block_n <= 0 || c.block_k <= 0 || c.block_m > 4096 || c.block_n > 8192 ||
      c.block_k > 4096)
    return fail("block sizes must be in 1..4096 (BLOCK_N up to 8192)");
  if (c.group_m < 1 || c.group_m > 64) return fail("GROUP_M must be in 1..64");
  if (c.stages < 0 || c.stages > 16) return fail("stages must be in 0..16");
  if (c.warps < 1 || c.warps > 32) return fail("warps must be in 1..32");
  if (c.split_k < 1 || c.split_k > 64) return fail("split_k must be in 1..64");
  if (c.waves_per_eu < 0 || c.waves_per_eu > 64) return fail("waves_per_eu must be in 0..64");
  return true;
}

bool config_fits(const Config& c, const DeviceLimits& lim, int input_bytes, std::string* why) {
  auto fail = [&](std::string msg) {
    if (why) *why = c.to_string() + ": " + std::move(msg);
    return false;
  };
  if (!config_well_formed(c, why)) return false;

  const long long threads = (long long)c.warps * lim.warp_size;
  if (lim.max_threads_per_group && threads > lim.max_threads_per_group)
    return fail(std::to_string(threads) + " threads exceed the device's " +
                std::to_string(lim.max_threads_per_group) + " per workgroup");

  const long long buffers = c.stages > 1 ? c.stages : 1;
  const long long smem = buffers * (long long)(c.block_m + c.block_n) * c.block_k * input_bytes;
  if (lim.max_shared_bytes && smem > lim.max_shared_bytes)
    return fail("needs " + std::to_string(smem) + " bytes of shared memory, the device has " +
                std::to_string(lim.max_shared_bytes));

  // fp32 accumulators spread over the workgroup's threads.
  const long long acc_regs = (long long)c.block_m * c.block_n / (threads > 0 ? threads : 1);
  if (lim.max_registers_per_thread && acc_regs > lim.max_registers_per_thread)
    return fail("needs " + std::to_string(acc_regs) + " accumulator registers per thread, the limit is " +
                std::to_string(lim.max_registers_per_thread));

  if (c.waves_per_eu) {
    if (!lim.max_waves_per_eu) return fail("waves_per_eu is an AMD occupancy hint; this device has none");
    if (c.waves_per_eu > lim.max_waves_per_eu)
      return fail("waves_per_eu " + std::to_string(c.waves_per_eu) + " exceeds the device's " +
                  std::to_string(lim.max_waves_per_eu) + " waves per SIMD");
    const long long budget = lim.registers_per_lane_total / c.waves_per_eu;
    if (acc_regs > budget)
      return fail("waves_per_eu " + std::to_string(c.waves_per_eu) + " leaves " + std::to_string(budget) +
                  " registers per lane, fewer than the " + std::to_string(acc_regs) + " accumulators");
  }
  return true;
}

}  // namespace omnigemm::detail
