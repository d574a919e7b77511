// og_gemm_explain: what a call would run and why, as the public og_explanation.
#pragma once

#include "backend.hpp"
#include "tuner.hpp"

namespace omnigemm::detail {

// Fills `out` for the validated problem `p` (never runs or times anything): the choice the tuner
// would make without timing, its planned launch, the cost model's runners-up and why each other
// family of the backend does not run it.
Status explain(Backend& be, Tuner& tuner, const Problem& p, og_explanation& out);

}  // namespace omnigemm::detail
