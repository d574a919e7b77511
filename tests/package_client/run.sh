#!/usr/bin/env bash
# ctest "package": install the build into a temporary prefix, build the stand-alone clients
# against it with find_package(OmniGEMM), run them, and check that the shared library exports
# only the og_* C API.   usage: run.sh <build dir> <this dir>
set -euo pipefail
build="$1"; here="$2"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
lib="$(find "$work/prefix" -name 'libomnigemm.so*' -type f | head -n 1)"
# A sanitizer build (OMNIGEMM_SANITIZE) installs an instrumented library: the clients must then
# load the ASan runtime first, so they are built with the same flags (and run under them too).
san=()
if readelf -d "$lib" | grep -q 'libasan'; then
  san=(-DCMAKE_C_FLAGS=-fsanitize=address,undefined -DCMAKE_CXX_FLAGS=-fsanitize=address,undefined)
  echo "package: sanitizer build, clients built with -fsanitize=address,undefined"
fi
cmake -S "$here" -B "$work/client" -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_BUILD_TYPE=Release "${san[@]}" >/dev/null
cmake --build "$work/client" >/dev/null
leaked="$(nm -D --defined-only "$lib" | awk '{print $3}' | grep -v '^og_' || true)"
if [ -n "$leaked" ]; then echo "libomnigemm exports non-API symbols:"; echo "$leaked" | head; exit 1; fi
echo "package: $(nm -D --defined-only "$lib" | grep -c ' og_') og_* symbols exported, nothing else"
"$work/client/client_cpp"
"$work/client/client_c"
