// The Vulkan backend's creation, its problem limits and its families (see vulkan_backend.hpp for
// where the rest lives).
#include "vulkan_backend.hpp"

#include <cstdio>
#include <cstdlib>
#include <memory>

#include "vulkan_debug.hpp"

namespace omnigemm::detail {

namespace vulkan {

VulkanBackend::~VulkanBackend() {
  if (dev_.device && dev_.vk.vkQueueWaitIdle && dev_.queue) dev_.vk.vkQueueWaitIdle(dev_.queue);
  if (dev_.device && dev_.vk.vkDestroyPipeline) {
    pipelines_.destroy();
    release_all_buffers();
    destroy_queue_objects();
  }
  dev_.close();
}

Status VulkanBackend::init(const BackendOptions& opt) {
  Status s = dev_.open(opt);
  if (!s) return s;
#ifdef OMNIGEMM_DEVELOPER
  if (const char* probe = std::getenv("OMNIGEMM_VK_MAINLOOP_PROBE"); probe && (*probe == '1' || *probe == '2')) {
    mainloop_probe_ = uint32_t(*probe - '0');
    std::fprintf(stderr,
                 "omnigemm: OMNIGEMM_VK_MAINLOOP_PROBE=%u: cooperative-matrix GEMMs measure a %s K loop and give WRONG results\n",
                 mainloop_probe_, mainloop_probe_ == 1 ? "load-free (shared -> fragments + MMA)" : "MMA-only");
  }
#endif
  if (!(s = create_queue_objects())) return s;
  if (!(s = pipelines_.create(dev_))) return s;
  return {};
}

Status VulkanBackend::check_problem(const Problem& p) const {
  constexpr int64_t kMax = (int64_t(1) << 31) - 1;  // shader indices are 32-bit
  for (const Operand* o : {&p.a, &p.b, &p.c, &p.d}) {
    if (!o->present) continue;
    // fp4 elements are indexed by nibble: twice their byte offset.
    const int64_t first = dtype_is_fp4(o->dtype) ? int64_t(o->mem.offset) * 2 : int64_t(o->mem.offset / uint64_t(dtype_bytes(o->dtype)));
    const int64_t end = first + o->extent_elements(p.batch);
    if (end > kMax)
      return error(StatusCode::unsupported, "vulkan: an operand spans " + std::to_string(end) +
                                                " elements; the Vulkan backend indexes buffers with 32 bits (at most 2^31 - 1 elements)");
    if (o->scale.present()) {
      const BlockScale& b = o->scale;
      const int64_t s_end = int64_t(b.mem.offset / uint64_t(b.bytes)) + (p.batch - 1) * b.batch_stride + b.extent();
      if (s_end > kMax)
        return error(StatusCode::unsupported, "vulkan: a scale tensor spans " + std::to_string(s_end) +
                                                  " scales; the Vulkan backend indexes buffers with 32 bits");
    }
  }
  return {};
}

// On an H100 (driver 580) the SM clock drops after about a second of idling and the Vulkan
// driver takes 0.5-1 s of back-to-back dispatches to raise it again; CPU implementations
// (lavapipe) run at the host's clocks.
bool VulkanBackend::usable(const KernelFamily* f) const {
  if (f == &coopmat_ || f == &coopmat_repack_) return dev_.coopmat.ok;
  if (f == &coopmat2_) return dev_.coopmat2.ok;
  return f == &portable_ || f == &skinny_;
}

double VulkanBackend::clock_ramp_ms() const { return dev_.cpu_device ? 0 : 1500; }

}  // namespace vulkan

bool vulkan_family_usable(Backend& be, const KernelFamily* f) {
  auto* vk = dynamic_cast<vulkan::VulkanBackend*>(&be);
  return vk && vk->usable(f);
}

Status make_vulkan_backend(const BackendOptions& opt, std::unique_ptr<Backend>& out) {
  auto be = std::make_unique<vulkan::VulkanBackend>();
  Status s = be->init(opt);
  if (!s) return s;
  out = std::move(be);
  return {};
}

}  // namespace omnigemm::detail
