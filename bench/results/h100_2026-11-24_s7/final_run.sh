set -uo pipefail
cd build-h100 && tar xzf bins_base.tgz && cd ..
b=build-h100/base/bench/omnigemm-bench
export OMNIGEMM_CUBLAS_DIR="$(python3 -c 'import nvidia.cublas, os; print(os.path.join(os.path.dirname(nvidia.cublas.__file__), "lib"))' 2>/dev/null)"
echo "== $(date -u '+%Y-%m-%d %H:%M UTC')  $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
for rep in 1 2; do
  $b --backend cuda --sizes 512,1024,2048,3072,4096,6144,8192 --dtype f16,bf16 --budget-ms 150 --no-plot --out $OUT/square_$rep > $OUT/square_$rep.log 2>&1; echo "square $rep rc=$?"
done
$b --backend cuda --sizes 4096,8192 --dtype fp8_e4m3 --budget-ms 150 --no-plot --out $OUT/fp8 > $OUT/fp8.log 2>&1; echo "fp8 rc=$?"
$b --backend cuda --llm --dtype f16 --budget-ms 150 --no-plot --out $OUT/llm > $OUT/llm.log 2>&1; echo "llm rc=$?"
$b --backend cuda --llm --dtype bf16 --budget-ms 150 --no-plot --out $OUT/llm_bf16 > $OUT/llm_bf16.log 2>&1; echo "llm bf16 rc=$?"
OMNIGEMM_CUDA_DEFER_EPILOGUE=0 $b --backend cuda --sizes 3072,4096,6144,8192 --dtype f16,bf16 --budget-ms 150 --no-plot --out $OUT/square_nodefer > $OUT/square_nodefer.log 2>&1; echo "square nodefer rc=$?"
for d in square_1 square_2 fp8 llm llm_bf16 square_nodefer; do cp $OUT/$d/results.csv $OUT/$d.csv; rm -rf $OUT/$d; done
python3 - $OUT <<'PY'
import csv, sys, os
for name in ["square_1", "square_2", "square_nodefer", "fp8", "llm", "llm_bf16"]:
    rows = list(csv.DictReader(open(os.path.join(sys.argv[1], name + ".csv"))))
    print("==", name)
    for r in rows:
        if r["impl"] != "omnigemm": continue
        v = next(x for x in rows if x["impl"] == "vendor" and x["M"] == r["M"] and x["N"] == r["N"] and x["K"] == r["K"] and x["dtype_in"] == r["dtype_in"])
        print(f'{r["dtype_in"]} {r["M"]}x{r["N"]}x{r["K"]} {r["config"]} ours {float(r["ms_median"])*1e3:.1f} us vendor {float(v["ms_median"])*1e3:.1f} us ratio {r["ratio_vendor_over_omnigemm"]} {r["status"]} {r["check"]}')
PY
date -u
