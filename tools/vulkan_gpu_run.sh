#!/usr/bin/env bash
# One visit to a GPU machine for the Vulkan backend: run test_vulkan on the GPU's driver (the
# cooperative-matrix families coopmat and coopmat2 are exercised there), then time OmniGEMM's
# Vulkan GEMM per forced config (timestamp queries, omnigemm-bench) and cuBLAS (torch.matmul, CUDA
# events) in the same run. A carried Vulkan loader (.gl/*.deb) is unpacked first if present.
#   usage (repo root, build carried): bash tools/vulkan_gpu_run.sh <build> <out dir>
set -uo pipefail
build="$1"; out="$2"
if compgen -G ".gl/*.deb" > /dev/null; then for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig; fi
if ! ldconfig -p | grep -q libvulkan.so.1; then echo "no libvulkan.so.1 (install the Vulkan loader)"; fi
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
  # The same tile at a non-power-of-two N or K tells an address-pattern effect of a 16 KiB row
  # stride (8192 f16, row-major B) from one of size.
  echo "-- coopmat stride probe: 8192^3 vs N or K = 8128 (row-major B)"
  timeout 120 "$build/bench/omnigemm-bench" --backend vulkan --shapes 8192x8192x8192,8192x8128x8192,8192x8192x8128 --dtype f16 \
    --config coopmat:128x256x32-g8-s1-w8 --no-vendor --no-plot --budget-ms 300 --out "$out/bench_probe" 2>&1 | grep -E "^vulkan|rror" | head -6
  echo "-- the tuner's choice: heuristic (cache_only), then autotuned (on_miss)"
  for mode in cache_only on_miss; do
    timeout 200 "$build/bench/omnigemm-bench" --backend vulkan --sizes 2048,4096,8192 --dtype f16,bf16 --tune-mode $mode \
      --no-vendor --no-plot --budget-ms 300 --out "$out/bench_$mode" 2>&1 | grep -E "^vulkan|rror" | head -8
  done
  echo "-- cuBLAS via torch.matmul (CUDA events, median of 20 after 5 warm-up)"
  timeout 120 python3 tools/cublas_square.py 2048,4096,8192 f16,bf16
} 2>&1 | tee "$out/summary.txt"
