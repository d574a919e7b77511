set -uo pipefail
cd build-h100 && rm -rf bh && tar xzf bins.tgz && cd ..
bench=$PWD/build-h100/bh/bench/omnigemm-bench
echo "== $(date -u '+%Y-%m-%d %H:%M UTC')  $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)  build a60fcc5 + -x3 256x128 (A multicast, 1x2 clusters)"
(cd build-h100/bh/tests && timeout 400 ./test_cuda 2>&1 | tail -4) | tee $OUT/run62_test_cuda.txt
mkdir -p /tmp/w
mk() { printf '#!/bin/bash\n%s exec %s "$@" --config %s\n' "$3" "$bench" "$2" > /tmp/w/$1; chmod +x /tmp/w/$1; }
mk x1 128x256x64-g16-s4-w12-x1 ""
mk t1 256x128x64-g8-s4-w12-x1 ""
mk t3 256x128x64-g8-s4-w12-x3 ""
mk a3 128x256x64-g16-s4-w12-x3 "OMNIGEMM_CUDA_MULTICAST_A=1"
mk b3 128x256x64-g8-s4-w12-x3 ""
for shape in 2048 4096 8192; do for v in x1 t1 t3 a3 b3; do
  timeout 120 ncu --clock-control none -k regex:gemm_tma -s 20 -c 1 --csv \
    --metrics lts__t_sectors_srcunit_tex_op_read.sum,gpu__time_duration.sum,sm__cycles_active.avg,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__cycles_elapsed.avg.per_second \
    /tmp/w/$v --backend cuda --shapes ${shape}x${shape}x${shape} --dtype f16 --no-vendor --no-plot --budget-ms 20 --out /tmp/n62 > /tmp/n62.csv 2> /tmp/n62.err
  python3 - /tmp/n62.csv "$shape $v" <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1], errors='replace')) if len(r) > 10]
if len(rows) < 2: print(sys.argv[2], "no data"); sys.exit()
h = rows[0]; ni, vi = h.index("Metric Name"), h.index("Metric Value")
short = lambda m: m.replace("lts__t_sectors_srcunit_", "L2sec_").replace("sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active", "tensor%").replace(".sum", "").replace("sm__cycles_elapsed.avg.per_second", "clk")
print(sys.argv[2], "  ".join(f"{short(r[ni])}={r[vi]}" for r in rows[1:]))
PY
done; done 2>&1 | tee $OUT/run62_ncu.txt
bash scripts/ab_bench.sh 3 /tmp/ab62 2048x2048x2048,4096x4096x4096,6144x6144x6144,8192x8192x8192 f16,bf16 /tmp/w/x1 /tmp/w/t3 /tmp/w/a3 /tmp/w/t1 2>&1 | tee $OUT/run62_ab.txt
date -u
