#!/usr/bin/env bash
# Builds OmniGEMM with every backend this machine can build and runs all tests (ctest, doctest
# counts printed per test executable). Installs what is missing first (scripts/bootstrap.sh,
# apt as root). Idempotent: a second run rebuilds only what changed.
#   usage: bash scripts/test.sh [extra cmake args...]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${OMNIGEMM_BUILD_DIR:-$root/build}"

bash "$root/scripts/bootstrap.sh"
# shellcheck disable=SC1091
source "${OMNIGEMM_CACHE:-$HOME/.cache/omnigemm}/env.sh"

cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@"
cmake --build "$build" -j "$(nproc)"
# Vulkan tests run on whatever Vulkan device exists (lavapipe on a machine without a GPU) with
# the Khronos validation layer on; GPU backends without a device report their tests as skipped.
export OMNIGEMM_VK_VALIDATION="${OMNIGEMM_VK_VALIDATION:-1}"
ctest --test-dir "$build" --output-on-failure -V
