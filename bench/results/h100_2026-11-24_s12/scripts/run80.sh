set -uo pipefail
cd build-h100 && rm -rf bh && tar xzf bins.tgz && cd ..
b=$PWD/build-h100/bh; bench=$b/bench/omnigemm-bench; head=$b/head/omnigemm-bench
echo "== $(date -u '+%Y-%m-%d %H:%M UTC')  $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)  A = 35a82b1; B = + TMA stores for the undeferred packed epilogue (both orientations)"
(cd $b/tests && timeout 250 ./test_cuda > $OUT/run80_test_cuda.txt 2>&1; echo "test_cuda rc=$? $(tail -3 $OUT/run80_test_cuda.txt | tr '\n' ' ')")
grep -B2 -A12 "ERROR" $OUT/run80_test_cuda.txt | head -30
timeout 300 bash scripts/ab_bench.sh 4 /tmp/ab80 3072x3072x3072,2048x2048x2048,16x4096x4096,16x14336x4096,16x4096x14336 bf16,f16 $head $bench | tee $OUT/run80_ab.txt
date -u
