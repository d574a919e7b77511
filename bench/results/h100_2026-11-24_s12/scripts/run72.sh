set -uo pipefail
cd build-h100 && rm -rf bh && tar xzf bins.tgz && cd ..
b=$PWD/build-h100/bh; bench=$b/bench/omnigemm-bench; head=$b/head/omnigemm-bench
echo "== $(date -u '+%Y-%m-%d %H:%M UTC')  $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)  A = 7667e35 (head), B/C/D = TMA-store deferred epilogue, a chunk every 1 / 4 / 12 K-tiles"
$bench --backend cuda --shapes 4096x4096x4096,1000x1000x1000,2048x2040x1032,300x520x136 --dtype bf16,f16 --no-vendor --budget-ms 10 --no-plot --out /tmp/chk > /dev/null 2>&1
for sp in 4 12; do OMNIGEMM_CUDA_DEFER_SPACING=$sp $bench --backend cuda --shapes 2048x2040x1032,300x520x136,1000x1000x8000 --dtype bf16 --no-vendor --budget-ms 10 --no-plot --out /tmp/chk$sp > /dev/null 2>&1; done
python3 -c "
import csv
for f in ['/tmp/chk','/tmp/chk4','/tmp/chk12']:
  for r in csv.DictReader(open(f+'/results.csv')): print(f, r['impl'], r['dtype_in'], r['M'], r['N'], r['K'], r['config'], '%.1f us'%(float(r['ms_median'])*1e3), r['status'], r['check'])"
for v in 1 4 12; do printf '#!/bin/bash\nOMNIGEMM_CUDA_DEFER_SPACING=%s exec %s "$@"\n' $v $bench > /tmp/s_$v; chmod +x /tmp/s_$v; done
timeout 400 bash scripts/ab_bench.sh 3 /tmp/ab72 4096x4096x4096,6144x6144x6144,8192x8192x8192 bf16 $head /tmp/s_1 /tmp/s_4 /tmp/s_12 | tee $OUT/run72_spacing_ab.txt
cp /tmp/ab72/rows.csv $OUT/run72_rows.csv
date -u
