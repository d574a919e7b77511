import csv, gzip, sys, re, collections
def load(path):
    lines = gzip.open(path, 'rt').read().splitlines()
    i = next(k for k, l in enumerate(lines) if l.startswith('"Address"'))
    rows = list(csv.DictReader(lines[i:]))
    return rows
for path in sys.argv[1:]:
    rows = load(path)
    tot = sum(int(r["Instructions Executed"] or 0) for r in rows)
    samples = sum(int(r["Warp Stall Sampling (All Samples)"] or 0) for r in rows)
    print(f"== {path}: {len(rows)} SASS lines, {tot/1e6:.2f}M warp instructions, {samples} stall samples")
    op = collections.Counter()
    for r in rows:
        m = re.match(r"\s*(@!?U?P\w+\s+)?([A-Z0-9_]+)(\.[A-Z0-9_.]+)?", r["Source"])
        op[m.group(2) if m else r["Source"]] += int(r["Instructions Executed"] or 0)
    print("  by opcode:", ", ".join(f"{k} {v/1e6:.2f}M" for k, v in op.most_common(25)))
    top = sorted(rows, key=lambda r: -int(r["Instructions Executed"] or 0))[:40]
    for r in top:
        print(f"  {int(r['Instructions Executed']):>10} {r['Warp Stall Sampling (All Samples)']:>6} {r['Address'][-5:]} {r['Source'].strip()[:90]}")
