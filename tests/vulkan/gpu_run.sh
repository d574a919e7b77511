#!/usr/bin/env bash
# One visit to the GPU machine for the Vulkan backend: unpack the carried loader, run test_vulkan
# on the NVIDIA driver (the families vulkan.coopmat and vulkan.coopmat2 are exercised there), then time OmniGEMM's
# Vulkan GEMM (timestamp queries, omnigemm-bench) and cuBLAS (torch.matmul, CUDA events) in the
# same run.
#   usage (repo root, build-vk and .gl carried): bash tests/vulkan/gpu_run.sh build-vk "$OUT"
set -uo pipefail
build="$1"; out="$2"
for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
if ! ldconfig -p | grep -q libvulkan.so.1; then echo "no libvulkan after unpacking .gl"; fi
{
  echo "== $(date -u '+%Y-%m-%d %H:%M UTC') $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
  timeout 400 "$build/tests/test_vulkan" > "$out/test_vulkan.log" 2>&1
  echo "test_vulkan rc=$? $(grep -E 'test cases:|assertions:' "$out/test_vulkan.log" | tr '\n' ' ')"
  grep -E "SKIPPED|ERROR|FAILED" "$out/test_vulkan.log" | head -20
  for cfg in coopmat:128x128x32-g8-s2-w4 coopmat:128x128x32-g8-s2-w8 coopmat:128x128x64-g8-s1-w4 coopmat:128x256x32-g8-s1-w8 \
             coopmat:256x128x32-g8-s1-w8 coopmat2:128x128x32-g8-s1-w4 coopmat2:128x128x64-g8-s1-w8 coopmat2:128x256x32-g8-s1-w8 \
             coopmat2:128x256x64-g8-s1-w8 coopmat2:256x128x32-g8-s1-w8; do
    echo "-- bench f16 coopmat $cfg"
    timeout 120 "$build/bench/omnigemm-bench" --backend vulkan --sizes 2048,4096,8192 --dtype f16 --config "$cfg" \
      --no-vendor --no-plot --budget-ms 300 --out "$out/bench_${cfg/:/_}" 2>&1 | grep -E "^backend|^vulkan|rror" | head -12
  done
  for cfg in coopmat:128x128x32-g8-s2-w4 coopmat:128x256x32-g8-s1-w8 coopmat2:128x128x64-g8-s1-w8 coopmat2:128x256x64-g8-s1-w8; do
    echo "-- bench bf16 coopmat $cfg"
    timeout 120 "$build/bench/omnigemm-bench" --backend vulkan --sizes 2048,4096,8192 --dtype bf16 --config "$cfg" \
      --no-vendor --no-plot --budget-ms 300 --out "$out/bench_bf16_${cfg/:/_}" 2>&1 | grep -E "^backend|^vulkan|rror" | head -12
  done
  # Row-major B with a 16 KiB row stride (8192 f16) ran 4x slower on coopmat than at 6144 or with
  # column-major B: the same tile at a non-power-of-two N or K tells address pattern from size.
  echo "-- coopmat stride probe: 8192^3 vs N or K = 8128 (row-major B)"
  timeout 120 "$build/bench/omnigemm-bench" --backend vulkan --shapes 8192x8192x8192,8192x8128x8192,8192x8192x8128 --dtype f16 \
    --config coopmat:128x256x32-g8-s1-w8 --no-vendor --no-plot --budget-ms 300 --out "$out/bench_probe" 2>&1 | grep -E "^vulkan|rror" | head -6
  echo "-- the tuner's choice: heuristic (cache_only), then autotuned (on_miss)"
  for mode in cache_only on_miss; do
    timeout 200 "$build/bench/omnigemm-bench" --backend vulkan --sizes 2048,4096,8192 --dtype f16,bf16 --tune-mode $mode \
      --no-vendor --no-plot --budget-ms 300 --out "$out/bench_$mode" 2>&1 | grep -E "^vulkan|rror" | head -8
  done
  echo "-- cuBLAS via torch.matmul (CUDA events, median of 20 after 5 warm-up)"
  timeout 120 python3 tests/vulkan/cublas_square.py 2048,4096,8192 f16,bf16
} 2>&1 | tee "$out/summary.txt"
