set -uo pipefail
cd build-h100 && rm -rf bh && tar xzf bins.tgz && cd ..
b=build-h100/bh; bench=$b/bench/omnigemm-bench
export OMNIGEMM_CUBLAS_DIR="$(python3 -c 'import nvidia.cublas, os; print(os.path.join(os.path.dirname(nvidia.cublas.__file__), "lib"))' 2>/dev/null)"
echo "== $(date -u '+%Y-%m-%d %H:%M UTC')  $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)  build: ac7b1ed (TMA-store deferred epilogue, uniform descriptors): squares x4 (second set), fp8, LLM"
for rep in 1 2 3 4; do
  $bench --backend cuda --sizes 512,1024,2048,3072,4096,6144,8192 --dtype f16,bf16 --budget-ms 150 --no-plot --out /tmp/square_$rep > /dev/null 2>&1; echo "square $rep rc=$?"
  cp /tmp/square_$rep/results.csv $OUT/final_square_$rep.csv
done
$bench --backend cuda --sizes 4096,8192 --dtype fp8_e4m3 --budget-ms 150 --no-plot --out /tmp/fp8 > /dev/null 2>&1; echo "fp8 rc=$?"; cp /tmp/fp8/results.csv $OUT/final_fp8.csv
$bench --backend cuda --llm --dtype f16 --budget-ms 150 --no-plot --out /tmp/llm > /dev/null 2>&1; echo "llm rc=$?"; cp /tmp/llm/results.csv $OUT/final_llm.csv
$bench --backend cuda --llm --dtype bf16 --budget-ms 150 --no-plot --out /tmp/llmb > /dev/null 2>&1; echo "llm bf16 rc=$?"; cp /tmp/llmb/results.csv $OUT/final_llm_bf16.csv
python3 build-h100/summ.py $OUT/final_square_*.csv $OUT/final_fp8.csv $OUT/final_llm.csv $OUT/final_llm_bf16.csv | tee $OUT/final_summary.txt
date -u
