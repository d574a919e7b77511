#!/usr/bin/env bash
# Nsight Compute profile of one OmniGEMM CUDA GEMM and of cuBLAS on the same shape, for
# performance work (tools/README.md: measure what limits the kernel before changing it).
#   usage (repo root on the GPU machine): bash tools/profile_h100.sh <bench binary> <out dir> <M> <N> <K> [config]
#   PROFILE_VENDOR=0 skips the cuBLAS profile.
set -uo pipefail
bench="$1"; out="$2"; m="$3"; n="$4"; k="$5"; config="${6:-}"
cfg_args=(); [ -n "$config" ] && cfg_args=(--config "$config")
metrics=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,lts__t_bytes.sum.per_second,dram__bytes.sum.per_second,launch__grid_size,launch__cluster_dim_x,launch__registers_per_thread,launch__shared_mem_per_block
ncu --clock-control none -k regex:gemm_tma -c 1 --set full --import-source yes -o "$out/omnigemm" \
  "$bench" --backend cuda --shapes "${m}x${n}x${k}" --dtype f16 --no-vendor --no-plot --budget-ms 50 "${cfg_args[@]}" \
  --out "$out/bench_o" > "$out/ncu_omnigemm_run.log" 2>&1
ncu --import "$out/omnigemm.ncu-rep" --page details > "$out/omnigemm_details.txt" 2>&1
ncu --import "$out/omnigemm.ncu-rep" --page source --csv --print-source sass > "$out/omnigemm_source.csv" 2>&1
reports=omnigemm
if [ "${PROFILE_VENDOR:-1}" = 1 ]; then
reports="omnigemm cublas"
python3 - "$m" "$n" "$k" > "$out/torch_gemm.py" <<'PY'
import sys
m, n, k = sys.argv[1:4]
print(f"""import torch
a = torch.randn({m}, {k}, device='cuda', dtype=torch.float16); b = torch.randn({k}, {n}, device='cuda', dtype=torch.float16)
for _ in range(3): torch.matmul(a, b)
torch.cuda.synchronize()""")
PY
ncu --clock-control none -k regex:'gemm|xmma|sm90' -s 2 -c 1 --set full -o "$out/cublas" python3 "$out/torch_gemm.py" \
  > "$out/ncu_cublas_run.log" 2>&1
ncu --import "$out/cublas.ncu-rep" --page details > "$out/cublas_details.txt" 2>&1
fi
for r in $reports; do
  echo "== $r"; ncu --import "$out/$r.ncu-rep" --page raw --csv --metrics "$metrics" 2>&1 | tail -n 3
done
