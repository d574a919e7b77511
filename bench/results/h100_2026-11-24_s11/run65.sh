set -uo pipefail
cd build-h100 && rm -rf bh && tar xzf bins.tgz && cd ..
bench=$PWD/build-h100/bh/bench/omnigemm-bench
echo "== $(date -u '+%Y-%m-%d %H:%M UTC')  $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)  build a60fcc5 + -x3 128x64 / 128x128 (A multicast, 1x2 clusters)"
(cd build-h100/bh/tests && timeout 400 ./test_cuda 2>&1 | tail -4) | tee $OUT/run65_test_cuda.txt
mkdir -p /tmp/w
mk() { printf '#!/bin/bash\nexec %s "$@" %s\n' "$bench" "$2" > /tmp/w/$1; chmod +x /tmp/w/$1; }
mk def ""
mk p64 "--config 128x64x64-g8-s8-w12-k2-x3"
mk p128 "--config 128x128x64-g8-s6-w12-x3"
mk p128k2 "--config 128x128x64-g8-s6-w12-k2-x3"
mk f64 "--config 128x64x128-g8-s8-w12-k2-x3"
mk f128 "--config 128x128x128-g8-s6-w12-x3"
mk f128k2 "--config 128x128x128-g8-s6-w12-k2-x3"
L=128x4096x4096,128x14336x4096,128x4096x14336
bash scripts/ab_bench.sh 3 /tmp/ab65a $L f16,bf16 /tmp/w/def /tmp/w/p64 /tmp/w/p128 /tmp/w/p128k2 2>&1 | tee $OUT/run65_ab16.txt
bash scripts/ab_bench.sh 3 /tmp/ab65b $L fp8_e4m3 /tmp/w/def /tmp/w/f64 /tmp/w/f128 /tmp/w/f128k2 2>&1 | tee $OUT/run65_ab8.txt
for d in /tmp/ab65a /tmp/ab65b; do python3 -c "
import csv,collections; rows=list(csv.DictReader(open('$d/header.csv').readlines()+open('$d/rows.csv').readlines()))
print('$d status/check', collections.Counter((r['status'], r['check']) for r in rows if r['impl']=='omnigemm'))"; done | tee -a $OUT/run65_ab8.txt
date -u
