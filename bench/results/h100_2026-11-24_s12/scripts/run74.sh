set -uo pipefail
cd build-h100 && rm -rf bh && tar xzf bins.tgz && cd ..
b=$PWD/build-h100/bh; bench=$b/bench/omnigemm-bench; head=$b/head/omnigemm-bench
export OMNIGEMM_CUBLAS_DIR="$(python3 -c 'import nvidia.cublas, os; print(os.path.join(os.path.dirname(nvidia.cublas.__file__), "lib"))' 2>/dev/null)"
echo "== $(date -u '+%Y-%m-%d %H:%M UTC')  instruction counts per SASS line, ours (head) and cuBLAS, 4096^3 bf16"
ncu --version | tail -1
K=_ZN8omnigemm6detail4sm9014gemm_tma_wgmmaINS1_5ShapeILi256ELi1ELNS1_9WgmmaTypeE1ELS4_1ELb0ELb1ELb0ELi1ELb0ELb0EEEEEv14CUtensorMap_stS6_S6_NS1_10KernelArgsE
cuobjdump -sass -fun $K build-h100/bf16_sm90a.cubin > $OUT/run74_new_kernel.sass 2>&1; wc -l $OUT/run74_new_kernel.sass
for k in gemm_tma nvjet; do
  timeout 200 ncu --clock-control none -k regex:$k -s 12 -c 1 --section SourceCounters --section InstructionStats --section WarpStateStats --page source --print-source sass --csv \
    $head --backend cuda --shapes 4096x4096x4096 --dtype bf16 --budget-ms 5 --no-plot --out /tmp/ncu > $OUT/run74_src_$k.csv 2> $OUT/run74_src_$k.err
  echo "$k rc=$? $(wc -l < $OUT/run74_src_$k.csv) lines"; head -c 600 $OUT/run74_src_$k.csv; echo; tail -3 $OUT/run74_src_$k.err
done
gzip $OUT/run74_src_*.csv
date -u
