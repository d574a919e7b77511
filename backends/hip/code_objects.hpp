// The gfx90a code objects of the hip.gfx90a_mfma kernels, compiled at build time from
// gfx90a/instances.hip and embedded in the library (code_objects.cpp).
#pragma once
#include <cstddef>

namespace omnigemm::detail {

struct CodeObject {
  const unsigned char* data;
  size_t size;
};

// The kernels with f16 multiplicands (bf16 = false) or bf16 multiplicands.
CodeObject gfx90a_code_object(bool bf16);

}  // namespace omnigemm::detail
