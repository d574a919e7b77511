// Test hooks: warnings and errors the Khronos validation layer reported (when enabled with
// OMNIGEMM_VK_VALIDATION=1) in this process, over all Vulkan contexts; and the host's bf16
// re-encoding of a cooperative-matrix module (empty with `why` set where it refuses).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace omnigemm::detail {
int vulkan_validation_message_count();
std::vector<uint32_t> spirv_with_bf16_multiplicands(const uint32_t* words, size_t count, std::string* why);
}
