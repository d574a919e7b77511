// A backend over a modelled device: its families plan and rank problems the way the real
// backend's do, and nothing runs (every device operation answers `unsupported`). The modelled
// CUDA parts (tests/cuda/cuda_model_device.hpp) and the modelled MI250X (tests/hip) derive from
// it, naming their device's properties, memory kind and families. Problems for them name device addresses
// that nothing backs.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "backend.hpp"

namespace omnigemm::detail::test {

// Device: the backend's device record (CudaDevice, HipDevice), filled in by the derived class as
// its init would fill it; declared before the families, which refer to it, so that they go first.
template <class Device>
class ModelledBackend : public Backend {
 public:
  const DeviceInfo& device() const override { return dev_.info; }
  uint32_t output_dtypes() const override { return 0x07; }
  std::span<KernelFamily* const> families() const override { return families_; }
  Status synchronize(void*) override { return unsupported(); }
  Status allocate(size_t, og_memory&) override { return unsupported(); }
  void release(const og_memory&) override {}
  Status upload(const og_memory&, const void*, size_t) override { return unsupported(); }
  Status download(void*, const og_memory&, size_t) override { return unsupported(); }
  Status time_ms(const std::function<Status()>&, double&) override { return unsupported(); }

 protected:
  // The families in `owned_`, in their order, become the backend's.
  void adopt_families() {
    for (auto& f : owned_) families_.push_back(f.get());
  }
  Device dev_;
  std::vector<std::unique_ptr<KernelFamily>> owned_;

 private:
  static Status unsupported() { return error(StatusCode::unsupported, "a modelled device runs nothing"); }
  std::vector<KernelFamily*> families_;
};

// An operand of `kind` memory at the address `next` (then advanced by 256 MiB, so operands stay
// apart and 256-byte aligned): rows x cols of dtype t, row- or column-major at leading dimension
// ld, batches one after another.
inline Operand modelled_operand(og_memory_kind kind, uintptr_t& next, int64_t rows, int64_t cols, og_dtype t, bool col_major,
                                int64_t ld, int64_t batch = 1) {
  Operand o;
  o.present = true, o.dtype = t, o.rows = rows, o.cols = cols;
  o.stride_row = col_major ? 1 : ld;
  o.stride_col = col_major ? ld : 1;
  o.batch_stride = batch > 1 ? ld * (col_major ? cols : rows) : 0;
  o.mem.kind = kind;
  o.mem.ptr = reinterpret_cast<void*>(next);
  next += 0x10000000;
  return o;
}

// A problem of `kind` memory: A (M x K) row-major, B (K x N) row-major or column-major, D (M x N)
// row-major, `ld_pad` elements added to every leading dimension.
inline Problem padded_problem(og_memory_kind kind, int64_t m, int64_t n, int64_t k, og_dtype a, og_dtype b, og_dtype out,
                              bool b_col_major, int64_t ld_pad) {
  Problem p;
  p.m = m, p.n = n, p.k = k;
  uintptr_t next = 0x100000;
  p.a = modelled_operand(kind, next, m, k, a, false, k + ld_pad);
  p.b = modelled_operand(kind, next, k, n, b, b_col_major, (b_col_major ? k : n) + ld_pad);
  p.d = modelled_operand(kind, next, m, n, out, false, n + ld_pad);
  return p;
}

}  // namespace omnigemm::detail::test
