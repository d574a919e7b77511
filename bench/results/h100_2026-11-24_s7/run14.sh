set -uo pipefail
cd build-h100 && tar xzf bins.tgz && tar xzf tlbin.tgz && cd ..
b=build-h100/tl/omnigemm-bench
date -u
for s in 4096 3072 8192; do
  for pdl in 1 0; do
    OMNIGEMM_CUDA_PDL=$pdl $b --backend cuda --shapes ${s}x${s}x${s} --dtype f16 --no-vendor --no-plot --budget-ms 20 --out $OUT/o > $OUT/tl_${s}_$pdl.log 2>&1
    echo "== ${s}^3 f16 PDL=$pdl: $(grep -E '^cuda' $OUT/tl_${s}_$pdl.log | head -1 | cut -c1-150)"
    python3 build-h100/tl2.py $OUT/tl_${s}_$pdl.log
  done
done 2>&1 | tee $OUT/timeline.txt
rm -rf $OUT/o
