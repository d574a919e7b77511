#!/usr/bin/env bash
# Performance probe on the GPU machine: for each "MxNxK dtype config" line of a plan file, the
# event-timed median of omnigemm-bench (forced config, cuBLAS/cuBLASLt in the same run) and, with
# PROBE_NCU=1, Nsight Compute's kernel duration, clock, tensor-pipe, L2 and DRAM rates of the
# same launch. Event time per launch well above the kernel's duration means the host (or the
# launch path) is the limit, not the kernel.
#   usage (repo root, binaries carried): bash tools/perf_probe.sh <bench binary> <plan file> <out dir>
#   plan lines: 4096x4096x4096 f16 sm90_wgmma:128x256x64-g16-s4-w12-coop   ("-": the tuner's choice;
#   "cublas": Nsight Compute profiles the vendor library's kernel of that shape instead); further
#   words go to omnigemm-bench as they are (e.g. --b-layout col); PROBE_EXTRA_METRICS adds
#   comma-separated Nsight Compute metrics
set -uo pipefail
bench="$1"; plan="$2"; out="$3"
mkdir -p "$out"
echo "== $(date -u '+%Y-%m-%d %H:%M UTC')  $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
cublas_dir="$(python3 -c 'import nvidia.cublas, os; print(os.path.join(os.path.dirname(nvidia.cublas.__file__), "lib"))' 2>/dev/null || true)"
export OMNIGEMM_CUBLAS_DIR="${OMNIGEMM_CUBLAS_DIR:-$cublas_dir}"
metrics=gpu__time_duration.sum,sm__cycles_active.min,sm__cycles_active.avg,sm__cycles_active.max,sm__cycles_elapsed.max,sm__cycles_elapsed.avg.per_second,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,lts__t_bytes.sum.per_second,dram__bytes_read.sum.per_second,launch__grid_size,launch__cluster_dim_x
metrics="$metrics${PROBE_EXTRA_METRICS:+,$PROBE_EXTRA_METRICS}"  # e.g. dram__bytes_read.sum
n=0
while read -r shape dtype config extra; do
  [ -z "$shape" ] || [ "${shape:0:1}" = "#" ] && continue
  n=$((n + 1))
  cfg=(); kernels='gemm_tma|gemm_mma|gemm_generic'; vendor=(--no-vendor)
  case "$config" in
    -) ;;
    cublas) kernels='nvjet|xmma|cutlass'; vendor=() ;;
    *) cfg=(--config "$config") ;;
  esac
  "$bench" --backend cuda --shapes "$shape" --dtype "$dtype" "${cfg[@]}" $extra --no-plot --budget-ms 120 \
    --out "$out/b$n" > "$out/bench_$n.log" 2>&1
  python3 - "$out/b$n/results.csv" "[$n] $shape $dtype $extra" <<'PY'
import csv, sys
try: rows = list(csv.DictReader(open(sys.argv[1])))
except OSError: print(sys.argv[2], "no results"); sys.exit()
get = lambda impl: next((r for r in rows if r["impl"] == impl), None)
o, v = get("omnigemm"), get("vendor")
def t(r): return f'{float(r["ms_median"])*1e3:.1f} us (host {r["host_us_per_launch"]}) {float(r["tflops"]):.0f} TF/s'
print(sys.argv[2], o and f'{o["config"]} {t(o)} {o["status"]}', v and f'| vendor {t(v)} | ratio {o["ratio_vendor_over_omnigemm"]}')
PY
  if [ "${PROBE_NCU:-0}" = 1 ]; then
    ncu --clock-control none -k regex:"$kernels" -s 40 -c 1 --metrics "$metrics" --csv \
      "$bench" --backend cuda --shapes "$shape" --dtype "$dtype" "${cfg[@]}" $extra "${vendor[@]}" --no-plot --budget-ms 20 \
      --out "$out/n$n" > "$out/ncu_$n.csv" 2> "$out/ncu_$n.err"
    python3 - "$out/ncu_$n.csv" <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1], errors='replace')) if len(r) > 10]
if len(rows) < 2: print("    ncu: no data"); sys.exit()
h = rows[0]; name, unit, val = h.index("Metric Name"), h.index("Metric Unit"), h.index("Metric Value")
short = lambda m: m.replace("__", ":").replace(".avg.pct_of_peak_sustained_active", "%").replace(".sum.per_second", "/s").replace(".sum", "")
print("    ncu: " + "  ".join(f"{short(r[name])}={r[val]}{r[unit]}" for r in rows[1:]))
PY
  fi
done < "$plan"
