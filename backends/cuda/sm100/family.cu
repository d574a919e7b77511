// cuda.sm100_tcgen05: the Blackwell tcgen05 kernel (gemm_tcgen05.cuh) as a kernel family. Its rows
// (families/sm100_tcgen05.inc) name a tile, a stage count and a form (one CTA or a 2-SM pair per
// tile); this file picks the MMA kind from the problem's input types, checks the problem against
// the kernel, and builds the tensor maps and the launch. It runs on compute capability 10.x
// devices only; elsewhere can_implement says so and the engine keeps to the other families.
#include <algorithm>

#include "../families.hpp"
#include "../kernel_views.hpp"
#include "launch.hpp"

namespace omnigemm::detail {

namespace {

using sm100::Kind;

constexpr Config kSm100Configs[] = {
#define OG_CUDA_SM100_TCGEN05(bm, bn, bk, gm, st, form) Config{"sm100_tcgen05", bm, bn, bk, gm, st, 6, 0, 1, #form},
#include "../families/sm100_tcgen05.inc"
#undef OG_CUDA_SM100_TCGEN05
};

struct Sm100Launch {
  sm100::Launch l;
};

// The MMA kind of an input pair, and the instruction descriptor's A and B format codes, or false.
bool pick_kind(const Problem& p, Kind& kind, int& fa, int& fb, std::string& why) {
  const og_dtype ta = p.a.dtype, tb = p.b.dtype;
  auto mx8 = [](og_dtype t) { return t == OG_DTYPE_MXFP8 || t == OG_DTYPE_MXFP8_E5M2; };
  if ((ta == OG_DTYPE_F16 || ta == OG_DTYPE_BF16) && ta == tb) {
    kind = Kind::f16;
    fa = fb = ta == OG_DTYPE_F16 ? sm100::kFormatF16 : sm100::kFormatBF16;
    return true;
  }
  if (dtype_is_fp8(ta) && dtype_is_fp8(tb) && !p.a.scale.present() && !p.b.scale.present()) {
    kind = Kind::f8f6f4;
    fa = ta == OG_DTYPE_FP8_E5M2 ? sm100::kFormatE5M2 : sm100::kFormatE4M3;
    fb = tb == OG_DTYPE_FP8_E5M2 ? sm100::kFormatE5M2 : sm100::kFormatE4M3;
    return true;
  }
  if (mx8(ta) && mx8(tb)) {
    kind = Kind::mxf8f6f4;
    fa = ta == OG_DTYPE_MXFP8_E5M2 ? sm100::kFormatE5M2 : sm100::kFormatE4M3;
    fb = tb == OG_DTYPE_MXFP8_E5M2 ? sm100::kFormatE5M2 : sm100::kFormatE4M3;
    return true;
  }
  if ((ta == OG_DTYPE_MXFP4 || ta == OG_DTYPE_NVFP4) && ta == tb) {
    kind = ta == OG_DTYPE_MXFP4 ? Kind::mxf4 : Kind::mxf4nvf4;
    fa = fb = sm100::kFormatE2M1;
    return true;
  }
  why =
      "inputs must be f16 x f16, bf16 x bf16, fp8 x fp8 (e4m3/e5m2), mxfp8 x mxfp8 (e4m3/e5m2 elements), mxfp4 x mxfp4 or "
      "nvfp4 x nvfp4";
  return false;
}

class Sm100Family final : public PlannedFamily<Sm100Launch> {
 public:
  explicit Sm100Family(CudaDevice& device) : dev_(device) {}
  const char* name() const override { return "sm100_tcgen05"; }
  std::span<const Config> configs() const override { return kSm100Configs; }

  Status can_implement(const Problem& p, const Config& c) const override {
    Sm100Launch l{};
    return check(p, c, l, false);
  }
  CostHints hints(const Problem&, const Config&) const override {
    CostHints h;
    h.efficiency = 0.75;  // not measured: no compute capability 10.x device has run this family here
    return h;
  }

 protected:
  Status plan(const Problem& p, const Config& c, Sm100Launch& l) const override { return check(p, c, l, true); }

  Status launch(Sm100Launch& pl, void* stream) override {
    OG_CUDA_TRY(cudaSetDevice(dev_.index), "cudaSetDevice");
    sm100::Launch& l = pl.l;
    l.stream = static_cast<cudaStream_t>(stream);
    const int bits = sm100::elem_bits(l.kind);
    const cudaError_t e = bits == 16 ? sm100::launch_16bit(l) : bits == 8 ? sm100::launch_8bit(l) : sm100::launch_4bit(l);
    OG_CUDA_TRY(e, "gemm_tcgen05 launch");
    return {};
  }

  void summarize(const Sm100Launch& pl, PlanSummary& out) const override {
    const sm100::Launch& l = pl.l;
    const sm100::Geometry g{l.kind, l.block_n, l.cta_group, l.stages, l.b_mn_major};
    const long long tiles =
        (long long)((l.m + sm100::block_m(g) - 1) / sm100::block_m(g)) * ((l.n + l.block_n - 1) / l.block_n) * l.batch;
    out.grid[0] = l.cta_group * std::min<long long>(tiles, l.max_clusters);
    out.cluster = l.cta_group;
    out.threads = sm100::kThreads;
    out.shared_bytes = sm100::shared_bytes(g);
    static const char* kKindNames[] = {"kind::f16", "kind::f8f6f4", "kind::mxf8f6f4.block_scale",
                                       "kind::mxf4.block_scale.scale_vec::2X", "kind::mxf4nvf4.block_scale.scale_vec::4X"};
    std::string n = std::string("persistent, tcgen05.mma ") + kKindNames[int(l.kind)] + ", accumulators in tensor memory (" +
                    std::to_string(sm100::tmem_columns(g)) + " columns, " + std::to_string(sm100::acc_stages(g)) +
                    " buffer(s))";
    if (l.cta_group > 1) n += ", 2-SM pairs (cta_group::2) on 256-row tiles";
    n += l.tma_store ? ", epilogue through TMA stores" : ", general epilogue";
    out.notes = n;
  }

 private:
  Status check(const Problem& p, const Config& c, Sm100Launch& out, bool fill) const;
  bool encode(CUtensorMap& map, CUtensorMapDataType type, int rank, const void* base, const cuuint64_t* dims,
              const cuuint64_t* strides, const cuuint32_t* box, CUtensorMapSwizzle swizzle, std::string* why) const;

  CudaDevice& dev_;
};

const void* base_of(const og_memory& m) { return static_cast<const char*>(m.ptr) + m.offset; }

Status Sm100Family::check(const Problem& p, const Config& c, Sm100Launch& out, bool fill) const {
  if (dev_.info.limits.arch / 10 != 10 || !dev_.encode_tiled)
    return unsupported(
        "needs a compute capability 10.x device (sm_100a tcgen05: B200, GB200) and a driver with "
        "cuTensorMapEncodeTiled (this is " +
        dev_.info.name + ")");
  Kind kind;
  int fa = 0, fb = 0;
  std::string why;
  if (!pick_kind(p, kind, fa, fb, why)) return unsupported(why);
  const bool scaled = sm100::block_scaled(kind);
  if (c.block_k != sm100::block_k(kind))
    return unsupported("BLOCK_K must be 128 bytes of K (" + std::to_string(sm100::block_k(kind)) + " elements of these inputs)");
  if (c.warps != 6) return unsupported("the kernel runs 6 warps (TMA producer, MMA issuer, four epilogue warps)");
  if (c.split_k != 1) return unsupported("split_k must be 1");
  if (c.stages < 2) return unsupported("needs at least 2 pipeline stages");
  const int group = sm100::parse_cta_group(c.form.text);
  if (group == 0) return unsupported("the form must be single or pair");
  bool instantiated = false;
  for (const Config& r : kSm100Configs)
    instantiated |= r.block_m == c.block_m && r.block_n == c.block_n && r.block_k == c.block_k &&
                    sm100::parse_cta_group(r.form.text) == group;
  if (!instantiated || c.block_m != 128 * group)
    return unsupported("no kernel instantiated for a " + std::to_string(c.block_m) + "x" + std::to_string(c.block_n) + " " +
                (group == 2 ? "pair" : "single") + " tile with " + std::to_string(c.block_k) +
                "-element K steps (the rows of families/sm100_tcgen05.inc)");
  // Operand layouts: A K-major (row-major, unit stride along K); B K-major (unit stride along K)
  // or, for 16-bit inputs, N-major (row-major K x N: the descriptor's major bit).
  const bool sixteen = sm100::elem_bits(kind) == 16;
  const bool b_mn = p.b.stride_row != 1 && p.b.stride_col == 1;
  if (p.a.stride_col != 1) return unsupported("needs a K-major A (a unit stride along K)");
  if (p.b.stride_row != 1 && !(b_mn && sixteen))
    return unsupported(sixteen ? "needs B with a unit stride along K or N"
                        : "needs a K-major B (a unit stride along K) for 8- and 4-bit inputs");
  const sm100::Geometry g{kind, c.block_n, group, c.stages, b_mn};
  const size_t smem = sm100::shared_bytes(g);
  if (smem > size_t(dev_.info.limits.max_shared_bytes))
    return unsupported(std::to_string(c.stages) + " stages need " + std::to_string(smem) + " bytes of shared memory");
  if (p.k < 1) return unsupported("K must be at least 1 (a TMA box needs a non-empty K extent)");
  if (p.m > 0x7fffffff || p.n > 0x7fffffff || p.k > 0x7fffffff || p.batch > 0x7fffffff)
    return unsupported("dimensions must be below 2^31");
  const long long tiles = ((p.m + c.block_m - 1) / c.block_m) * ((p.n + c.block_n - 1) / c.block_n) * p.batch;
  if (tiles > 0x7fffffffLL) return unsupported("more than 2^31 - 1 output tiles");
  const bool fp4 = sm100::elem_bits(kind) == 4;
  if (fp4 && p.k % 2) return unsupported("fp4 operands need an even K");
  // Bytes of an element count along K (fp4: two per byte) and the 16-byte rules of TMA.
  auto bytes = [&](int64_t elements) { return fp4 ? elements / 2 : elements * (sm100::elem_bits(kind) / 8); };
  auto aligned = [&](const Operand& o, int64_t outer_stride, const char* name) -> Status {
    const uintptr_t b = reinterpret_cast<uintptr_t>(base_of(o.mem));
    if (b % 16) return unsupported(std::string(name) + ": base address must be 16-byte aligned");
    if (bytes(outer_stride) % 16 || outer_stride <= 0)
      return unsupported(std::string(name) + ": leading dimension must be a multiple of 16 bytes");
    if (p.batch > 1 && (bytes(o.batch_stride) % 16 || o.batch_stride <= 0))
      return unsupported(std::string(name) + ": batch stride must be a positive multiple of 16 bytes");
    return {};
  };
  if (Status s = aligned(p.a, p.a.stride_row, "A"); !s) return s;
  if (Status s = aligned(p.b, b_mn ? p.b.stride_row : p.b.stride_col, "B"); !s) return s;
  if (scaled) {
    for (const Operand* o : {&p.a, &p.b}) {
      const char* name = o == &p.a ? "A" : "B";
      const BlockScale& s = o->scale;
      if (s.layout != OG_SCALE_PACKED)
        return unsupported(std::string(name) +
                    ": scales must be packed (512-byte tiles of 128 rows x 4; og_convert_scales_host converts)");
      if (reinterpret_cast<uintptr_t>(base_of(s.mem)) % 16)
        return unsupported(std::string(name) + ": scale base must be 16-byte aligned");
      if (p.batch > 1 && (s.batch_stride % 16 || s.batch_stride <= 0))
        return unsupported(std::string(name) + ": scale batch stride must be a positive multiple of 16 bytes");
    }
  }
  if (!fill) return {};

  sm100::Launch& l = out.l;
  l.kind = kind;
  l.block_n = c.block_n, l.cta_group = group, l.stages = c.stages, l.group_m = c.group_m;
  l.m = int(p.m), l.n = int(p.n), l.k = int(p.k), l.batch = int(p.batch);
  l.max_clusters = std::max(1, dev_.programs() / group);
  l.max_shared = size_t(dev_.info.limits.max_shared_bytes);
  l.ep = epilogue_args(p);
  const bool nv = kind == Kind::mxf4nvf4;
  l.idesc = scaled ? sm100::idesc_block_scaled(fa, fb, !nv, 128 * group, c.block_n)
                   : sm100::idesc_dense(fa, fb, 128 * group, c.block_n);
  l.b_mn_major = b_mn;
  if (b_mn) l.idesc = sm100::idesc_b_mn_major(l.idesc);
  if (scaled) l.ep.alpha = p.alpha * p.a.scale.global * p.b.scale.global;  // nvfp4's per-tensor factors (1 for mx)

  // A and B: {K, rows, batch} in elements (16-bit) or bytes (fp8, fp4), boxes of 128 bytes of K
  // by 128 rows of A / BLOCK_N / group rows of B, 128-byte swizzle; zeros beyond the edges.
  const CUtensorMapDataType et = !sixteen                    ? CU_TENSOR_MAP_DATA_TYPE_UINT8
                                 : p.a.dtype == OG_DTYPE_F16 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16
                                                             : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  const int eb = sixteen ? 2 : 1;
  auto operand_map = [&](CUtensorMap& map, const Operand& o, int64_t rows, int64_t outer_stride, int box_rows) {
    const int64_t k_units = sixteen ? p.k : bytes(p.k);
    const cuuint64_t dims[3] = {cuuint64_t(k_units), cuuint64_t(rows), cuuint64_t(p.batch)};
    const cuuint64_t row_bytes = cuuint64_t(bytes(outer_stride));
    const cuuint64_t strides[2] = {row_bytes, p.batch > 1 ? cuuint64_t(bytes(o.batch_stride)) : row_bytes * dims[1]};
    const cuuint32_t box[3] = {cuuint32_t(128 / eb), cuuint32_t(box_rows), 1};
    return encode(map, et, 3, base_of(o.mem), dims, strides, box, CU_TENSOR_MAP_SWIZZLE_128B, &why);
  };
  if (!operand_map(l.map_a, p.a, p.m, p.a.stride_row, 128)) return unsupported(why);
  if (!b_mn) {
    if (!operand_map(l.map_b, p.b, p.n, p.b.stride_col, sm100::b_rows_per_cta(g))) return unsupported(why);
  } else {  // {N, K, batch}, boxes of 64 columns x the stage's 64 K rows
    const cuuint64_t dims[3] = {cuuint64_t(p.n), cuuint64_t(p.k), cuuint64_t(p.batch)};
    const cuuint64_t row_bytes = cuuint64_t(p.b.stride_row) * 2;
    const cuuint64_t strides[2] = {row_bytes, p.batch > 1 ? cuuint64_t(p.b.batch_stride) * 2 : row_bytes * dims[1]};
    const cuuint32_t box[3] = {cuuint32_t(sm100::kMnBoxColumns), cuuint32_t(sm100::block_k(kind)), 1};
    if (!encode(l.map_b, et, 3, base_of(p.b.mem), dims, strides, box, CU_TENSOR_MAP_SWIZZLE_128B, &why)) return unsupported(why);
  }
  l.map_sfa = l.map_a;  // unused by dense kinds
  l.map_sfb = l.map_b;
  if (scaled) {
    // Packed scales as 32-bit words {128 per tile, tile column, 128-row group, batch}; a stage's
    // box is its tiles of one group (A) or of the tile's groups (B).
    const int T = sm100::sf_tiles_per_stage(kind);
    auto scale_map = [&](CUtensorMap& map, const Operand& o, int64_t rows, int groups) {
      const BlockScale& s = o.scale;
      const cuuint64_t tiles = cuuint64_t(s.stored_cols / 4), row_groups = cuuint64_t(s.stored_rows / 128);
      const cuuint64_t dims[4] = {128, tiles, row_groups, cuuint64_t(p.batch)};
      const cuuint64_t strides[3] = {512, 512 * tiles, p.batch > 1 ? cuuint64_t(s.batch_stride) : 512 * tiles * row_groups};
      const cuuint32_t box[4] = {128, cuuint32_t(T), cuuint32_t(groups), 1};
      (void)rows;
      return encode(map, CU_TENSOR_MAP_DATA_TYPE_UINT32, 4, base_of(s.mem), dims, strides, box, CU_TENSOR_MAP_SWIZZLE_NONE,
                    &why);
    };
    if (!scale_map(l.map_sfa, p.a, p.m, 1) || !scale_map(l.map_sfb, p.b, p.n, sm100::sfb_groups(g))) return unsupported(why);
  }
  // D for the plain epilogue's TMA stores: row-major, 16-byte aligned, boxes of 32 rows x 128 bytes.
  // TMA drops the rows of edge boxes beyond D but columns only in whole 16-byte units (as the
  // Hopper family found), so N must be a multiple of 16 bytes of D as well.
  l.map_d = l.map_a;
  l.tma_store = false;
  const int db = p.d.dtype == OG_DTYPE_F32 ? 4 : 2;
  if (!l.ep.has_c && p.bias_mode == OG_BIAS_NONE && p.activation == OG_ACT_NONE && l.ep.d_vector_rows &&
      (p.n * db) % 16 == 0) {
    const cuuint64_t dims[3] = {cuuint64_t(p.n), cuuint64_t(p.m), cuuint64_t(p.batch)};
    const cuuint64_t row_bytes = cuuint64_t(p.d.stride_row) * db;
    const cuuint64_t strides[2] = {row_bytes, p.batch > 1 ? cuuint64_t(p.d.batch_stride) * db : row_bytes * dims[1]};
    const cuuint32_t box[3] = {cuuint32_t(sm100::chunk_columns(db)), 32, 1};
    const CUtensorMapDataType dt = db == 4 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32 : CU_TENSOR_MAP_DATA_TYPE_UINT16;
    std::string ignored;
    l.tma_store = encode(l.map_d, dt, 3, base_of(p.d.mem), dims, strides, box, CU_TENSOR_MAP_SWIZZLE_128B, &ignored);
  }
  return {};
}

bool Sm100Family::encode(CUtensorMap& map, CUtensorMapDataType type, int rank, const void* base, const cuuint64_t* dims,
                         const cuuint64_t* strides, const cuuint32_t* box, CUtensorMapSwizzle swizzle,
                         std::string* why) const {
  const cuuint32_t unit[5] = {1, 1, 1, 1, 1};
  const CUresult r = dev_.encode_tiled(&map, type, cuuint32_t(rank), const_cast<void*>(base), dims, strides, box, unit,
                                       CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                       CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS && why) *why = "cuTensorMapEncodeTiled failed (CUresult " + std::to_string(int(r)) + ")";
  return r == CUDA_SUCCESS;
}

}  // namespace

std::unique_ptr<KernelFamily> make_sm100_tcgen05_family(CudaDevice& device) { return std::make_unique<Sm100Family>(device); }

}  // namespace omnigemm::detail
