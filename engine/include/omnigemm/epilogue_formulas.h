/* The epilogue's formulas over the real type OG_REAL, with OG_TANH and OG_EXP its tanh and exp.
 * Not a header of its own: omnigemm/epilogue.h includes it once for float (every language) and,
 * in C++, CUDA and HIP, once more for double (overloads), so the float64 test reference
 * evaluates the very expressions the backends evaluate in f32. Same subset as epilogue.h.
 *
 * The float expressions are written exactly as the backends computed them before this header
 * (same constants, same association), so results are bit-identical to those. */

OG_FUNC OG_REAL og_relu(OG_REAL x) { return x > OG_REAL(0) ? x : OG_REAL(0); }

OG_FUNC OG_REAL og_leaky_relu(OG_REAL x, OG_REAL slope) { return x >= OG_REAL(0) ? x : slope * x; }

/* 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))) */
OG_FUNC OG_REAL og_gelu_tanh(OG_REAL x) {
  return OG_REAL(0.5) * x * (OG_REAL(1) + OG_TANH(OG_REAL(0.7978845608) * (x + OG_REAL(0.044715) * x * x * x)));
}

/* x / (1 + exp(-x)) */
OG_FUNC OG_REAL og_silu(OG_REAL x) { return x / (OG_REAL(1) + OG_EXP(-x)); }

/* Activation `act` (OG_EPI_ACT_*); `slope` is leaky_relu's. */
OG_FUNC OG_REAL og_activate(int act, OG_REAL x, OG_REAL slope) {
  if (act == OG_EPI_ACT_RELU) return og_relu(x);
  if (act == OG_EPI_ACT_LEAKY_RELU) return og_leaky_relu(x, slope);
  if (act == OG_EPI_ACT_GELU_TANH) return og_gelu_tanh(x);
  if (act == OG_EPI_ACT_SILU) return og_silu(x);
  return x;
}

/* ((alpha * acc) + beta * c) + bias, in this order. A term that is absent is not added at all
 * (adding zero would turn a -0 result into +0): has_c false ignores beta and c, has_bias false
 * ignores bias. */
OG_FUNC OG_REAL og_epilogue_sum(OG_REAL alpha, OG_REAL acc, bool has_c, OG_REAL beta, OG_REAL c, bool has_bias,
                                OG_REAL bias) {
  OG_REAL v = alpha * acc;
  if (has_c) v += beta * c;
  if (has_bias) v += bias;
  return v;
}

/* The whole epilogue before rounding: act(alpha * acc + beta * c + bias). */
OG_FUNC OG_REAL og_epilogue_apply(OG_REAL alpha, OG_REAL acc, bool has_c, OG_REAL beta, OG_REAL c, bool has_bias,
                                  OG_REAL bias, int act, OG_REAL slope) {
  return og_activate(act, og_epilogue_sum(alpha, acc, has_c, beta, c, has_bias, bias), slope);
}
