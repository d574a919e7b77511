set -uo pipefail
cd build-h100 && rm -rf bh && tar xzf bins.tgz && cd ..
b=$PWD/build-h100/bh; bench=$b/bench/omnigemm-bench
export OMNIGEMM_CUBLAS_DIR="$(python3 -c 'import nvidia.cublas, os; print(os.path.join(os.path.dirname(nvidia.cublas.__file__), "lib"))' 2>/dev/null)"
echo "== $(date -u '+%Y-%m-%d %H:%M UTC')  $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)  build: 94d9594 + one tensor-map encoder for operands and D"
(cd $b/tests && timeout 280 ./test_cuda > $OUT/run85_test_cuda.txt 2>&1; echo "test_cuda rc=$? $(grep -E 'test cases:|assertions:' $OUT/run85_test_cuda.txt | tr '\n' ' ')")
$bench --backend cuda --shapes 4096x4096x4096,2048x2104x1032 --dtype bf16 --budget-ms 50 --no-plot --out /tmp/r85 > /dev/null 2>&1
python3 -c "
import csv
for r in csv.DictReader(open('/tmp/r85/results.csv')): print(r['impl'], r['dtype_in'], r['M'], r['N'], r['K'], r['config'], '%.1f us'%(float(r['ms_median'])*1e3), r['status'], r['check'])"
