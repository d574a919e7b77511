#!/usr/bin/env python3
"""Plot omnigemm-bench results like the Triton tutorial's perf_report: throughput against
problem size, one line per backend x implementation (OmniGEMM, vendor) x dtype.

usage: plot.py RESULTS.json OUT_PREFIX      writes OUT_PREFIX.png and OUT_PREFIX.svg
(one pair per sweep when the file holds several sweeps: OUT_PREFIX-<sweep>.png/.svg)
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def short_label(row):
    if row["impl"] == "omnigemm":
        name = "OmniGEMM"
    else:
        name = row["label"].split(" (")[0]
        name = name.replace(" on exact f32 copies of the f16 inputs", " (f32 copies)")
        name = name.replace(" on exact f32 copies of the bf16 inputs", " (f32 copies)")
    dt = row["dtype_in"] if row["dtype_in"] == row["dtype_out"] else row["dtype_in"] + "->" + row["dtype_out"]
    epi = " +leaky" if row["epilogue"] != "none" else ""
    return f'{row["backend"]}: {name} {dt}{epi}'


def plot(rows, sweep, prefix, meta):
    rows = [r for r in rows if r["sweep"] == sweep and r["status"] == "ok" and r["tflops"] is not None]
    if not rows:
        return False
    cpu_only = all(r["backend"] == "cpu" or r["tflops"] < 1.0 for r in rows)  # GFLOP/s then
    scale, unit = (1e3, "GFLOP/s") if cpu_only else (1.0, "TFLOP/s")
    categorical = sweep in ("list", "llm")
    fig, ax = plt.subplots(figsize=(10, 6))
    series = {}
    for r in rows:
        series.setdefault(short_label(r), []).append(r)
    styles = {"omnigemm": "-", "vendor": "--"}
    for label, rs in sorted(series.items()):
        rs.sort(key=lambda r: r["x"])
        xs = [r["x"] for r in rs]
        ys = [r["tflops"] * scale for r in rs]
        ax.plot(xs, ys, styles.get(rs[0]["impl"], "-"), marker="o", markersize=3, label=label)
    if categorical:
        ticks = sorted({(r["x"], f'{r["M"]}x{r["N"]}x{r["K"]}') for r in rows})
        ax.set_xticks([t[0] for t in ticks])
        ax.set_xticklabels([t[1] for t in ticks], rotation=45, ha="right", fontsize=8)
        ax.set_xlabel("M x N x K")
    else:
        ax.set_xlabel("K (M = N fixed)" if sweep == "k" else "M = N = K")
    ys_all = [r["tflops"] * scale for r in rows if r["tflops"] > 0]
    if ys_all and max(ys_all) / min(ys_all) > 30:  # e.g. a CPU Vulkan device next to the CPU backend
        ax.set_yscale("log")
    ax.set_ylabel(unit + " (median)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    devices = sorted({f'{r["backend"]}: {r["device"]}' for r in rows})
    ax.set_title("OmniGEMM vs vendor GEMM (" + sweep + " sweep)\n" + "; ".join(devices) + "\n" + meta, fontsize=9)
    fig.tight_layout()
    fig.savefig(prefix + ".png", dpi=120)
    fig.savefig(prefix + ".svg")
    plt.close(fig)
    print(f"wrote {prefix}.png and {prefix}.svg")
    return True


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    with open(sys.argv[1]) as f:
        data = json.load(f)
    rows = data["rows"]
    sweeps = sorted({r["sweep"] for r in rows})
    meta = data.get("date", "")
    any_plot = False
    for s in sweeps:
        prefix = sys.argv[2] if len(sweeps) == 1 else f"{sys.argv[2]}-{s}"
        any_plot |= plot(rows, s, prefix, meta)
    if not any_plot:
        print("nothing to plot (no successful rows)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
