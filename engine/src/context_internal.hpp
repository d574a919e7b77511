// Access from in-tree tools (bench, conformance) to a context's internals: its Backend (device
// buffers, timing) and its Tuner (the config a plain og_gemm call would use). Not installed, not
// part of the public API; only code linked against omnigemm_static can use it.
#pragma once

#include "backend.hpp"
#include "tuner.hpp"

namespace omnigemm::detail {

Backend& context_backend(og_context* ctx);
Tuner& context_tuner(og_context* ctx);

}  // namespace omnigemm::detail
