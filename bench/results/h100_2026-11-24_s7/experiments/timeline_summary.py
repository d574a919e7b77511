import sys, statistics as st
A={};B={};P={}
for l in open(sys.argv[1]):
    f=l.split()
    if not f: continue
    if f[0]=='TLA': A[int(f[1])]=list(map(int,f[2:]))
    if f[0]=='TLB': B[int(f[1])]=list(map(int,f[2:]))
    if f[0]=='TLP': P[int(f[1])]=list(map(int,f[2:]))
if not A: print("no TL lines"); sys.exit()
def med(v): return f"{st.median(v)/1000:.2f}" if v else "-"
def rng(v): return f"{min(v)/1000:.2f}/{st.median(v)/1000:.2f}/{max(v)/1000:.2f}" if v else "-"
stats={}
ends=[]; first=[]
for b in A:
    a=A[b]; n=a[0]; ev=a[1:17]+(B.get(b,[-1]*17)[0:16]); end=a[17]
    prod=[B.get(b,[-1]*17)[16]]+P.get(b,[-1]*7)
    ends.append(end)
    tiles=[ev[4*j:4*j+4] for j in range(min(n,8))]
    if tiles and tiles[0][1]>=0: first.append(tiles[0][1])
    if prod[0]>=0: stats.setdefault('first_tma',[]).append(prod[0])
    for j,(s,d,m,h) in enumerate(tiles):
        if min(s,d,m,h) < 0: continue
        stats.setdefault('data_wait',[]).append(d-s)
        stats.setdefault('math',[]).append(m-d)
        stats.setdefault('hold',[]).append(h-m)
        if j+1 < len(tiles) and tiles[j+1][1]>=0:
            stats.setdefault('gap(mathdone->next data)',[]).append(tiles[j+1][1]-m)
            stats.setdefault('next start - hold end',[]).append(tiles[j+1][0]-h)
            if j+1 < len(prod) and prod[j+1]>=0:
                stats.setdefault('next tile: first TMA issue -> data',[]).append(tiles[j+1][1]-prod[j+1])
                stats.setdefault('next tile: first TMA issue - mathdone',[]).append(prod[j+1]-m)
print(f"{len(A)} CTAs; first data {rng(first)} us; end {rng(ends)} us")
for k,v in stats.items(): print(f"  {k}: min/med/max {rng(v)} us (n={len(v)})")
