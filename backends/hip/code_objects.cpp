// Embeds the gfx90a code objects (raw ELF, one per multiplicand type) as read-only data. The
// build passes their paths as OG_HIP_CO_F16 and OG_HIP_CO_BF16 and makes this file depend on them.
#include "code_objects.hpp"

#if !defined(OG_HIP_CO_F16) || !defined(OG_HIP_CO_BF16)
#error "OG_HIP_CO_F16 and OG_HIP_CO_BF16 name the code objects to embed"
#endif

#define OG_HIP_EMBED(symbol, path)                          \
  asm(".pushsection .rodata.omnigemm_hip,\"a\",@progbits\n" \
      ".balign 64\n"                                        \
      ".hidden " #symbol "\n"                               \
      #symbol ":\n"                                         \
      ".incbin \"" path "\"\n"                              \
      ".hidden " #symbol "_end\n"                           \
      #symbol "_end:\n"                                     \
      ".byte 0\n"                                           \
      ".popsection\n");
OG_HIP_EMBED(og_hip_gfx90a_f16, OG_HIP_CO_F16)
OG_HIP_EMBED(og_hip_gfx90a_bf16, OG_HIP_CO_BF16)

extern "C" const unsigned char og_hip_gfx90a_f16[], og_hip_gfx90a_f16_end[];
extern "C" const unsigned char og_hip_gfx90a_bf16[], og_hip_gfx90a_bf16_end[];

namespace omnigemm::detail {

CodeObject gfx90a_code_object(bool bf16) {
  if (bf16) return {og_hip_gfx90a_bf16, size_t(og_hip_gfx90a_bf16_end - og_hip_gfx90a_bf16)};
  return {og_hip_gfx90a_f16, size_t(og_hip_gfx90a_f16_end - og_hip_gfx90a_f16)};
}

}  // namespace omnigemm::detail
