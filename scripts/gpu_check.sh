#!/usr/bin/env bash
# The GPU check: on a machine with an NVIDIA GPU, runs the test suites (core, CUDA, Vulkan on the
# GPU's driver), compute-sanitizer memcheck and racecheck on a representative subset, the SASS
# instruction mix of the CUDA kernels, omnigemm-bench against cuBLAS in the same run, and
# omnigemm-conformance. Everything lands in <out> as summary.txt plus logs.tar.gz. A Vulkan
# loader carried as Debian packages in .gl/*.deb (for machines without one) is unpacked first.
#   usage (from the repo root, with a build folder made by scripts/test.sh or plain CMake):
#     bash scripts/gpu_check.sh <build dir> <out dir> [bench args...]
#   GPU_CHECK_PARTS picks what runs (default: all of "tests sanitizers sass bench conformance"),
#   GPU_CHECK_TESTS which test executables (default "core cuda vulkan");
#   all of it takes more than one 10-minute device call, so split it, e.g.
#   GPU_CHECK_PARTS="tests sanitizers sass" then GPU_CHECK_PARTS="bench conformance".
set -uo pipefail
build="$1"; out="$2"; shift 2
parts="${GPU_CHECK_PARTS:-tests sanitizers sass bench conformance}"
part() { case " $parts " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
logs="$(mktemp -d)"
summary="$out/summary.txt"
say() { echo "$*" | tee -a "$summary"; }

mkdir -p "$out"
if compgen -G ".gl/*.deb" > /dev/null; then for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig; fi
say "== $(date -u '+%Y-%m-%d %H:%M UTC')  $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
cublas_dir="$(python3 -c 'import nvidia.cublas, os; print(os.path.join(os.path.dirname(nvidia.cublas.__file__), "lib"))' 2>/dev/null || true)"
export OMNIGEMM_CUBLAS_DIR="${OMNIGEMM_CUBLAS_DIR:-$cublas_dir}"
say "cuBLAS from: ${OMNIGEMM_CUBLAS_DIR:-<search path>}"

part tests && for t in ${GPU_CHECK_TESTS:-core cuda vulkan}; do
  "$build/tests/test_$t" > "$logs/test_$t.log" 2>&1
  say "test_$t rc=$? $(grep -E 'test cases:' "$logs/test_$t.log" | tail -1)"
  grep -E "SKIPPED" "$logs/test_$t.log" | head -3 | tee -a "$summary"
done
part sanitizers && for tool in memcheck racecheck; do
  compute-sanitizer --tool "$tool" "$build/tests/test_cuda" -tc='*device pointers*,*sanitizer subset*' > "$logs/sanitizer_$tool.log" 2>&1
  say "compute-sanitizer $tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$logs/sanitizer_$tool.log" | tail -1)"
done
part sass && cuobjdump --dump-sass "$build/tests/test_cuda" > "$logs/sass.txt" 2>&1 &&
  say "SASS instruction counts: HGMMA=$(grep -c HGMMA "$logs/sass.txt") QGMMA=$(grep -c QGMMA "$logs/sass.txt") HMMA=$(grep -c HMMA "$logs/sass.txt") LDSM=$(grep -c LDSM "$logs/sass.txt") LDGSTS=$(grep -c LDGSTS "$logs/sass.txt") UTMALDG=$(grep -c UTMALDG "$logs/sass.txt") FFMA=$(grep -c FFMA "$logs/sass.txt")"

if part bench; then
  "$build/bench/omnigemm-bench" --out "$logs/bench" "$@" > "$logs/bench.log" 2>&1
  say "omnigemm-bench rc=$?"
  tail -n 40 "$logs/bench.log" | tee -a "$summary"
fi
if part conformance; then
  "$build/bench/omnigemm-conformance" --seed 7 --out "$logs/conformance" > "$logs/conformance.log" 2>&1
  say "omnigemm-conformance rc=$?"
  tail -n 15 "$logs/conformance.log" | tee -a "$summary"
fi
rm -f "$logs/sass.txt"  # the full dump is larger than what a device call brings back
tar -C "$logs" -czf "$out/logs.tar.gz" .
