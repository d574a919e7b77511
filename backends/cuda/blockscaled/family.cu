// cuda.sm90_blockscaled: 128-blockwise fp8 GEMMs on Hopper (gemm_block128.cuh) as a kernel
// family. Its rows (families/sm90_blockscaled.inc) name a 128 x BLOCK_N tile; this file checks a
// problem against the kernel, builds the tensor maps, the scale views and the launch. Of the other
// CUDA families only sm90_dequant takes block-scaled operands (those with one-byte scales), so
// 128-blockwise fp8 on sm_90 comes here.
#include <algorithm>
#include <string>

#include "../families.hpp"
#include "../kernel_views.hpp"
#include "../sm90/launch.hpp"
#include "../sm90/tensor_map_encode.hpp"
#include "launch.hpp"
#include "omnigemm/tile_schedule.h"

namespace omnigemm::detail {

namespace {

constexpr Config kConfigs[] = {
#define OG_CUDA_SM90_BLOCKSCALED(bm, bn, bk, gm, st, form) Config{"sm90_blockscaled", bm, bn, bk, gm, st, 12, 0, 1, #form},
#include "../families/sm90_blockscaled.inc"
#undef OG_CUDA_SM90_BLOCKSCALED
};


// Strides (in scales) of a resolved f32 scale tensor: row, column.
void scale_strides(const BlockScale& s, long long& row, long long& col) {
  if (s.layout == OG_SCALE_COL_MAJOR) row = 1, col = s.ld;
  else row = s.ld, col = 1;
}

struct BlockscaledPlan {
  sm90::Block128Launch l;
};

class Sm90BlockscaledFamily final : public PlannedFamily<BlockscaledPlan> {
 public:
  explicit Sm90BlockscaledFamily(CudaDevice& device) : dev_(device) {}
  const char* name() const override { return "sm90_blockscaled"; }
  std::span<const Config> configs() const override { return kConfigs; }

  Status can_implement(const Problem& p, const Config& c) const override {
    BlockscaledPlan l{};
    return check(p, c, l, false);
  }

  CostHints hints(const Problem&, const Config& c) const override {
    CostHints h;
    // fp8 wgmma with a promotion per 128-deep K block: about 0.6 of the fp8 dense peak.
    h.efficiency = 0.6;
    if (c.form == "mcast" || c.form == "pipe") {  // not yet measured on a GPU: forced configs only
      h.factor = 0;
      h.note = "the mcast and pipe forms run when forced until measured";
    }
    return h;
  }

 protected:
  Status plan(const Problem& p, const Config& c, BlockscaledPlan& l) const override { return check(p, c, l, true); }

  Status launch(BlockscaledPlan& pl, void* stream) override {
    OG_CUDA_TRY(cudaSetDevice(dev_.index), "cudaSetDevice");
    pl.l.stream = static_cast<cudaStream_t>(stream);
    OG_CUDA_TRY(sm90::launch_block128(pl.l), "gemm_block128 launch");
    return {};
  }

  void summarize(const BlockscaledPlan& pl, PlanSummary& out) const override {
    const sm90::Block128Launch& l = pl.l;
    out.grid[0] = l.grid;
    out.threads = 128 * (1 + sm90::kConsumers);
    out.cluster = l.form == sm90::BlockscaledForm::mcast ? 2 : 1;
    out.shared_bytes = (long long)sm90::shared_bytes(128, l.block_n, l.args.stages);
    out.notes = "persistent, 128x" + std::to_string(l.block_n) +
                " tiles, fp8 wgmma per 128-deep K block promoted into f32 accumulators with A's " +
                (l.args.a_shift ? "128x128" : "1x128") + " and B's 128x128 scales" +
                (l.form == sm90::BlockscaledForm::mcast  ? ", B multicast in clusters of 2"
                 : l.form == sm90::BlockscaledForm::pipe ? ", the next K block's wgmmas in flight during each promotion"
                                                         : "");
  }

 private:
  Status check(const Problem& p, const Config& c, BlockscaledPlan& out, bool fill) const;
  bool encode(CUtensorMap& map, const Operand& o, int64_t k, int64_t rows, int64_t row_stride, int box_rows, int64_t batch,
              std::string* why) const;

  CudaDevice& dev_;
  mutable sm90::TensorMapMemo maps_;
};

Status Sm90BlockscaledFamily::check(const Problem& p, const Config& c, BlockscaledPlan& out, bool fill) const {
  if (dev_.info.limits.arch / 10 != 9 || !dev_.encode_tiled)
    return unsupported("needs an sm_90 device and a driver with cuTensorMapEncodeTiled (this is " + dev_.info.name + ")");
  if (!dtype_is_fp8(p.a.dtype) || !dtype_is_fp8(p.b.dtype) || !p.a.scale.present() || !p.b.scale.present())
    return unsupported("runs fp8 (e4m3/e5m2) A and B with 128-blockwise f32 scales only (VEC128_F32 or BLK128x128_F32 for A, "
                "BLK128x128_F32 for B)");
  const og_scale_mode ma = p.a.scale.mode, mb = p.b.scale.mode;
  if (!(ma == OG_SCALE_MODE_VEC128_F32 || ma == OG_SCALE_MODE_BLK128x128_F32) || mb != OG_SCALE_MODE_BLK128x128_F32)
    return unsupported("A's scales must be VEC128_F32 or BLK128x128_F32 and B's BLK128x128_F32 (a tile's columns share one scale)");
  if (p.a.scale.layout == OG_SCALE_PACKED || p.b.scale.layout == OG_SCALE_PACKED)
    return unsupported("f32 scales must be row- or column-major");
  sm90::BlockscaledForm form = sm90::BlockscaledForm::coop;
  if (c.form == "mcast") form = sm90::BlockscaledForm::mcast;
  else if (c.form == "pipe") form = sm90::BlockscaledForm::pipe;
  else if (!(c.form.empty() || c.form == "coop")) return unsupported("the form must be coop, mcast or pipe");
  const std::string form_name = c.form.empty() ? "coop" : std::string(c.form.view());
  bool listed = false;
  for (const Config& r : kConfigs)
    listed |= r.block_m == c.block_m && r.block_n == c.block_n && r.block_k == c.block_k && r.form.view() == form_name;
  if (!listed) return unsupported("no kernel instantiated for a " + std::to_string(c.block_m) + "x" + std::to_string(c.block_n) + "x" +
                           std::to_string(c.block_k) + " " + form_name + " tile (the rows of families/sm90_blockscaled.inc)");
  if (c.warps != 12) return unsupported("the kernel runs 12 warps (a producer and two consumer warpgroups)");
  if (c.split_k != 1) return unsupported("no split-K");
  if (c.stages < 2) return unsupported("needs at least 2 pipeline stages");
  const size_t smem = sm90::shared_bytes(c.block_m, c.block_n, c.stages);
  if (smem > size_t(dev_.info.limits.max_shared_bytes))
    return unsupported(std::to_string(c.stages) + " stages need " + std::to_string(smem) + " bytes of shared memory");
  if (p.k < 1) return unsupported("K must be at least 1");
  if (p.m > 0x7fffffff || p.n > 0x7fffffff || p.k > 0x7fffffff || p.batch > 0x7fffffff) return unsupported("dimensions must be below 2^31");
  const long long tiles = ((p.m + c.block_m - 1) / c.block_m) * ((p.n + c.block_n - 1) / c.block_n) * p.batch;
  if (tiles + p.batch * ((p.n + c.block_n - 1) / c.block_n) > 0x7fffffffLL) return unsupported("more than 2^31 - 1 output tiles");
  // fp8 wgmma reads K-major operands: A row-major (unit stride along K), B column-major.
  if (p.a.stride_col != 1 || p.b.stride_row != 1) return unsupported("fp8 wgmma needs K-major operands (A row-major, B column-major)");
  std::string why;
  if (!check_16_byte_operand(p.a, 1, p.a.stride_row, p.batch, &why) || !check_16_byte_operand(p.b, 1, p.b.stride_col, p.batch, &why))
    return unsupported(why);
  if (!fill) return {};

  sm90::Block128Launch& l = out.l;
  sm90::Block128Args& a = l.args;
  a.m = int(p.m), a.n = int(p.n), a.k = int(p.k), a.batch = int(p.batch);
  a.num_pid_m = int((p.m + c.block_m - 1) / c.block_m);
  a.num_pid_n = int((p.n + c.block_n - 1) / c.block_n);
  a.group_m = c.group_m;
  a.k_tiles = int((p.k + 127) / 128);
  a.stages = c.stages;
  a.sa = reinterpret_cast<const float*>(static_cast<const char*>(p.a.scale.mem.ptr) + p.a.scale.mem.offset);
  scale_strides(p.a.scale, a.sa_row, a.sa_col);
  a.sa_batch = p.a.scale.batch_stride;
  a.a_shift = ma == OG_SCALE_MODE_BLK128x128_F32 ? 7 : 0;
  a.sb = reinterpret_cast<const float*>(static_cast<const char*>(p.b.scale.mem.ptr) + p.b.scale.mem.offset);
  scale_strides(p.b.scale, a.sb_row, a.sb_col);
  a.sb_batch = p.b.scale.batch_stride;
  a.ep = epilogue_args(p);
  l.block_n = c.block_n;
  l.form = form;
  const int cluster_m = form == sm90::BlockscaledForm::mcast ? 2 : 1;
  l.a_e5m2 = p.a.dtype == OG_DTYPE_FP8_E5M2;
  l.b_e5m2 = p.b.dtype == OG_DTYPE_FP8_E5M2;
  l.grid = og_persistent_grid(int(tiles), dev_.programs());
  l.max_shared = size_t(dev_.info.limits.max_shared_bytes);
  if (!encode(l.map_a, p.a, p.k, p.m, p.a.stride_row, c.block_m, p.batch, &why) ||
      !encode(l.map_b, p.b, p.k, p.n, p.b.stride_col, c.block_n / cluster_m, p.batch, &why))
    return unsupported(why);
  return {};
}

// A K-major fp8 operand as a 3-D tensor map (K, rows, batch) in boxes of 128 x box_rows with the
// 128-byte swizzle (the wgmma descriptors' layout); boxes read zeros out of bounds.
bool Sm90BlockscaledFamily::encode(CUtensorMap& map, const Operand& o, int64_t k, int64_t rows, int64_t row_stride,
                                   int box_rows, int64_t batch, std::string* why) const {
  const CUresult r = sm90::encode_3d(dev_, maps_, map, o, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, k, rows, row_stride, batch, 128,
                                     box_rows, CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
  if (r != CUDA_SUCCESS) {
    if (why) *why = "cuTensorMapEncodeTiled failed (CUresult " + std::to_string(int(r)) + ")";
    return false;
  }
  return true;
}

}  // namespace

std::unique_ptr<KernelFamily> make_sm90_blockscaled_family(CudaDevice& device) {
  return std::make_unique<Sm90BlockscaledFamily>(device);
}

}  // namespace omnigemm::detail
