set -uo pipefail
cd build-h100 && rm -rf bh && tar xzf bins.tgz && cd ..
b=$PWD/build-h100/bh; bench=$b/bench/omnigemm-bench; head=$b/head/omnigemm-bench
echo "== $(date -u '+%Y-%m-%d %H:%M UTC')  $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)  head 7667e35; new = TMA-store deferred epilogue + uniform wgmma descriptors"
K=_ZN8omnigemm6detail4sm9014gemm_tma_wgmmaINS1_5ShapeILi256ELi1ELNS1_9WgmmaTypeE1ELS4_1ELb0ELb1ELb0ELi1ELb0ELb0EEEEEv14CUtensorMap_stS6_S6_NS1_10KernelArgsE
for c in sm90a noshfl shfl; do cuobjdump -sass -fun $K build-h100/bf16_$c.cubin > $OUT/run75_$c.sass 2>&1; echo "$c $(grep -c '/\*[0-9a-f]*\*/' $OUT/run75_$c.sass) sass lines"; done
for v in $head $bench; do
  echo "## ncu 4096 bf16 $v"
  timeout 100 ncu --clock-control none -k regex:gemm_tma -s 12 -c 1 --csv --metrics gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,smsp__inst_executed.sum,sm__pipe_tensor_op_hmma_cycles_active.avg,sm__cycles_active.avg \
    $v --backend cuda --shapes 4096x4096x4096 --dtype bf16 --no-vendor --budget-ms 5 --no-plot --out /tmp/ncu 2>/dev/null | grep -E '^"[0-9]' | awk -F'","' '{print $(NF-2), $(NF-1), $NF}'
done
timeout 300 bash scripts/ab_bench.sh 4 /tmp/ab75 2048x2048x2048,4096x4096x4096,8192x8192x8192 bf16 $head $bench | tee $OUT/run75_ab.txt
cp /tmp/ab75/rows.csv $OUT/run75_rows.csv
(cd $b/tests && timeout 200 ./test_cuda 2>&1 | tail -4)
date -u
