#!/usr/bin/env bash
# ctest "package": install the build into a temporary prefix (cmake --install --prefix), then
# build and run the stand-alone clients (a C++20 and a C11 program, each checking its GEMMs
# against a double loop) four ways: find_package(OmniGEMM) with OmniGEMM::omnigemm and with
# OmniGEMM::omnigemm_static, and pkg-config with omnigemm.pc and omnigemm_static.pc. Checks that
# the shared library exports only the og_* C API, that the static clients do not load
# libomnigemm.so, and that the prefix is relocatable for pkg-config (the .pc files are read
# from a copy of the prefix).   usage: run.sh <build dir> <this dir>
set -euo pipefail
build="$1"; here="$2"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
lib="$(find "$work/prefix" -name 'libomnigemm.so*' -type f | head -n 1)"
archive="$(find "$work/prefix" -name 'libomnigemm_static.a' -type f | head -n 1)"
[ -n "$lib" ] && [ -n "$archive" ] || { echo "package: libomnigemm.so or libomnigemm_static.a not installed"; exit 1; }
# A sanitizer build (OMNIGEMM_SANITIZE) installs an instrumented library: the clients must then
# load the ASan runtime first, so they are built with the same flags (and run under them too).
san=(); san_flags=""
if readelf -d "$lib" | grep -q 'libasan'; then
  san_flags="-fsanitize=address,undefined"
  san=(-DCMAKE_C_FLAGS="$san_flags" -DCMAKE_CXX_FLAGS="$san_flags")
  echo "package: sanitizer build, clients built with $san_flags"
fi

leaked="$(nm -D --defined-only "$lib" | awk '{print $3}' | grep -v '^og_' || true)"
if [ -n "$leaked" ]; then echo "libomnigemm exports non-API symbols:"; echo "$leaked" | head; exit 1; fi
echo "package: $(nm -D --defined-only "$lib" | grep -c ' og_') og_* symbols exported, nothing else"

# find_package: both targets.
cmake -S "$here" -B "$work/client" -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_BUILD_TYPE=Release "${san[@]}" >/dev/null
cmake --build "$work/client" >/dev/null
for exe in client_cpp client_c client_cpp_static client_c_static; do
  echo "package: find_package, $exe"
  "$work/client/$exe"
done
for exe in client_cpp_static client_c_static; do
  if readelf -d "$work/client/$exe" | grep -q 'libomnigemm\.so'; then echo "package: $exe loads libomnigemm.so"; exit 1; fi
done

# pkg-config, from a copy of the prefix (the .pc files locate the prefix from their own path).
cp -a "$work/prefix" "$work/moved"
pcdir="$(dirname "$(find "$work/moved" -name omnigemm.pc | head -n 1)")"
export PKG_CONFIG_PATH="$pcdir"
libdir="$(pkg-config --variable=libdir omnigemm)"
[ "$(cd "$libdir" && pwd -P)" = "$(cd "$(dirname "$(find "$work/moved" -name 'libomnigemm.so' | head -n 1)")" && pwd -P)" ] ||
  { echo "package: omnigemm.pc's libdir $libdir is not the moved prefix's"; exit 1; }
mkdir -p "$work/pc"
# shellcheck disable=SC2046,SC2086
{
  cc -std=c11 $san_flags "$here/client.c" -o "$work/pc/client_c" $(pkg-config --cflags --libs omnigemm) -lm -Wl,-rpath,"$libdir"
  c++ -std=c++20 $san_flags "$here/client.cpp" -o "$work/pc/client_cpp" $(pkg-config --cflags --libs omnigemm) -Wl,-rpath,"$libdir"
  cc -std=c11 $san_flags "$here/client.c" -o "$work/pc/client_c_static" $(pkg-config --cflags --libs omnigemm_static)
  c++ -std=c++20 $san_flags "$here/client.cpp" -o "$work/pc/client_cpp_static" $(pkg-config --cflags --libs omnigemm_static)
}
for exe in client_c client_cpp client_c_static client_cpp_static; do
  echo "package: pkg-config, $exe"
  "$work/pc/$exe"
done
if readelf -d "$work/pc/client_c_static" | grep -q 'libomnigemm\.so'; then echo "package: static pkg-config client loads libomnigemm.so"; exit 1; fi
echo "package: 8 clients built and run (find_package x 2 targets, pkg-config x 2 files)"
