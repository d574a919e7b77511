#!/usr/bin/env bash
# ctest "readme_examples": the complete programs in README.md (its ```c and ```cpp blocks that
# define main) compile with -Wall -Wextra -Werror against the public headers, link to the shared
# library and run successfully (each checks its own result and exits non-zero on a mismatch).
#   usage: readme_examples.sh <README.md> <include dir> <dir of libomnigemm.so> <C compiler> <C++ compiler> [<programs expected, default 2>]
set -euo pipefail
readme="$1"; include="$2"; libdir="$3"; cc="$4"; cxx="$5"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
# Split the fenced blocks into files example_<n>.<lang>.
awk -v dir="$work" '
  /^```(c|cpp)$/ { lang = substr($0, 4); n++; file = dir "/example_" n "." lang; inside = 1; next }
  /^```/ { inside = 0; next }
  inside { print > file }' "$readme"
# A sanitizer build's library needs the ASan runtime loaded first: build the examples likewise.
san=""
if readelf -d "$libdir/libomnigemm.so" | grep -q libasan; then san="-fsanitize=address,undefined"; fi
count=0
for f in "$work"/example_*; do
  grep -q 'int main' "$f" || continue
  count=$((count + 1))
  case "$f" in
    *.cpp) "$cxx" $san -std=c++20 -Wall -Wextra -Werror -I"$include" "$f" -o "$f.bin" -L"$libdir" -lomnigemm -Wl,-rpath,"$libdir" ;;
    *.c) "$cc" $san -std=c11 -Wall -Wextra -Werror -I"$include" "$f" -o "$f.bin" -L"$libdir" -lomnigemm -Wl,-rpath,"$libdir" -lm ;;
  esac
  echo "readme_examples: $(basename "$f") compiled warning-free; running:"
  "$f.bin"
done
expected="${6:-2}"
[ "$count" -ge "$expected" ] || { echo "readme_examples: expected $expected programs in $readme, found $count"; exit 1; }
echo "readme_examples: $count programs compiled and ran"
