# Reduces the "TS <block> <chunk> v0..v24" lines of tl_steady.py's trace: per K-tile (the last 8 of the
# first work item, -8..-1, then the first 16 of the second, 0..15), medians over CTAs in microseconds of
#   lookahead  = consumer ready for the K-tile - producer issued it
#   wait       = consumer's wait on the full barrier
#   arrival    = consumer past the wait - issue (the data's latency when the consumer waited)
#   issue lag  = issue - release of the stage it reuses (the K-tile 4 earlier)
#   step       = consumer ready for the next K-tile - ready for this one
import sys, statistics as st, collections
vals = collections.defaultdict(dict)
for l in open(sys.argv[1]):
    f = l.split()
    if len(f) == 28 and f[0] == 'TS':
        b, c = int(f[1]), int(f[2])
        for i, v in enumerate(f[3:]): vals[b][c * 25 + i] = int(v)
rows = [[v.get(i, 0) for i in range(100)] for v in vals.values() if len(v) == 100]
if not rows: print("no TS lines"); sys.exit()
order = list(range(16, 24)) + list(range(16))
label = {q: (f"-{24 - q}" if q >= 16 else f"{q}") for q in order}
def med(xs):
    xs = [x for x in xs if x is not None]
    return f"{st.median(xs):6.2f}" if xs else "     -"
def d(r, a, b):  # r[a] - r[b] in us, None when either is missing
    return (r[a] - r[b]) / 1000 if r[a] and r[b] else None
print(f"{len(rows)} CTAs; k-tile: lookahead wait arrival issue-lag step (us, medians)")
for pos, q in enumerate(order):
    P, C0, C1, R = 2 + q, 26 + q, 50 + q, 74 + q
    prev4 = order[pos - 4] if pos >= 4 else None
    nxt = order[pos + 1] if pos + 1 < len(order) else None
    print(f"{label[q]:>4}: {med([d(r, C0, P) for r in rows])} {med([d(r, C1, C0) for r in rows])} {med([d(r, C1, P) for r in rows])}"
          f" {med([d(r, P, 74 + prev4) for r in rows]) if prev4 is not None else '     -'}"
          f" {med([d(r, 26 + nxt, C0) for r in rows]) if nxt is not None else '     -'}")
