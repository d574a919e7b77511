// Device quantisation on Vulkan (og_quantize / og_dequantize): passes of
// shaders/block_quantize.comp, whose arithmetic is omnigemm/block_formats.h's, so codes and
// scales are bit-exact with the host quantiser. Recorded like a GEMM: into the caller's command
// buffer (stream), this thread's timing capture, or the backend's own, submitted and waited for.
#include <algorithm>
#include <bit>
#include <cstring>

#include "vulkan_backend.hpp"

namespace omnigemm::detail::vulkan {

namespace {

// shaders/block_quantize.comp's push constants.
struct QuantPush {
  uint32_t rows, k;
  uint32_t p_sr, p_sk, p_off;
  uint32_t e_sr, e_sk, e_off;
  uint32_t s_off, s_ld;
  uint32_t s_rows, s_cols;
  uint32_t global_bits;
  uint32_t count;
};
static_assert(sizeof(QuantPush) <= sizeof(PushConstants), "within the pipeline layout's push-constant range");

enum : uint32_t { kQuantize = 0, kDequantize = 1, kAmax = 2, kZeroScales = 3, kBlockAmax = 4, kBlockScale = 5 };
constexpr int64_t kMaxIndex = (int64_t(1) << 31) - 1;

VkBuffer buffer_of(const og_memory& m) { return reinterpret_cast<VkBuffer>(uintptr_t(m.vk_buffer)); }

// First element index of an operand's view in its buffer (fp4: the nibble index).
int64_t first_element(const Operand& o) {
  return dtype_is_fp4(o.dtype) ? int64_t(o.mem.offset) * 2 : int64_t(o.mem.offset / uint64_t(dtype_bytes(o.dtype)));
}

// Every index the passes compute stays within 32 bits.
Status check_indices(const Operand& plain, const Operand& blocked) {
  const BlockScale& s = blocked.scale;
  const int64_t ends[] = {first_element(plain) + plain.extent_elements(1), first_element(blocked) + blocked.extent_elements(1),
                          int64_t(s.mem.offset / uint64_t(s.bytes)) + s.extent(), plain.rows * plain.cols};
  for (int64_t e : ends)
    if (e > kMaxIndex)
      return error(StatusCode::unsupported, "vulkan: device quantisation indexes buffers with 32 bits (at most 2^31 - 1 elements)");
  return {};
}

}  // namespace

Status VulkanBackend::record_block_pass(uint32_t op, const Operand& plain, const Operand& blocked, bool operand_b,
                                        VkBuffer amax, uint32_t global_bits, uint64_t count, void* stream) {
  if (count == 0) return {};
  const BlockScale& s = blocked.scale;
  Specialization spec;
  const uint32_t values[5] = {op, uint32_t(plain.dtype), uint32_t(blocked.dtype), uint32_t(s.mode), uint32_t(s.layout)};
  std::copy(values, values + 5, spec.values);
  spec.count = 5;
  QuantPush pc{};
  pc.rows = uint32_t(operand_b ? plain.cols : plain.rows);
  pc.k = uint32_t(operand_b ? plain.rows : plain.cols);
  pc.p_sr = uint32_t(operand_b ? plain.stride_col : plain.stride_row);
  pc.p_sk = uint32_t(operand_b ? plain.stride_row : plain.stride_col);
  pc.p_off = uint32_t(first_element(plain));
  pc.e_sr = uint32_t(operand_b ? blocked.stride_col : blocked.stride_row);
  pc.e_sk = uint32_t(operand_b ? blocked.stride_row : blocked.stride_col);
  pc.e_off = uint32_t(first_element(blocked));
  pc.s_off = uint32_t(s.mem.offset / uint64_t(s.bytes));
  pc.s_ld = uint32_t(s.ld);
  pc.s_rows = uint32_t(s.rows);
  pc.s_cols = uint32_t(s.cols);
  pc.global_bits = global_bits;
  pc.count = uint32_t(count);
  // Workgroups of 64 over a 2D grid within the device's counts.
  const uint64_t groups = (count + 63) / 64;
  const uint64_t gx = std::min<uint64_t>(groups, dev_.max_groups[0]), gy = (groups + gx - 1) / gx;
  if (gy > dev_.max_groups[1]) return error(StatusCode::unsupported, "vulkan: device quantisation needs more workgroups than the device has");

  VkPipeline pipeline;
  PipelineSet::Hold hold;
  Status st = pipelines_.set().acquire(Shader::block_quantize, spec, stream ? PipelineSet::Use::caller : PipelineSet::Use::submit,
                                       pipeline, hold);
  if (!st) return st;
  const Vk& vk = dev_.vk;
  std::lock_guard<std::mutex> lock(mutex_);
  const bool capturing = capture_ != VK_NULL_HANDLE && capture_thread_ == std::this_thread::get_id();
  // The hold ends when what was recorded can no longer run: after our own submission, after the
  // capture's (time_ms), or at once for a caller's command buffer.
  struct Release {
    PipelineSet& set;
    PipelineSet::Hold& hold;
    ~Release() { set.release(hold); }
  } release{pipelines_.set(), hold};
  if (capturing) {
    capture_holds_.push_back(hold);
    hold = {};
  }
  const DescriptorUse use = stream ? DescriptorUse::caller : capturing ? DescriptorUse::capture : DescriptorUse::own;
  const VkBuffer pb = buffer_of(plain.mem), eb = buffer_of(blocked.mem), sb = buffer_of(s.mem);
  const VkBuffer aux = amax ? amax : pb;
  const VkBuffer per_binding[kBindings] = {pb, pb, pb, pb, pb, eb, pb, pb, pb, pb, pb, pb, sb, sb, aux, pb, pb};
  const VkDeviceSize offsets[kBindings] = {};
  VkDescriptorSet set;
  if (!(st = descriptor_set_with(per_binding, use, set, offsets))) return st;
  VkCommandBuffer cmd = stream ? static_cast<VkCommandBuffer>(stream) : capturing ? capture_ : VK_NULL_HANDLE;
  const bool own = cmd == VK_NULL_HANDLE;
  if (own && !(st = begin(cmd_))) return st;
  if (own) cmd = cmd_;
  // Earlier passes and GEMMs in the same command buffer write what this one reads or writes.
  VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER, nullptr, VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
                          VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT};
  vk.vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                          VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &barrier, 0, nullptr, 0, nullptr);
  vk.vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
  vk.vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipelines_.layout(), 0, 1, &set, 0, nullptr);
  vk.vkCmdPushConstants(cmd, pipelines_.layout(), VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof pc, &pc);
  vk.vkCmdDispatch(cmd, uint32_t(gx), uint32_t(gy), 1);
  if (own) return submit_and_wait(cmd_);
  return {};
}

Status VulkanBackend::quantize(const Operand& src, const Operand& dst, bool operand_b, float& global, void* stream) {
  if (Status s = check_indices(src, dst); !s) return s;
  const BlockScale& sc = dst.scale;
  if (global == 0.0f) {  // nvfp4's global factor from the tensor's largest finite |x|, read back
    if (stream)
      return error(StatusCode::invalid_argument, "vulkan: an nvfp4 quantisation that chooses its global factor reads it back "
                                                 "from the device: pass stream NULL, or give dst.scale.global");
    og_memory word{};
    Status s = allocate(4, word);
    if (!s) return s;
    uint32_t amax = 0;
    if ((s = upload(word, &amax, 4)))
      s = record_block_pass(kAmax, src, dst, operand_b, buffer_of(word), 0, uint64_t(src.rows * src.cols), nullptr);
    if (s) s = download(&amax, word, 4);
    release(word);
    if (!s) return s;
    const uint32_t g = amax == 0 ? 0u : og_bf_encode_f32(amax, 21u, 7);  // amax / 2688, as the host computes it
    global = g == 0 ? 1.0f : std::bit_cast<float>(g);
  }
  // Units of one row x one K block; 128 x 128 scales first gather their rows' maxima.
  const uint64_t rows = uint64_t(operand_b ? src.cols : src.rows), units = rows * uint64_t(sc.cols);
  const uint32_t g = std::bit_cast<uint32_t>(global);
  Status s;
  if (sc.layout == OG_SCALE_PACKED || sc.mode == OG_SCALE_MODE_BLK128x128_F32)  // packed padding / the maxima start at 0
    s = record_block_pass(kZeroScales, src, dst, operand_b, VK_NULL_HANDLE, 0,
                          uint64_t(sc.layout == OG_SCALE_PACKED ? sc.extent() : sc.rows * sc.cols), stream);
  if (s && sc.mode == OG_SCALE_MODE_BLK128x128_F32) {
    s = record_block_pass(kBlockAmax, src, dst, operand_b, VK_NULL_HANDLE, g, units, stream);
    if (s) s = record_block_pass(kBlockScale, src, dst, operand_b, VK_NULL_HANDLE, g, uint64_t(sc.rows * sc.cols), stream);
  }
  if (s) s = record_block_pass(kQuantize, src, dst, operand_b, VK_NULL_HANDLE, g, units, stream);
  return s;
}

Status VulkanBackend::dequantize(const Operand& src, const Operand& dst, bool operand_b, void* stream) {
  if (Status s = check_indices(dst, src); !s) return s;
  return record_block_pass(kDequantize, dst, src, operand_b, VK_NULL_HANDLE, std::bit_cast<uint32_t>(src.scale.global),
                           uint64_t(dst.rows * dst.cols), stream);
}

}  // namespace omnigemm::detail::vulkan
