set -uo pipefail
cd build-h100 && rm -rf bh && tar xzf bins.tgz && cd ..
b=$PWD/build-h100/bh; tl=$b/tl/omnigemm-bench; plain=$b/plain/omnigemm-bench
export OMNIGEMM_CUBLAS_DIR="$(python3 -c 'import nvidia.cublas, os; print(os.path.join(os.path.dirname(nvidia.cublas.__file__), "lib"))' 2>/dev/null)"
echo "== $(date -u '+%Y-%m-%d %H:%M UTC')  $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)  build: 7667e35 + OMNIGEMM_EXP_MODE (1 no deferred steps, 2 no hold/steps, 3 steps: direct stores); tl = + steady trace"
# 1. ncu: shared-memory and tensor utilisation, ours and cuBLAS, 4096^3 bf16
for k in gemm_tma nvjet; do
  timeout 150 ncu --clock-control none -k regex:$k -s 20 -c 1 --section SpeedOfLight --section MemoryWorkloadAnalysis_Tables --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
    $plain --backend cuda --shapes 4096x4096x4096 --dtype bf16 --budget-ms 20 --no-plot --out /tmp/ncu > $OUT/run70_ncu_$k.txt 2>&1
  echo "ncu $k rc=$?"
done
timeout 60 ncu --query-metrics --chip gh100 2>/dev/null | grep -i -E "bank|gmma|mem_shared|tensor" > $OUT/run70_metrics.txt
# 2. traces per mode
for mode in 0 1 2 3; do
  OMNIGEMM_EXP_MODE=$mode OMNIGEMM_CUDA_PDL=0 timeout 120 $tl --backend cuda --shapes 4096x4096x4096 --dtype bf16 --no-vendor --no-plot --budget-ms 30 --out /tmp/tl > $OUT/tl70_mode$mode.txt 2>&1
  echo "##### 4096 bf16 mode $mode: $(tail -n +2 /tmp/tl/results.csv | cut -d, -f12-16,18 | head -1)"
  python3 $b/tl/tl_steady_summary.py $OUT/tl70_mode$mode.txt
done
# 3. A/B timing of the modes (the check fails for 1-3 by design; only the time matters)
for v in 1 2 3; do printf '#!/bin/bash\nOMNIGEMM_EXP_MODE=%s exec %s "$@"\n' $v $plain > /tmp/m_$v; chmod +x /tmp/m_$v; done
timeout 300 bash scripts/ab_bench.sh 3 /tmp/ab70 2048x2048x2048,4096x4096x4096,8192x8192x8192 bf16 $plain /tmp/m_1 /tmp/m_2 /tmp/m_3 | tee $OUT/run70_modes_ab.txt
date -u
