set -uo pipefail
cd build-h100 && tar xzf bins.tgz && cd ..
b=build-h100/bh
export OMNIGEMM_CUBLAS_DIR="$(python3 -c 'import nvidia.cublas, os; print(os.path.join(os.path.dirname(nvidia.cublas.__file__), "lib"))' 2>/dev/null)"
echo "== $(date -u '+%Y-%m-%d %H:%M UTC')  $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
timeout 300 $b/tests/test_cuda > $OUT/test_cuda.log 2>&1; echo "test_cuda rc=$? $(grep -E 'test cases:|assertions:' $OUT/test_cuda.log | tr '\n' ' ')"
grep -E "ERROR|FAIL" -A6 $OUT/test_cuda.log | head -30
for tool in memcheck racecheck; do
  timeout 300 compute-sanitizer --tool $tool $b/tests/test_cuda -tc='*device pointers*,*sanitizer subset*' > $OUT/sanitizer_$tool.log 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|test cases:|assertions:' $OUT/sanitizer_$tool.log | tr '\n' ' ')"
done
$b/bench/omnigemm-bench --backend cuda --sizes 512,1024,2048,3072,4096,6144,8192 --dtype f16,bf16 --budget-ms 150 --no-plot --out $OUT/sq > $OUT/square.log 2>&1; echo "square rc=$?"
cp $OUT/sq/results.csv $OUT/square.csv; rm -rf $OUT/sq
python3 - $OUT/square.csv <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
for r in rows:
    if r["impl"] != "omnigemm": continue
    v = next(x for x in rows if x["impl"] == "vendor" and x["M"] == r["M"] and x["dtype_in"] == r["dtype_in"])
    print(f'{r["dtype_in"]} {r["M"]}^3 {r["config"]} ours {float(r["ms_median"])*1e3:.1f} us vendor {float(v["ms_median"])*1e3:.1f} us ratio {r["ratio_vendor_over_omnigemm"]} {r["status"]} {r["check"]}')
PY
date -u
