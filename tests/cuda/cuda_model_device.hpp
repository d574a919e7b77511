// A modelled Hopper GPU for the CUDA cost model without a GPU: the backend's own families and
// hints over a CudaDevice filled with the part's properties, and problems laid out as the
// benchmark's random sweep lays them out. Used by test_cuda_model.cpp and the developer tool
// tests/dev/cuda_model_rank.cpp.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "cuda_device.hpp"
#include "families.hpp"
#include "modelled_backend.hpp"

namespace omnigemm::detail::test {

inline CUresult no_tensor_maps(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*, const cuuint64_t*,
                               const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                               CUtensorMapL2promotion, CUtensorMapFloatOOBfill) {
  return CUDA_ERROR_NOT_SUPPORTED;  // the model plans nothing; can_implement never encodes
}

// An encoder that accepts every map without writing it: describe() plans (nothing launches).
inline CUresult accept_tensor_maps(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                   const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                   CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill) {
  return CUDA_SUCCESS;
}

// A CUDA backend over a CudaDevice whose properties a test fills in (what CudaDevice::init reads)
// and whose families it chooses (owned_, then adopt_families()): it plans and ranks, and runs
// nothing. The modelled devices of test_cuda_model.cpp, test_cuda_blockscaled.cpp and
// test_cuda_sm100.cpp derive from it.
class ModelledCudaBackend : public ModelledBackend<CudaDevice> {
 public:
  og_backend kind() const override { return OG_BACKEND_CUDA; }
  uint32_t input_dtypes() const override { return input_dtypes_; }
  uint32_t memory_kinds() const override { return 1u << OG_MEMORY_CUDA; }

 protected:
  uint32_t input_dtypes_ = 0x1f;
};

// The Hopper parts the model is checked on: the H100 SXM (the named tables' choices were measured
// there) and the H200 (the random sweeps since 2026-11-28): the same SMs and clocks, the H200
// with HBM3e and a larger L2.
enum class HopperPart { h100, h200 };

// A Hopper part's properties, as CudaDevice::init reads them.
inline void hopper_limits(HopperPart part, DeviceInfo& info) {
  const bool h200 = part == HopperPart::h200;
  info.name = h200 ? "modelled NVIDIA H200" : "modelled NVIDIA H100 80GB HBM3";
  info.driver = "model, sm_90";
  DeviceLimits& l = info.limits;
  l.max_shared_bytes = 232448;
  l.max_threads_per_group = 1024;
  l.warp_size = 32;
  l.max_registers_per_thread = 255;
  l.compute_units = 132;
  l.l2_bytes = h200 ? 62914560 : 50331648;
  l.arch = 90;
  const double sm_ghz = 1.98 * 132;
  l.peak_tflops_f32 = 256 * sm_ghz * 1e-3;
  l.peak_tflops_16bit = 4096 * sm_ghz * 1e-3;
  l.peak_tflops_8bit = 2 * l.peak_tflops_16bit;
  // As CudaDevice::init computes it: HBM3 at 2619 MHz on a 5120-bit bus; HBM3e at 3.2 GHz on 6144 bits.
  l.memory_gbps = h200 ? 2.0 * 3.2 * 6144 / 8 : 2.0 * 2.619 * 5120 / 8;
}

// A Hopper part with the CUDA backend's families for the plain dtypes, in its order.
class ModelledHopper final : public ModelledCudaBackend {
 public:
  // plans: describe() plans launches (tensor maps accepted, not encoded); else it refuses.
  explicit ModelledHopper(bool plans = false, HopperPart part = HopperPart::h100) {
    hopper_limits(part, dev_.info);
    dev_.encode_tiled = plans ? &accept_tensor_maps : &no_tensor_maps;
    owned_.push_back(make_sm90_wgmma_family(dev_));
    owned_.push_back(make_sm90_repack_family(dev_, *owned_.back()));
    owned_.push_back(make_sm80_mma_family(dev_));
    owned_.push_back(make_sgemm_family(dev_));
    owned_.push_back(make_skinny_mma_family(dev_));
    owned_.push_back(make_skinny_family(dev_));
    owned_.push_back(make_simt_family(dev_));
    owned_.push_back(make_short_k_family(dev_));
    adopt_families();
  }
};

// A problem laid out as the random sweep's rows are: A and B row- ('r') or column-major ('c')
// with the given leading dimensions, D row-major, batches one after another (B's shared where
// b_shared), device pointers at 256-byte aligned addresses.
inline Problem strided_problem(int64_t m, int64_t n, int64_t k, int64_t batch, const char* layout, int64_t lda,
                               int64_t ldb, int64_t ldd, og_dtype t, bool b_shared = false) {
  Problem p;
  p.m = m, p.n = n, p.k = k, p.batch = batch;
  uintptr_t next = 0x100000;
  p.a = modelled_operand(OG_MEMORY_CUDA, next, m, k, t, layout[0] == 'c', lda, batch);
  p.b = modelled_operand(OG_MEMORY_CUDA, next, k, n, t, layout[1] == 'c', ldb, batch);
  if (b_shared) p.b.batch_stride = 0;
  p.d = modelled_operand(OG_MEMORY_CUDA, next, m, n, t, false, ldd, batch);
  return p;
}

}  // namespace omnigemm::detail::test
