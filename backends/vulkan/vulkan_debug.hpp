// Test hook: warnings and errors the Khronos validation layer reported (when enabled with
// OMNIGEMM_VK_VALIDATION=1) in this process, over all Vulkan contexts.
#pragma once

namespace omnigemm::detail {
int vulkan_validation_message_count();
}
