// HIP backend (AMD MI200, gfx90a): the device (hip_device.hpp), memory, streams, hipEvent timing,
// and the kernel family that runs problems on it (families.hpp). Tiles are visited in the order of
// the shared scheduler (omnigemm/tile_schedule.h).
#include <algorithm>
#include <mutex>
#include <vector>

#include "families.hpp"

namespace omnigemm::detail {

namespace {

class HipBackend final : public Backend {
 public:
  Status init(int device_index) {
    if (Status s = dev_.init(device_index); !s) return s;
    OG_HIP_TRY(dev_, api().EventCreate(&start_), "hipEventCreate");
    OG_HIP_TRY(dev_, api().EventCreate(&stop_), "hipEventCreate");
    owned_.push_back(make_gfx90a_mfma_family(dev_));
    for (auto& f : owned_) families_.push_back(f.get());
    return {};
  }
  ~HipBackend() override {
    if (start_) (void)api().EventDestroy(start_);
    if (stop_) (void)api().EventDestroy(stop_);
  }

  og_backend kind() const override { return OG_BACKEND_HIP; }
  const DeviceInfo& device() const override { return dev_.info; }
  // f16, bf16, e4m3, e5m2 inputs (fp8 converted to a 16-bit type on load); f32, f16, bf16 outputs.
  uint32_t input_dtypes() const override {
    return (1u << OG_DTYPE_F16) | (1u << OG_DTYPE_BF16) | (1u << OG_DTYPE_FP8_E4M3) | (1u << OG_DTYPE_FP8_E5M2);
  }
  uint32_t output_dtypes() const override { return 0x07; }
  uint32_t memory_kinds() const override { return 1u << OG_MEMORY_HIP; }
  bool supports_async() const override { return true; }
  std::span<KernelFamily* const> families() const override { return families_; }

  Status synchronize(void* stream) override {
    OG_HIP_TRY(dev_, api().StreamSynchronize(static_cast<hipStream_t>(stream)), "hipStreamSynchronize");
    return {};
  }

  Status allocate(size_t bytes, og_memory& out) override {
    if (Status s = dev_.select(); !s) return s;
    void* p = nullptr;
    OG_HIP_TRY(dev_, api().Malloc(&p, std::max<size_t>(bytes, 16)), ("hipMalloc of " + std::to_string(bytes) + " bytes").c_str());
    out = og_memory{OG_MEMORY_HIP, p, 0, 0};
    return {};
  }
  void release(const og_memory& m) override { (void)api().Free(m.ptr); }
  Status upload(const og_memory& dst, const void* src, size_t bytes) override {
    OG_HIP_TRY(dev_, api().Memcpy(static_cast<char*>(dst.ptr) + dst.offset, src, bytes, hipMemcpyHostToDevice), "hipMemcpy");
    return {};
  }
  Status download(void* dst, const og_memory& src, size_t bytes) override {
    OG_HIP_TRY(dev_, api().Memcpy(dst, static_cast<const char*>(src.ptr) + src.offset, bytes, hipMemcpyDeviceToHost), "hipMemcpy");
    return {};
  }

  // MI200s idle at a low clock and reach their full clock within a fraction of a second of
  // sustained work.
  double clock_ramp_ms() const override { return 200; }

  // Events on the null stream, which the benchmark's rocBLAS calls use too.
  Status time_ms(const std::function<Status()>& launch_fn, double& ms) override {
    std::lock_guard<std::mutex> lock(timer_mutex_);
    OG_HIP_TRY(dev_, api().EventRecord(start_, nullptr), "hipEventRecord");
    Status s = launch_fn();
    OG_HIP_TRY(dev_, api().EventRecord(stop_, nullptr), "hipEventRecord");
    OG_HIP_TRY(dev_, api().EventSynchronize(stop_), "hipEventSynchronize");
    if (!s) return s;
    float f = 0;
    OG_HIP_TRY(dev_, api().EventElapsedTime(&f, start_, stop_), "hipEventElapsedTime");
    ms = f;
    return {};
  }

 private:
  const HipRuntime& api() const { return *dev_.api; }

  HipDevice dev_;
  std::vector<std::unique_ptr<KernelFamily>> owned_;
  std::vector<KernelFamily*> families_;
  hipEvent_t start_ = nullptr, stop_ = nullptr;
  std::mutex timer_mutex_;
};

}  // namespace

Status make_hip_backend(const BackendOptions& opt, std::unique_ptr<Backend>& out) {
  auto be = std::make_unique<HipBackend>();
  Status s = be->init(opt.device_index);
  if (!s) return s;
  out = std::move(be);
  return {};
}

}  // namespace omnigemm::detail
