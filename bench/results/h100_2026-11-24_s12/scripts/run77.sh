set -uo pipefail
cd build-h100 && rm -rf bh && tar xzf bins.tgz && cd ..
b=$PWD/build-h100/bh; bench=$b/bench/omnigemm-bench; head=$b/head/omnigemm-bench
echo "== $(date -u '+%Y-%m-%d %H:%M UTC')  $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)  head 7667e35; new = TMA-store deferred epilogue (N % 8 == 0) + uniform wgmma descriptors"
(cd $b/tests && timeout 250 ./test_cuda > $OUT/run77_test_cuda.txt 2>&1; echo "test_cuda rc=$? $(tail -3 $OUT/run77_test_cuda.txt | tr '\n' ' ')")
grep -B2 -A12 "ERROR" $OUT/run77_test_cuda.txt | head -30
timeout 150 compute-sanitizer --tool memcheck $b/tests/test_cuda -tc='*sanitizer subset*' > $OUT/run77_memcheck.log 2>&1; echo "memcheck rc=$? $(tail -3 $OUT/run77_memcheck.log | tr '\n' ' ')"
timeout 150 compute-sanitizer --tool racecheck $b/tests/test_cuda -tc='*sanitizer subset*' > $OUT/run77_racecheck.log 2>&1; echo "racecheck rc=$? $(tail -3 $OUT/run77_racecheck.log | tr '\n' ' ')"
date -u
