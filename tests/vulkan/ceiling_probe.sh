#!/usr/bin/env bash
# Measures the ceiling of the KHR cooperative-matrix shader on a GPU (issue 4's "measured
# ceiling"): the same pipelines with the K loop stripped step by step through the shader's
# MAINLOOP_PROBE specialization constant (OMNIGEMM_VK_MAINLOOP_PROBE; results are WRONG by design,
# the bench's check column says so). The variable is read only by a developer build
# (-DOMNIGEMM_DEVELOPER=ON); any other build ignores it and times the real kernel three times:
#   0  the real kernel;
#   1  no global loads in the K loop (shared -> fragment loads, MMAs, one barrier per K tile);
#   2  MMAs only, on fragments loaded once (the instruction-issue ceiling of coopMatMulAdd).
#   usage (repo root, a developer build and .gl carried): bash tests/vulkan/ceiling_probe.sh <build> <out> [sizes]
set -uo pipefail
build="$1"; out="$2"; sizes="${3:-4096,8192}"
for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
echo "== $(date -u '+%Y-%m-%d %H:%M UTC') $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader)"
for cfg in coopmat:128x256x32-g8-s1-w8 coopmat:128x128x32-g8-s2-w4 coopmat:128x128x32-g8-s2-w8 coopmat:256x128x32-g8-s1-w8; do
  for mode in 0 1 2; do
    echo "-- f16 $cfg probe $mode"
    OMNIGEMM_VK_MAINLOOP_PROBE=$mode timeout 100 "$build/bench/omnigemm-bench" --backend vulkan --sizes "$sizes" --dtype f16 \
      --config "$cfg" --no-vendor --no-plot --budget-ms 300 --out "$out/probe_${cfg#coopmat:}_$mode" 2>&1 | grep -E "^vulkan|rror" | head -4
  done
done
echo "-- cuBLAS via torch.matmul, same run (CUDA events, median of 20 after 5 warm-up)"
timeout 60 python3 tests/vulkan/cublas_square.py "$sizes" f16
