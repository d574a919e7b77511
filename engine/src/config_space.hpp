// The one config space shared by every backend: a Config type and its stable text form, and the
// validity rules derived from device limits. The configs themselves are data in each kernel
// family's table (backends/<name>/families/*.inc); the engine never lists them.
#pragma once

#include <compare>
#include <optional>
#include <string>
#include <string_view>

#include "omnigemm/omnigemm.h"

namespace omnigemm::detail {

// A short name stored inline (kernel family and form names): value semantics, usable in
// constexpr tables, compared by content. Longer names are a programming error caught by
// config_well_formed (the 23 characters that fit are kept and the name is marked too long).
struct ShortName {
  static constexpr int kCapacity = 24;
  char text[kCapacity] = {};

  constexpr ShortName() = default;
  constexpr ShortName(const char* s) { assign(s, s ? std::char_traits<char>::length(s) : 0); }
  constexpr explicit ShortName(std::string_view s) { assign(s.data(), s.size()); }

  constexpr std::string_view view() const {
    return std::string_view(text, std::char_traits<char>::length(text));
  }
  constexpr bool empty() const { return text[0] == '\0'; }
  constexpr bool too_long() const { return text[kCapacity - 1] == '\x7f'; }
  auto operator<=>(const ShortName&) const = default;
  bool operator==(const ShortName&) const = default;
  bool operator==(std::string_view s) const { return view() == s; }
  bool operator==(const char* s) const { return view() == std::string_view(s); }

 private:
  constexpr void assign(const char* s, size_t n) {
    const size_t keep = n < size_t(kCapacity - 1) ? n : size_t(kCapacity - 2);
    for (size_t i = 0; i < keep; ++i) text[i] = s[i];
    if (n > keep) text[kCapacity - 1] = '\x7f';  // marks truncation; view() stops at the NUL before it
  }
};

struct Config {
  ShortName family;      // the kernel family that runs it, e.g. "sm90_wgmma" (empty: any family)
  int block_m = 0;
  int block_n = 0;
  int block_k = 0;
  int group_m = 8;
  int stages = 1;        // software-pipeline depth (0 = the AMD "num_stages = 0" of docs/config_seeds.md)
  int warps = 4;         // warps / waves / subgroups per workgroup
  int waves_per_eu = 0;  // AMD occupancy hint; 0 = none
  int split_k = 1;
  ShortName form;        // the family's named form, e.g. "coop", "pingpong" (empty: its default)

  // Text form: "[family:]128x256x64-g8-s3-w8" plus "-e<waves_per_eu>" and "-k<split_k>" when
  // they are not the defaults and "-<form>" when it is set, e.g.
  // "sm90_wgmma:128x256x64-g16-s4-w12-coop". parse(to_string(c)) == c for every well-formed c.
  std::string to_string() const;
  static std::optional<Config> parse(std::string_view text);
  // Why `text` does not parse, for error messages ("" when it does).
  static std::string parse_error(std::string_view text);
  auto operator<=>(const Config&) const = default;
};

// What the validity rules and the cost model need to know about a device. 0 means "no such
// limit" or "unknown".
struct DeviceLimits {
  long long max_shared_bytes = 0;  // per workgroup
  int max_threads_per_group = 0;
  int warp_size = 1;               // warp / wavefront / subgroup width in threads
  int max_registers_per_thread = 0;
  int max_waves_per_eu = 0;        // AMD: waves per SIMD; 0 on other vendors
  int registers_per_lane_total = 0;  // AMD: VGPR+AGPR file per lane (512 on gfx90a)
  int compute_units = 1;           // SMs / CUs / CPU cores: the cost model's wave size
  long long l2_bytes = 0;
  int arch = 0;                    // vendor architecture number (CUDA: 10 * major + minor, e.g. 90)
  // Dense peak rates in TFLOP/s (CPU: per all cores) by input class, and memory bandwidth in GB/s;
  // the cost model's units. 0: unknown (the model then ranks by its relative terms alone).
  double peak_tflops_f32 = 0;
  double peak_tflops_16bit = 0;
  double peak_tflops_8bit = 0;
  double memory_gbps = 0;
};

// Structural checks only (ranges of every field, name lengths); what parse() applies.
bool config_well_formed(const Config& c, std::string* why);

// Structural and device-limit checks: threads, shared memory for `stages` buffers of
// (BLOCK_M + BLOCK_N) x BLOCK_K inputs of `input_bytes` each, fp32 accumulator registers,
// the waves_per_eu register budget. On failure returns false and says why in *why.
bool config_fits(const Config& c, const DeviceLimits& limits, int input_bytes, std::string* why);

}  // namespace omnigemm::detail
