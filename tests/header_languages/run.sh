#!/usr/bin/env bash
# ctest "header_languages": the tile scheduler, epilogue and block-format headers must compile as
# C++ (the core tests do that), CUDA, HIP and GLSL. A language whose compiler is missing here is reported
# by name as SKIPPED; every compiler that is present must accept it.
#   usage: run.sh <include dir> <this dir>
set -uo pipefail
inc="$1"; here="$2"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
fail=0
check() {  # name, compiler, command...
  local name="$1" tool="$2"; shift 2
  if ! command -v "$tool" >/dev/null 2>&1 && [ ! -x "$tool" ]; then
    echo "SKIPPED $name: $tool not found"; return
  fi
  if "$@" >"$work/$name.log" 2>&1; then echo "ok $name ($tool)"; else echo "FAILED $name:"; cat "$work/$name.log"; fail=1; fi
}
nvcc="${CUDACXX:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}"
check cuda "$nvcc" "$nvcc" -std=c++17 -I"$inc" -c "$here/schedule_use.cu" -o "$work/cuda.o" \
  -gencode arch=compute_80,code=sm_80
check hip hipcc hipcc -std=c++17 --offload-arch=gfx90a -x hip -I"$inc" -c "$here/schedule_use.cu" -o "$work/hip.o"
glslang="${OMNIGEMM_GLSLANG:-$(command -v glslangValidator || echo glslangValidator)}"
check glsl "$glslang" "$glslang" -V --target-env vulkan1.1 -I"$inc" "$here/schedule_use.comp" -o "$work/glsl.spv"
exit $fail
