set -uo pipefail
cd build-h100 && rm -rf bh && tar xzf bins.tgz && cd ..
b=$PWD/build-h100/bh; bench=$b/bench/omnigemm-bench; head=$b/head/omnigemm-bench; plain=$b/plain/omnigemm-bench
echo "== $(date -u '+%Y-%m-%d %H:%M UTC')  $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)  head 7667e35; new = TMA-store deferred epilogue (OMNIGEMM_CUDA_DEFER_SPACING: K-tiles between chunks, negative = evict_first hint); plain mode 1 = no D stores"
for v in 1 -1 -12 12; do printf '#!/bin/bash\nOMNIGEMM_CUDA_DEFER_SPACING=%s exec %s "$@"\n' $v $bench > /tmp/s_$v; chmod +x /tmp/s_$v; done
printf '#!/bin/bash\nOMNIGEMM_EXP_MODE=1 exec %s "$@"\n' $plain > /tmp/m_1; chmod +x /tmp/m_1
/tmp/s_-1 --backend cuda --shapes 2048x2040x1032,300x520x136 --dtype bf16 --no-vendor --budget-ms 10 --no-plot --out /tmp/chk > /dev/null 2>&1
python3 -c "
import csv
for r in csv.DictReader(open('/tmp/chk/results.csv')): print(r['impl'], r['dtype_in'], r['M'], r['N'], r['K'], r['config'], '%.1f us'%(float(r['ms_median'])*1e3), r['status'], r['check'])"
for s in 4096 8192; do
for v in $head /tmp/s_1 /tmp/s_-1 /tmp/m_1; do
  echo "## ncu $s bf16 $v"
  timeout 100 ncu --clock-control none -k regex:gemm_tma -s 12 -c 1 --csv --metrics gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,sm__pipe_tensor_op_hmma_cycles_active.avg,sm__cycles_active.avg,smsp__inst_executed.sum \
    $v --backend cuda --shapes ${s}x${s}x${s} --dtype bf16 --no-vendor --budget-ms 5 --no-plot --out /tmp/ncu 2>/dev/null | grep -E '^"[0-9]' | awk -F'","' '{print $(NF-2), $(NF-1), $NF}'
done
done
timeout 400 bash scripts/ab_bench.sh 4 /tmp/ab73 4096x4096x4096,6144x6144x6144,8192x8192x8192 bf16 $head /tmp/s_1 /tmp/s_-1 /tmp/s_-12 /tmp/s_12 | tee $OUT/run73_hint_ab.txt
cp /tmp/ab73/rows.csv $OUT/run73_rows.csv
date -u
