// CUDA backend: the device (cuda_device.hpp), memory, timing, and the kernel families that run
// problems on it, fastest first (families.hpp): sm90_blockscaled, sm90_dequant, sm90_wgmma and sm90_repack on sm_90
// devices, sm80_mma, sgemm (f32) and skinny on sm_80 and newer, simt everywhere. Tiles are visited in the order of the shared scheduler
// (omnigemm/tile_schedule.h).
#include <algorithm>
#include <mutex>
#include <vector>

#include "block_quantize.hpp"
#include "families.hpp"

namespace omnigemm::detail {

namespace {

class CudaBackend final : public Backend {
 public:
  Status init(int device_index) {
    if (Status s = dev_.init(device_index); !s) return s;
    OG_CUDA_TRY(cudaEventCreate(&start_), "cudaEventCreate");
    OG_CUDA_TRY(cudaEventCreate(&stop_), "cudaEventCreate");
    owned_.push_back(make_sm100_tcgen05_family(dev_));
    auto wgmma = make_sm90_wgmma_family(dev_);
    owned_.push_back(make_sm90_blockscaled_family(dev_));
    owned_.push_back(make_sm90_dequant_family(dev_, *wgmma));
    owned_.push_back(make_sm90_repack_family(dev_, *wgmma));
    owned_.insert(owned_.end() - 1, std::move(wgmma));  // sm90_wgmma before sm90_repack
    owned_.push_back(make_sm80_mma_family(dev_));
    owned_.push_back(make_skinny_mma_family(dev_));
    owned_.push_back(make_skinny_family(dev_));
    owned_.push_back(make_short_k_family(dev_));
    owned_.push_back(make_sgemm_family(dev_));
    owned_.push_back(make_simt_family(dev_));
    for (auto& f : owned_) families_.push_back(f.get());
    return {};
  }
  ~CudaBackend() override {
    if (start_) cudaEventDestroy(start_);
    if (stop_) cudaEventDestroy(stop_);
  }

  og_backend kind() const override { return OG_BACKEND_CUDA; }
  const DeviceInfo& device() const override { return dev_.info; }
  uint32_t output_dtypes() const override { return 0x07; }
  uint32_t memory_kinds() const override { return 1u << OG_MEMORY_CUDA; }
  // Every block-scale mode: 128-blockwise fp8 on cuda.sm90_blockscaled, the one-byte-scale
  // formats on cuda.sm90_dequant (sm_90 devices; elsewhere the families say why not).
  uint32_t scale_modes() const override {
    return (1u << OG_SCALE_MODE_DEFAULT) | (1u << OG_SCALE_MODE_VEC32_UE8M0) | (1u << OG_SCALE_MODE_VEC16_UE4M3) |
           (1u << OG_SCALE_MODE_VEC128_F32) | (1u << OG_SCALE_MODE_BLK128x128_F32);
  }
  uint32_t input_dtypes() const override {
    return 0x1fu | (1u << OG_DTYPE_MXFP8) | (1u << OG_DTYPE_MXFP8_E5M2) | (1u << OG_DTYPE_MXFP4) | (1u << OG_DTYPE_NVFP4);
  }
  bool supports_async() const override { return true; }
  std::span<KernelFamily* const> families() const override { return families_; }

  // Device quantisation (block_quantize.cu); block-scaled GEMMs run on cuda.sm90_blockscaled.
  Status quantize(const Operand& src, const Operand& dst, bool operand_b, float& global, void* stream) override {
    OG_CUDA_TRY(cudaSetDevice(dev_.index), "cudaSetDevice");
    return cuda_quantize(src, dst, operand_b, global, stream);
  }
  Status dequantize(const Operand& src, const Operand& dst, bool operand_b, void* stream) override {
    OG_CUDA_TRY(cudaSetDevice(dev_.index), "cudaSetDevice");
    return cuda_dequantize(src, dst, operand_b, stream);
  }

  Status synchronize(void* stream) override {
    OG_CUDA_TRY(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)), "cudaStreamSynchronize");
    return {};
  }

  Status allocate(size_t bytes, og_memory& out) override {
    OG_CUDA_TRY(cudaSetDevice(dev_.index), "cudaSetDevice");
    void* p = nullptr;
    OG_CUDA_TRY(cudaMalloc(&p, std::max<size_t>(bytes, 16)), ("cudaMalloc of " + std::to_string(bytes) + " bytes").c_str());
    out = og_memory{OG_MEMORY_CUDA, p, 0, 0};
    return {};
  }
  void release(const og_memory& m) override { cudaFree(m.ptr); }
  Status upload(const og_memory& dst, const void* src, size_t bytes) override {
    OG_CUDA_TRY(cudaMemcpy(static_cast<char*>(dst.ptr) + dst.offset, src, bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
    return {};
  }
  Status download(void* dst, const og_memory& src, size_t bytes) override {
    OG_CUDA_TRY(cudaMemcpy(dst, static_cast<const char*>(src.ptr) + src.offset, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
    return {};
  }

  // Datacenter GPUs idle at a low SM clock and are back at full clock within about 0.25 s of
  // sustained work.
  double clock_ramp_ms() const override { return 200; }

  // Events on the legacy default stream 0, which the benchmark's cuBLAS calls use too.
  Status time_ms(const std::function<Status()>& launch_fn, double& ms) override {
    std::lock_guard<std::mutex> lock(timer_mutex_);
    OG_CUDA_TRY(cudaEventRecord(start_, 0), "cudaEventRecord");
    Status s = launch_fn();
    OG_CUDA_TRY(cudaEventRecord(stop_, 0), "cudaEventRecord");
    OG_CUDA_TRY(cudaEventSynchronize(stop_), "cudaEventSynchronize");
    if (!s) return s;
    float f = 0;
    OG_CUDA_TRY(cudaEventElapsedTime(&f, start_, stop_), "cudaEventElapsedTime");
    ms = f;
    return {};
  }

 private:
  CudaDevice dev_;
  std::vector<std::unique_ptr<KernelFamily>> owned_;
  std::vector<KernelFamily*> families_;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  std::mutex timer_mutex_;
};

}  // namespace

Status make_cuda_backend(const BackendOptions& opt, std::unique_ptr<Backend>& out) {
  auto be = std::make_unique<CudaBackend>();
  Status s = be->init(opt.device_index);
  if (!s) return s;
  out = std::move(be);
  return {};
}

}  // namespace omnigemm::detail
