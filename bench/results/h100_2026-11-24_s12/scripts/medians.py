import csv, statistics as st, glob, sys
d = sys.argv[1]
runs = sorted(glob.glob(d + '/final_square_*.csv'))
per = {}
for i, f in enumerate(runs):
    rows = list(csv.DictReader(open(f)))
    om = {(r['dtype_in'], int(r['M'])): float(r['ms_median']) for r in rows if r['impl'] == 'omnigemm'}
    ve = {(r['dtype_in'], int(r['M'])): float(r['ms_median']) for r in rows if r['impl'] == 'vendor'}
    line = []
    for dt in ('f16', 'bf16'):
        ratios = [ve[(dt, s)] / om[(dt, s)] for s in (1024, 2048, 3072, 4096, 6144, 8192)]
        line.append(f"{dt} median {st.median(ratios):.3f} (lowest {min(ratios):.3f})")
        for s in (512, 1024, 2048, 3072, 4096, 6144, 8192):
            per.setdefault((dt, s), []).append(ve[(dt, s)] / om[(dt, s)])
    print(f"run {i+1}: " + "; ".join(line))
for dt in ('f16', 'bf16'):
    print(dt, " | ".join(f"{s}: {min(per[(dt,s)]):.3f}/{st.median(per[(dt,s)]):.3f}/{max(per[(dt,s)]):.3f}" for s in (512, 1024, 2048, 3072, 4096, 6144, 8192)))
