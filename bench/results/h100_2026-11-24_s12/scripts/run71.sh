set -uo pipefail
cd build-h100 && rm -rf bh && tar xzf bins.tgz && cd ..
b=$PWD/build-h100/bh; bench=$b/bench/omnigemm-bench; head=$b/head/omnigemm-bench
export OMNIGEMM_CUBLAS_DIR="$(python3 -c 'import nvidia.cublas, os; print(os.path.join(os.path.dirname(nvidia.cublas.__file__), "lib"))' 2>/dev/null)"
echo "== $(date -u '+%Y-%m-%d %H:%M UTC')  $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)  A = 7667e35 (head), B = deferred epilogue through TMA stores"
# quick correctness of the new build on the timed shapes (vendor off, checked against float64)
$bench --backend cuda --shapes 4096x4096x4096,1000x1000x1000,2048x2040x1032 --dtype bf16,f16 --no-vendor --budget-ms 10 --no-plot --out /tmp/chk > /dev/null 2>&1
python3 -c "
import csv; rows=list(csv.DictReader(open('/tmp/chk/results.csv')))
for r in rows: print(r['impl'], r['dtype_in'], r['M'], r['N'], r['K'], r['config'], '%.1f us'%(float(r['ms_median'])*1e3), r['status'], r['check'])"
timeout 420 bash scripts/ab_bench.sh 3 /tmp/ab71 2048x2048x2048,3072x3072x3072,4096x4096x4096,6144x6144x6144,8192x8192x8192 bf16,f16 $head $bench | tee $OUT/run71_tma_store_ab.txt
cp /tmp/ab71/rows.csv $OUT/run71_rows.csv
date -u
