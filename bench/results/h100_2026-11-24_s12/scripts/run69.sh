set -uo pipefail
cd build-h100 && rm -rf bh && tar xzf bins.tgz && cd ..
b=$PWD/build-h100/bh; bench=$b/bench/omnigemm-bench; tl=$b/tl/omnigemm-bench
export OMNIGEMM_CUBLAS_DIR="$(python3 -c 'import nvidia.cublas, os; print(os.path.join(os.path.dirname(nvidia.cublas.__file__), "lib"))' 2>/dev/null)"
echo "== $(date -u '+%Y-%m-%d %H:%M UTC')  $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)  build: 7667e35 + L2 promotion env; tl = + steady-state trace"
# 1. steady-state trace (PDL off), default promotion and none
for prom in 256 none; do
for sd in 4096:f16 4096:bf16 8192:bf16 2048:bf16; do
  s=${sd%%:*}; d=${sd#*:}
  OMNIGEMM_CUDA_L2_PROMOTION=$prom OMNIGEMM_CUDA_PDL=0 timeout 120 $tl --backend cuda --shapes ${s}x${s}x${s} --dtype $d --no-vendor --no-plot --budget-ms 30 --out /tmp/tl > $OUT/tl_${s}_${d}_$prom.txt 2>&1
  echo "##### $s $d promotion $prom: $(grep -c '^TS' $OUT/tl_${s}_${d}_$prom.txt) lines; $(tail -n +2 /tmp/tl/results.csv | cut -d, -f12-16,18 | head -1)"
  python3 $b/tl/tl_steady_summary.py $OUT/tl_${s}_${d}_$prom.txt
done
done
# 2. A/B: L2 promotion 256 (A, current) / none (B) / 128 (C)
for v in none 128; do printf '#!/bin/bash\nOMNIGEMM_CUDA_L2_PROMOTION=%s exec %s "$@"\n' $v $bench > /tmp/p_$v; chmod +x /tmp/p_$v; done
timeout 420 bash scripts/ab_bench.sh 3 /tmp/ab69 2048x2048x2048,4096x4096x4096,8192x8192x8192 bf16,f16 $bench /tmp/p_none /tmp/p_128 | tee $OUT/run69_promotion_ab.txt
cp /tmp/ab69/rows.csv $OUT/run69_promotion_rows.csv
date -u
