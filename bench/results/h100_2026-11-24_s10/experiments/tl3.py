# Summarises "TL blk v0..v27" lines (absolute %globaltimer ns) of one launch: per-CTA times
# relative to the earliest entry, medians over CTAs (us).
import sys, statistics as st
rows = []
for l in open(sys.argv[1]):
    f = l.split()
    if len(f) in (30, 34) and f[0] == 'TL': rows.append(list(map(int, f[2:])))
if not rows: print("no TL lines"); sys.exit()
base = min(r[0] for r in rows)
def rel(v): return (v - base) / 1000 if v else None
def med(vals):
    v = [x for x in vals if x is not None]
    return f"{st.median(v):6.2f} [{min(v):6.2f},{max(v):6.2f}] n={len(v)}" if v else "-"
print(f"{len(rows)} CTAs")
print("entry      ", med([rel(r[0]) for r in rows]))
print("waited     ", med([rel(r[1]) for r in rows]))
for j in range(6):
    if not any(r[4 + j] for r in rows): break
    print(f"tile {j}: k0 issued", med([rel(r[4 + j]) for r in rows]), " first data", med([rel(r[10 + j]) for r in rows]))
    print(f"        retired  ", med([rel(r[16 + j]) for r in rows]), " epi done", med([rel(r[22 + j]) for r in rows]))
    print(f"        k0 latency", med([(r[10 + j] - r[4 + j]) / 1000 if r[10 + j] and r[4 + j] else None for r in rows]),
          " epi", med([(r[22 + j] - r[16 + j]) / 1000 if r[22 + j] and r[16 + j] else None for r in rows]))
    if j < 4 and len(rows[0]) > 28:
        print(f"        ready to wait for k0 (after bookkeeping)", med([(r[28 + j] - r[22 + j - 1]) / 1000 if j > 0 and r[28 + j] and r[22 + j - 1] else None for r in rows]), "us after prev epi done;  data wait", med([(r[10 + j] - r[28 + j]) / 1000 if r[28 + j] and r[10 + j] else None for r in rows]))
    if j > 0:
        print(f"        transition (prev retired -> first data)", med([(r[10 + j] - r[16 + j - 1]) / 1000 if r[10 + j] and r[16 + j - 1] else None for r in rows]),
              " k0 issue before prev retire", med([(r[16 + j - 1] - r[4 + j]) / 1000 if r[4 + j] and r[16 + j - 1] else None for r in rows]))
print("c0 exit    ", med([rel(r[2]) for r in rows]), " c1 exit", med([rel(r[3]) for r in rows]))
print("last retire -> c0 exit", med([(r[2] - max(r[16:22])) / 1000 for r in rows]))
print("span (max exit - min entry)", f"{(max(max(r[2], r[3]) for r in rows) - base) / 1000:.2f}")
