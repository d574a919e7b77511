// Test hooks: warnings and errors the Khronos validation layer reported (when enabled with
// OMNIGEMM_VK_VALIDATION=1) in this process, over all Vulkan contexts; the host's bf16
// re-encoding of a cooperative-matrix module (empty with `why` set where it refuses); and every
// kernel family of a Vulkan backend, including those its device cannot run (empty for a backend
// of another kind), so that tests can ask each for its refusal.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "backend.hpp"

namespace omnigemm::detail {
int vulkan_validation_message_count();
std::vector<uint32_t> spirv_with_bf16_multiplicands(const uint32_t* words, size_t count, std::string* why);
bool vulkan_family_usable(Backend& be, const KernelFamily* f);  // the device runs the family at all
}
