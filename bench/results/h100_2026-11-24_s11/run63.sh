set -uo pipefail
cd build-h100 && rm -rf bh && tar xzf bins.tgz && cd ..
bench=$PWD/build-h100/bh/bench/omnigemm-bench
echo "== $(date -u '+%Y-%m-%d %H:%M UTC')  $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)  build a60fcc5 + CLUSTER_N + OMNIGEMM_CUDA_SMID_ORDER"
mkdir -p /tmp/w
mk() { printf '#!/bin/bash\n%s exec %s "$@" --config %s\n' "$3" "$bench" "$2" > /tmp/w/$1; chmod +x /tmp/w/$1; }
for g in 2 4 8 16; do
  mk d$g 128x256x64-g$g-s4-w12-x1 ""
  mk s$g 128x256x64-g$g-s4-w12-x1 "OMNIGEMM_CUDA_SMID_ORDER=1"
  mk c$g 128x256x64-g$g-s4-w12-x3 ""
done
for shape in 2048 4096 8192; do for v in d16 d8 d4 s16 s8 s4 s2 c16 c8 c4; do
  timeout 120 ncu --clock-control none -k regex:gemm_tma -s 20 -c 1 --csv \
    --metrics lts__t_sectors_srcunit_tex_op_read.sum,gpu__time_duration.sum,dram__bytes_read.sum,sm__cycles_elapsed.avg.per_second \
    /tmp/w/$v --backend cuda --shapes ${shape}x${shape}x${shape} --dtype f16 --no-vendor --no-plot --budget-ms 20 --out /tmp/n63 > /tmp/n63.csv 2> /tmp/n63.err
  python3 - /tmp/n63.csv "$shape $v" <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1], errors='replace')) if len(r) > 10]
if len(rows) < 2: print(sys.argv[2], "no data"); sys.exit()
h = rows[0]; ni, vi = h.index("Metric Name"), h.index("Metric Value")
short = lambda m: m.replace("lts__t_sectors_srcunit_", "L2sec_").replace(".sum", "").replace("sm__cycles_elapsed.avg.per_second", "clk").replace("gpu__time_duration", "us")
print(sys.argv[2], "  ".join(f"{short(r[ni])}={r[vi]}" for r in rows[1:]))
PY
done; done 2>&1 | tee $OUT/run63_ncu.txt
date -u
