// The kernel symbols of one row of families/gfx90a_mfma.inc and one multiplicand type (f16 or
// bf16), e.g. og_gfx90a_mfma_f16_128x256x16_w4_e2 (vector loaders) and
// og_gfx90a_mfma_f16_128x256x16_w4_e2_gather (gathering loader). The device code defines the
// kernels under these names (instances.hip) and the host looks them up by the same names
// (family.cpp), both from the table's rows, so a row is its instantiations and its entry of the
// launch dispatch.
#ifndef OMNIGEMM_HIP_SYMBOLS_H
#define OMNIGEMM_HIP_SYMBOLS_H

#define OG_GFX90A_SYMBOL(type, bm, bn, bk, waves, wpe) og_gfx90a_mfma_##type##_##bm##x##bn##x##bk##_w##waves##_e##wpe
#define OG_GFX90A_GATHER_SYMBOL(type, bm, bn, bk, waves, wpe) \
  og_gfx90a_mfma_##type##_##bm##x##bn##x##bk##_w##waves##_e##wpe##_gather
#define OG_GFX90A_STRING2(x) #x
#define OG_GFX90A_STRING(x) OG_GFX90A_STRING2(x)

#endif  // OMNIGEMM_HIP_SYMBOLS_H
