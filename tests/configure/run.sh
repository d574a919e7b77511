#!/usr/bin/env bash
# ctest "configure": the plain CMake path a user outside scripts/ takes. Configures the project
# with CMake's default generator (Unix Makefiles) and with Ninja, each with the backends this
# machine detects (CUDA included where nvcc is found) and once with CUDA switched off, then
# compiles one engine source file with each generator's build files, so the generated compile
# lines are exercised too. A full build is what the other tests already do (with Ninja).
#   usage: run.sh <source dir>
set -euo pipefail
src="$1"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
cuda="not found"
if command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; then cuda="found"; fi
echo "configure: nvcc $cuda"

configure() {  # <name> <generator> [cmake args...]
  local name="$1" gen="$2"; shift 2
  if ! cmake -S "$src" -B "$work/$name" -G "$gen" "$@" > "$work/$name.log" 2>&1; then
    echo "configure: FAILED: -G \"$gen\" $*"; tail -n 30 "$work/$name.log"; exit 1
  fi
  echo "configure: ok: -G \"$gen\" $* ($(grep -E -- '--   (CUDA|Vulkan):' "$work/$name.log" | tr -s ' ' | tr '\n' ' '))"
}

configure make "Unix Makefiles"
configure ninja Ninja
if [ "$cuda" = found ]; then
  configure make-nocuda "Unix Makefiles" -DOMNIGEMM_WITH_CUDA=OFF
  configure ninja-nocuda Ninja -DOMNIGEMM_WITH_CUDA=OFF
fi

# One object each: engine/src/validate.cpp (C++20) through the generated rules.
make -s -C "$work/make/engine" src/validate.cpp.o > "$work/make-build.log" 2>&1 ||
  { echo "configure: FAILED: make engine/src/validate.cpp.o"; tail -n 30 "$work/make-build.log"; exit 1; }
ninja -C "$work/ninja" engine/CMakeFiles/omnigemm_engine.dir/src/validate.cpp.o > "$work/ninja-build.log" 2>&1 ||
  { echo "configure: FAILED: ninja validate.cpp.o"; tail -n 30 "$work/ninja-build.log"; exit 1; }
echo "configure: engine/src/validate.cpp compiled through both generators' rules"
