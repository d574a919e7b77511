// Which gemm_tma_wgmma instantiation a row of the sm90_wgmma table (families/sm90_wgmma.inc)
// runs: derived from the row alone, on the host (can_implement, plan) and in the generated
// launch dispatch (launch_impl.cuh), so a new tile is one table line.
#pragma once

namespace omnigemm::detail::sm90 {

enum class Form : int { coop, pingpong, mcast, swap };

// Whether a kernel compiles the register epilogue (tile_epilogue.cuh store_tile's
// REGISTER_EPILOGUE: C, bias and activations finished in registers on the packed ways, f32 D by
// TMA stores): cooperative consumers with one 64-row block of 64 to 256 columns, no cluster (a
// multicast pair's or split-K pair's state leaves no registers for it). Elsewhere ptxas spilled
// past cuda_codegen's budget with its loops (128x256 multicast 16 / 20 bytes; two blocks or
// ping-pong 24-68): those kernels finish fused epilogues through shared memory, and the cost
// model prices that (Sm90WgmmaFamily::hints).
constexpr bool register_epilogue_kernel(bool pingpong, int cluster_size, int wg_m, int consumer_n) {
  return !pingpong && cluster_size == 1 && wg_m == 1 && consumer_n % 64 == 0 && consumer_n <= 256;
}
// Whether such a kernel's f32 TMA way also reads an f32 C in registers: consumers of at most 192
// columns (with its loads the 256-column ones spilled 16 / 24 bytes).
constexpr bool register_f32_c_kernel(int consumer_n) { return consumer_n <= 192; }

// The template arguments of Shape<> besides the dtypes and operand layouts.
struct KernelKey {
  int block_n = 0;
  int wg_m = 0;              // 64-row warpgroup blocks per consumer (per tile when split_n)
  bool pingpong = false;     // each consumer owns whole tiles
  int cluster_m = 1;         // 2: B multicast over vertically adjacent tiles
  bool split_n = false;      // the two consumers split the tile's columns
  bool split_pairs = false;  // split_k = 2 as a cluster pair exchanging partials in shared memory
  constexpr bool operator==(const KernelKey&) const = default;
  // An MN-major B is loaded in boxes of 64 columns per consumer; narrower tiles need a K-major B.
  constexpr bool needs_k_major_b() const { return consumer_n() % 64 != 0; }
  constexpr int block_m() const { return 64 * wg_m * (split_n || pingpong ? 1 : 2); }
  constexpr int cluster_size() const { return cluster_m * (split_pairs ? 2 : 1); }
  constexpr int consumer_n() const { return split_n ? block_n / 2 : block_n; }
  // Whether the kernel finishes in registers a problem's fused epilogue (f32_c: an f32 C into an
  // f32 D).
  constexpr bool register_epilogue(bool f32_c = false) const {
    return register_epilogue_kernel(pingpong, cluster_size(), wg_m, consumer_n()) &&
           (!f32_c || register_f32_c_kernel(consumer_n()));
  }
};

// The kernel that runs a row's tile BLOCK_M x BLOCK_N with `split_k` slices in `form`, in the
// kernel's orientation (swap rows run the coop kernel on D^T, their tile transposed). A key with
// wg_m == 0 means the row describes no instantiable kernel. `pairs` selects the cluster-pair
// split for 128x64 -k2 (on unless a developer build turns it off).
constexpr KernelKey kernel_key(int block_m, int block_n, int split_k, Form form, bool pairs = true) {
  KernelKey k;
  if (form == Form::swap) return kernel_key(block_n, block_m, split_k, Form::coop, pairs);
  k.block_n = block_n;
  switch (form) {
    case Form::pingpong:
      if (block_m % 64 == 0) k.wg_m = block_m / 64;
      k.pingpong = true;
      break;
    case Form::mcast:
      if (block_m % 128 == 0) k.wg_m = block_m / 128;
      k.cluster_m = 2;
      break;
    default:
      k.split_n = block_m % 128 != 0;
      if (block_m % 64 == 0) k.wg_m = k.split_n ? block_m / 64 : block_m / 128;
      k.split_pairs = pairs && split_k == 2 && block_n == 64 && k.wg_m == 1 && !k.split_n;
      break;
  }
  return k;
}

// The form named in a config ("" = coop), or false.
constexpr bool parse_form(const char* s, Form& out) {
  auto eq = [](const char* a, const char* b) {
    while (*a && *a == *b) ++a, ++b;
    return *a == *b;
  };
  if (!*s || eq(s, "coop")) return out = Form::coop, true;
  if (eq(s, "pingpong")) return out = Form::pingpong, true;
  if (eq(s, "mcast")) return out = Form::mcast, true;
  if (eq(s, "swap")) return out = Form::swap, true;
  return false;
}

}  // namespace omnigemm::detail::sm90
