// Unaligned 8-element runs of 16-bit data read as aligned 16-byte vectors: shared by the GEMM
// shaders (through gemm_common.glsl) and the operand copy (operand_copy.comp).
// Elements r..r+7 (r = 1..7) of the 16 16-bit elements in lo, hi (two aligned 16-byte vectors,
// element e in the low half of word e / 2 first): the unaligned vector they hold.
uvec4 shift_window(uvec4 lo, uvec4 hi, uint r) {
  const uint s = r / 2u;
  const uvec4 w1 = uvec4(lo.yzw, hi.x), w2 = uvec4(lo.zw, hi.xy), w3 = uvec4(lo.w, hi.xyz);
  const uvec4 b = s == 0u ? lo : s == 1u ? w1 : s == 2u ? w2 : w3;
  if ((r & 1u) == 0u) return b;
  const uvec4 n = s == 0u ? w1 : s == 1u ? w2 : s == 2u ? w3 : hi;
  return (b >> 16) | (n << 16);
}
