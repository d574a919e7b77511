#include "config_space.hpp"

#include <charconv>
#include <cstdio>

namespace omnigemm::detail {

namespace {

#define OG_CONFIG(bm, bn, bk, gm, st, wa, wpe, sk, ex) Config{bm, bn, bk, gm, st, wa, wpe, sk, ex},
constexpr Config kCudaTable[] = {
#include "../config_tables/cuda.inc"
};
constexpr Config kHipMi200Table[] = {
#include "../config_tables/hip_mi200.inc"
};
constexpr Config kVulkanTable[] = {
#include "../config_tables/vulkan.inc"
};
constexpr Config kCpuTable[] = {
#include "../config_tables/cpu.inc"
};
#undef OG_CONFIG

// Reads a positive decimal at text[pos...]; advances pos.
bool read_int(std::string_view text, size_t& pos, int& out) {
  const char* first = text.data() + pos;
  const char* last = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(first, last, out);
  if (ec != std::errc() || ptr == first) return false;
  pos += size_t(ptr - first);
  return true;
}

}  // namespace

std::span<const Config> config_table(og_backend backend) {
  switch (backend) {
    case OG_BACKEND_CUDA: return kCudaTable;
    case OG_BACKEND_HIP: return kHipMi200Table;
    case OG_BACKEND_VULKAN: return kVulkanTable;
    case OG_BACKEND_CPU: return kCpuTable;
    default: return {};
  }
}

std::string Config::to_string() const {
  char buf[128];
  int n = std::snprintf(buf, sizeof buf, "%dx%dx%d-g%d-s%d-w%d", block_m, block_n, block_k, group_m,
                        stages, warps);
  std::string s(buf, size_t(n));
  if (waves_per_eu != 0) s += "-e" + std::to_string(waves_per_eu);
  if (split_k != 1) s += "-k" + std::to_string(split_k);
  if (extra != 0) s += "-x" + std::to_string(extra);
  return s;
}

std::optional<Config> Config::parse(std::string_view text) {
  Config c;
  size_t pos = 0;
  auto expect = [&](char ch) {
    if (pos < text.size() && text[pos] == ch) { ++pos; return true; }
    return false;
  };
  if (!read_int(text, pos, c.block_m) || !expect('x') || !read_int(text, pos, c.block_n) ||
      !expect('x') || !read_int(text, pos, c.block_k))
    return std::nullopt;
  // Optional fields, each "-<letter><int>", each at most once, in any order.
  unsigned seen = 0;
  while (pos < text.size()) {
    if (!expect('-') || pos >= text.size()) return std::nullopt;
    const char key = text[pos++];
    int value = 0;
    if (!read_int(text, pos, value)) return std::nullopt;
    const char* keys = "gswekx";
    const char* where = std::char_traits<char>::find(keys, 6, key);
    if (!where) return std::nullopt;
    const unsigned bit = 1u << unsigned(where - keys);
    if (seen & bit) return std::nullopt;
    seen |= bit;
    switch (key) {
      case 'g': c.group_m = value; break;
      case 's': c.stages = value; break;
      case 'w': c.warps = value; break;
      case 'e': c.waves_per_eu = value; break;
      case 'k': c.split_k = value; break;
      case 'x': c.extra = value; break;
    }
  }
  if (!config_well_formed(c, nullptr)) return std::nullopt;
  return c;
}

bool config_well_formed(const Config& c, std::string* why) {
  auto fail = [&](const char* msg) {
    if (why) *why = c.to_string() + ": " + msg;
    return false;
  };
  if (c.block_m <= 0 || c.block_n <= 0 || c.block_k <= 0 || c.block_m > 4096 || c.block_n > 8192 ||
      c.block_k > 4096)
    return fail("block sizes must be in 1..4096 (BLOCK_N up to 8192)");
  if (c.group_m < 1 || c.group_m > 64) return fail("GROUP_M must be in 1..64");
  if (c.stages < 0 || c.stages > 16) return fail("stages must be in 0..16");
  if (c.warps < 1 || c.warps > 32) return fail("warps must be in 1..32");
  if (c.split_k < 1 || c.split_k > 64) return fail("split_k must be in 1..64");
  if (c.waves_per_eu < 0 || c.waves_per_eu > 64) return fail("waves_per_eu must be in 0..64");
  if (c.extra < 0) return fail("the variant (-x) must be >= 0");
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
