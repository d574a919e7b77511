set -uo pipefail
cd build-h100 && tar xzf bins.tgz && cd ..
b=build-h100/bh/bench/omnigemm-bench
export OMNIGEMM_CUBLAS_DIR="$(python3 -c 'import nvidia.cublas, os; print(os.path.join(os.path.dirname(nvidia.cublas.__file__), "lib"))' 2>/dev/null)"
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw,temperature.gpu --format=csv,noheader
echo "rep,dtype,size,variant,config,ours_us,vendor_us,ratio" > $OUT/ab.csv
for rep in 1 2 3; do
 for dt in f16 bf16; do
  for s in 3072 4096 6144 8192; do
   tile=128x256x64; [ $s = 3072 ] && tile=128x192x64
   for v in defer nodefer g16; do
    cfg=(); env=OMNIGEMM_CUDA_DEFER_EPILOGUE=1
    [ $v = nodefer ] && env=OMNIGEMM_CUDA_DEFER_EPILOGUE=0
    [ $v = g16 ] && cfg=(--config ${tile}-g16-s4-w12-x1)
    env $env $b --backend cuda --shapes ${s}x${s}x${s} --dtype $dt "${cfg[@]}" --budget-ms 100 --no-plot --out $OUT/o > $OUT/o.log 2>&1
    python3 - $OUT/o/results.csv $rep $dt $s $v >> $OUT/ab.csv <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
o = next(r for r in rows if r["impl"] == "omnigemm"); v = next(r for r in rows if r["impl"] == "vendor")
print(",".join(sys.argv[2:6] + [o["config"], f'{float(o["ms_median"])*1e3:.2f}', f'{float(v["ms_median"])*1e3:.2f}', o["ratio_vendor_over_omnigemm"]]))
PY
   done
  done
 done
done
rm -rf $OUT/o $OUT/o.log
date -u
python3 - $OUT/ab.csv <<'PY'
import csv, sys, statistics as st, collections
rows = list(csv.DictReader(open(sys.argv[1])))
g = collections.defaultdict(list)
for r in rows: g[(r["dtype"], int(r["size"]), r["variant"])].append(r)
for k in sorted(g):
    rs = g[k]
    print(k, "ours", [r["ours_us"] for r in rs], "vendor", [r["vendor_us"] for r in rs], "median ratio", st.median(float(r["ratio"]) for r in rs))
PY
