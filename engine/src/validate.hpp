// Problem validation shared by all backends: turns a public og_gemm_desc into a Problem or
// explains, in one sentence naming the operand and the rule, why it cannot.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "backend.hpp"
#include "problem.hpp"

namespace omnigemm::detail {

// Checks everything that does not depend on the backend: sizes (negative, overflowing),
// shapes, leading dimensions, batch strides, dtypes, missing or null memory, element
// alignment, output aliasing an input, epilogue fields and a forced config's syntax.
Status validate(const og_gemm_desc& desc, Problem& out);

// One matrix view folded into an Operand (sizes, layout, ld, transpose: op() applied; the
// scales are resolved separately); is_output forbids a transposed view.
Status fold_view(const og_matrix& v, const char* name, bool is_output, Operand& o);
// o's memory: kind, null, element alignment and extent over `batches`; its scale tensor's too.
Status check_operand_memory(const Operand& o, int64_t batches, const char* name);
// Whether the bytes of x (its elements, or its scales when x_scales) and of y overlap.
bool operands_overlap(const Operand& x, bool x_scales, const Operand& y, bool y_scales, int64_t batches);

// The backend-dependent part: memory kinds (unless the engine stages host memory itself),
// dtype combinations, then backend.check_problem().
Status check_backend_support(const Backend& backend, const Problem& p, bool host_staging = false);

// The integer a caller stored in a C enum field. Reading an out-of-range value through the enum
// type is undefined in C++ (UBSan reports it), and rejecting such values is the point of the checks.
template <class E>
int64_t enum_int(const E& e) {
  std::underlying_type_t<E> v;
  std::memcpy(&v, &e, sizeof v);
  return int64_t(std::make_signed_t<decltype(v)>(v));
}

// "f32, f16, bf16" for a dtype bit mask.
std::string dtype_list(uint32_t mask);

}  // namespace omnigemm::detail
