set -uo pipefail
cd build-h100 && rm -rf bh && tar xzf bins.tgz && cd ..
b=$PWD/build-h100/bh; bench=$b/bench/omnigemm-bench; head=$b/head/omnigemm-bench
echo "== $(date -u '+%Y-%m-%d %H:%M UTC')  $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)  A = head 7667e35; B = TMA-store deferred epilogue (N % 8 == 0) + uniform wgmma descriptors"
timeout 420 bash scripts/ab_bench.sh 4 /tmp/ab78 2048x2048x2048,3072x3072x3072,4096x4096x4096,6144x6144x6144,8192x8192x8192 bf16,f16 $head $bench | tee $OUT/run78_squares_ab.txt
cp /tmp/ab78/rows.csv $OUT/run78_squares_rows.csv
timeout 150 bash scripts/ab_bench.sh 3 /tmp/ab78b 4096x4096x4096,8192x8192x8192 fp8_e4m3 $head $bench | tee $OUT/run78_fp8_ab.txt
date -u
