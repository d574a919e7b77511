#!/usr/bin/env bash
# A/B timing of omnigemm-bench builds on the GPU machine: for every shape and dtype the builds
# run in alternating processes (A, B, [C...], A, B, ...), so that the board's slow drift in
# clock and temperature falls on all alike; each process times only OmniGEMM (--no-vendor).
# Prints per shape the median (and range) of the per-process medians and each build / A.
#   usage: bash scripts/ab_bench.sh <reps> <out dir> <shapes> <dtypes> <bench A> <bench B> [<bench C> ...] [-- bench options]
#   e.g.:  bash scripts/ab_bench.sh 4 /tmp/ab 4096x4096x4096,2048x2048x2048 f16,bf16 head/omnigemm-bench new/omnigemm-bench
set -uo pipefail
reps="$1"; out="$2"; shapes="$3"; dtypes="$4"; shift 4
benches=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do benches+=("$1"); shift; done
[ $# -gt 0 ] && shift  # the "--"
mkdir -p "$out"; rm -f "$out/rows.csv" "$out/header.csv"
labels=(A B C D E F G H)
for shape in ${shapes//,/ }; do
  for dtype in ${dtypes//,/ }; do
    for rep in $(seq 1 "$reps"); do
      for i in "${!benches[@]}"; do
        "${benches[$i]}" --backend cuda --shapes "$shape" --dtype "$dtype" --no-vendor --no-plot --budget-ms 100 "$@" \
          --out "$out/run" > /dev/null 2>&1 || echo "failed: ${labels[$i]} $shape $dtype"
        [ -f "$out/header.csv" ] || head -1 "$out/run/results.csv" | sed "s/^/variant,/" > "$out/header.csv"
        tail -n +2 "$out/run/results.csv" | sed "s/^/${labels[$i]},/" >> "$out/rows.csv"
      done
    done
  done
done
python3 - "$out" "${#benches[@]}" <<'PY'
import csv, sys, os, statistics as st, collections
d, n = sys.argv[1], int(sys.argv[2])
labels = "ABCDEFGH"[:n]
rows = list(csv.DictReader(open(os.path.join(d, "header.csv")).readlines() + open(os.path.join(d, "rows.csv")).readlines()))
t = collections.defaultdict(lambda: collections.defaultdict(list))
cfg = collections.defaultdict(set)
for r in rows:
    if r["impl"] != "omnigemm": continue
    key = (r["dtype_in"], f'{r["M"]}x{r["N"]}x{r["K"]}')
    t[key][r["variant"]].append(float(r["ms_median"]) * 1e3)
    cfg[key].add(r["config"])
f = lambda x: f"{st.median(x):8.1f} ({min(x):.1f}-{max(x):.1f})" if x else "-"
print(f'{"dtype shape":24} ' + " ".join(f"{l + ' us (min-max)':>24}" for l in labels) + "  " + " ".join(f"{l}/A" for l in labels[1:]) + "  configs")
for k, v in t.items():
    a = v.get("A", [])
    ratios = " ".join(f"{st.median(v[l]) / st.median(a):.3f}" if a and v.get(l) else "  -  " for l in labels[1:])
    print(f"{' '.join(k):24} " + " ".join(f"{f(v.get(l, [])):>24}" for l in labels) + f"  {ratios}  {','.join(sorted(cfg[k]))}")
PY
