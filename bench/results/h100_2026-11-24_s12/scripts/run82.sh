set -uo pipefail
cd build-h100 && rm -rf bh && tar xzf bins.tgz && cd ..
b=$PWD/build-h100/bh
echo "== $(date -u '+%Y-%m-%d %H:%M UTC')  $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)  build: ac7b1ed: tests, sanitizers, SASS"
for t in core cuda; do (cd $b/tests && timeout 280 ./test_$t > $OUT/run82_test_$t.txt 2>&1; echo "test_$t rc=$? $(grep -E 'test cases:|assertions:' $OUT/run82_test_$t.txt | tr '\n' ' ')"); done
for tool in memcheck racecheck; do
  timeout 120 compute-sanitizer --tool $tool $b/tests/test_cuda -tc='*device pointers*,*sanitizer subset*' > $OUT/run82_sanitizer_$tool.log 2>&1
  echo "compute-sanitizer $tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/run82_sanitizer_$tool.log | tail -1)"
done
cuobjdump --dump-sass $b/tests/test_cuda > /tmp/sass.txt 2>&1
echo "SASS instruction counts (test_cuda): HGMMA=$(grep -c HGMMA /tmp/sass.txt) QGMMA=$(grep -c QGMMA /tmp/sass.txt) HMMA=$(grep -c HMMA /tmp/sass.txt) UTMALDG=$(grep -c UTMALDG /tmp/sass.txt) UTMASTG=$(grep -c UTMASTG /tmp/sass.txt) UBLKCP=$(grep -c UBLKCP /tmp/sass.txt)"
date -u
