set -uo pipefail
cd build-h100 && rm -rf bh && tar xzf bins.tgz && cd ..
b=build-h100/bh; bench=$b/bench/omnigemm-bench
export OMNIGEMM_CUBLAS_DIR="$(python3 -c 'import nvidia.cublas, os; print(os.path.join(os.path.dirname(nvidia.cublas.__file__), "lib"))' 2>/dev/null)"
echo "== $(date -u '+%Y-%m-%d %H:%M UTC')  $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)  build: 3cacfdc + split price by bytes per K-step"
timeout 300 $b/tests/test_cuda > $OUT/test_cuda.log 2>&1; echo "test_cuda rc=$? $(grep -E 'test cases:|assertions:' $OUT/test_cuda.log | tr '\n' ' ')"
grep -E "ERROR|FAIL" -A8 $OUT/test_cuda.log | head -30
$bench --backend cuda --shapes 1x4096x4096,8x4096x4096,16x4096x4096,24x4096x4096,32x4096x4096,32x4096x14336,32x14336x4096,64x4096x4096 --dtype f16,bf16 --budget-ms 150 --no-plot --out /tmp/bd > /dev/null 2>&1; echo "decode rc=$?"
cp /tmp/bd/results.csv $OUT/decode.csv
$bench --backend cuda --llm --dtype f16,bf16 --budget-ms 150 --no-plot --out /tmp/llm > /dev/null 2>&1; echo "llm rc=$?"; cp /tmp/llm/results.csv $OUT/llm.csv
python3 build-h100/summ.py $OUT/decode.csv $OUT/llm.csv
