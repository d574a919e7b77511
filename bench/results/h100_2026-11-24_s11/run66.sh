set -uo pipefail
cd build-h100 && rm -rf bh && tar xzf bins.tgz && cd ..
bench=$PWD/build-h100/bh/bench/omnigemm-bench
echo "== $(date -u '+%Y-%m-%d %H:%M UTC')  $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)  build a60fcc5: M = 128 shapes, the heuristic's tile against the -x4 64x128 tile"
mkdir -p /tmp/w
mk() { printf '#!/bin/bash\nexec %s "$@" %s\n' "$bench" "$2" > /tmp/w/$1; chmod +x /tmp/w/$1; }
mk def ""
mk s2 "--config 64x128x64-g8-s8-w12-k2-x4"
mk s1 "--config 64x128x64-g8-s8-w12-x4"
mk f2 "--config 64x128x128-g8-s8-w12-k2-x4"
mk f1 "--config 64x128x128-g8-s8-w12-x4"
L=128x4096x4096,128x14336x4096,128x4096x14336
bash scripts/ab_bench.sh 3 /tmp/ab66a $L f16,bf16 /tmp/w/def /tmp/w/s2 /tmp/w/s1 2>&1 | tee $OUT/run66_ab16.txt
bash scripts/ab_bench.sh 3 /tmp/ab66b $L fp8_e4m3 /tmp/w/def /tmp/w/f2 /tmp/w/f1 2>&1 | tee $OUT/run66_ab8.txt
for d in /tmp/ab66a /tmp/ab66b; do python3 -c "
import csv,collections; rows=list(csv.DictReader(open('$d/header.csv').readlines()+open('$d/rows.csv').readlines()))
print('$d status/check', collections.Counter((r['status'], r['check']) for r in rows if r['impl']=='omnigemm'))"; done | tee -a $OUT/run66_ab8.txt
date -u
