// The one config space shared by every backend: a Config type, its stable text form, the
// per-backend candidate tables (data, in engine/config_tables/*.inc) and validity rules
// derived from device limits.
#pragma once

#include <compare>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "omnigemm/omnigemm.h"

namespace omnigemm::detail {

struct Config {
  int block_m = 0;
  int block_n = 0;
  int block_k = 0;
  int group_m = 8;
  int stages = 1;        // software-pipeline depth (0 = the AMD "num_stages = 0" of SEEDS.md)
  int warps = 4;         // warps / waves / subgroups per workgroup
  int waves_per_eu = 0;  // AMD occupancy hint; 0 = none
  int split_k = 1;
  int extra = 0;         // backend-specific variant (kernel family, cluster shape, ...); 0 = default

  // Text form: "128x256x64-g8-s3-w8" plus "-e<waves_per_eu>", "-k<split_k>", "-x<extra>"
  // when they are not the defaults. parse(to_string(c)) == c for every valid c.
  std::string to_string() const;
  static std::optional<Config> parse(std::string_view text);
  auto operator<=>(const Config&) const = default;
};

// What the validity rules need to know about a device. 0 means "no such limit".
struct DeviceLimits {
  long long max_shared_bytes = 0;  // per workgroup
  int max_threads_per_group = 0;
  int warp_size = 1;               // warp / wavefront / subgroup width in threads
  int max_registers_per_thread = 0;
  int max_waves_per_eu = 0;        // AMD: waves per SIMD; 0 on other vendors
  int registers_per_lane_total = 0;  // AMD: VGPR+AGPR file per lane (512 on gfx90a)
  int compute_units = 1;           // SMs / CUs / CPU cores: the heuristic's wave size
  long long l2_bytes = 0;
};

// The candidate table of a backend (the data in engine/config_tables/<backend>.inc).
// For OG_BACKEND_HIP this is the MI200 (gfx90a) list.
std::span<const Config> config_table(og_backend backend);

// Structural checks only (ranges of every field); what parse() applies.
bool config_well_formed(const Config& c, std::string* why);

// Structural and device-limit checks: threads, shared memory for `stages` buffers of
// (BLOCK_M + BLOCK_N) x BLOCK_K inputs of `input_bytes` each, fp32 accumulator registers,
// the waves_per_eu register budget. On failure returns false and says why in *why.
bool config_fits(const Config& c, const DeviceLimits& limits, int input_bytes, std::string* why);

}  // namespace omnigemm::detail
