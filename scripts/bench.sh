#!/usr/bin/env bash
# The main job: builds OmniGEMM and runs a backend comparison on the hardware present (CPU
# with OpenBLAS as baseline, Vulkan on any device incl. lavapipe, CUDA with cuBLAS when an
# NVIDIA GPU is present). Writes a table, CSV, JSON and plots to bench-out/.
#   usage: bash scripts/bench.sh [omnigemm-bench args...]   (default: a quick sweep)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${OMNIGEMM_BUILD_DIR:-$root/build}"

bash "$root/scripts/bootstrap.sh"
# shellcheck disable=SC1091
source "${OMNIGEMM_CACHE:-$HOME/.cache/omnigemm}/env.sh"

cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DOMNIGEMM_BUILD_TESTS=OFF
cmake --build "$build" -j "$(nproc)" --target omnigemm-bench
if [ "$#" -eq 0 ]; then set -- --quick; fi
"$build/bench/omnigemm-bench" --out "$root/bench-out" "$@"
