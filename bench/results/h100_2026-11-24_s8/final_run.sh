set -uo pipefail
cd build-h100 && rm -rf bh head && tar xzf bins_head.tgz && mv bh head && tar xzf bins.tgz && cd ..
b=build-h100/bh/bench/omnigemm-bench; h=build-h100/head/bench/omnigemm-bench
export OMNIGEMM_CUBLAS_DIR="$(python3 -c 'import nvidia.cublas, os; print(os.path.join(os.path.dirname(nvidia.cublas.__file__), "lib"))' 2>/dev/null)"
echo "== $(date -u '+%Y-%m-%d %H:%M UTC')  $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
for rep in 1 2; do
  $b --backend cuda --sizes 512,1024,2048,3072,4096,6144,8192 --dtype f16,bf16 --budget-ms 150 --no-plot --out $OUT/square_$rep > $OUT/square_$rep.log 2>&1; echo "square $rep rc=$?"
  $h --backend cuda --sizes 3072 --dtype f16,bf16 --budget-ms 150 --no-plot --out $OUT/head3072_$rep > /dev/null 2>&1; echo "head 3072 $rep rc=$?"
done
$b --backend cuda --sizes 4096,8192 --dtype fp8_e4m3 --budget-ms 150 --no-plot --out $OUT/fp8 > $OUT/fp8.log 2>&1; echo "fp8 rc=$?"
$b --backend cuda --llm --dtype f16 --budget-ms 150 --no-plot --out $OUT/llm > $OUT/llm.log 2>&1; echo "llm rc=$?"
$b --backend cuda --llm --dtype bf16 --budget-ms 150 --no-plot --out $OUT/llm_bf16 > $OUT/llm_bf16.log 2>&1; echo "llm bf16 rc=$?"
for d in square_1 square_2 head3072_1 head3072_2 fp8 llm llm_bf16; do cp $OUT/$d/results.csv $OUT/$d.csv; rm -rf $OUT/$d; done
python3 build-h100/summ.py $OUT/square_1.csv $OUT/square_2.csv $OUT/head3072_1.csv $OUT/head3072_2.csv $OUT/fp8.csv $OUT/llm.csv $OUT/llm_bf16.csv | tee $OUT/final_summary.txt
rm -f $OUT/*.log
date -u
