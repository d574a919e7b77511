#!/usr/bin/env python3
# The SASS lines with the most warp-stall samples in an ncu source export
# (ncu --import X.ncu-rep --page source --csv --print-source sass > X.csv; see profile_h100.sh).
#   usage: python3 tools/ncu_top_stalls.py X.csv
import csv, sys
rows = list(csv.reader(open(sys.argv[1], errors='replace')))
# find header row containing 'Source'
hi = next(i for i, r in enumerate(rows) if 'Source' in r)
h = rows[hi]
src = h.index('Source')
cols = [i for i, c in enumerate(h) if 'Warp Stall Sampling (All' in c]
addr = h.index('Address') if 'Address' in h else None
print('columns:', [h[i] for i in cols])
data = []
for r in rows[hi + 1:]:
    if len(r) <= max(cols + [src]): continue
    try: v = float(r[cols[0]] or 0)
    except ValueError: continue
    data.append((v, r[addr] if addr is not None else '', r[src]))
tot = sum(d[0] for d in data) or 1
print('total samples', tot, 'lines', len(data))
for v, a, s in sorted(data, reverse=True)[:40]:
    print(f'{100*v/tot:5.1f}% {a} {s[:110]}')
