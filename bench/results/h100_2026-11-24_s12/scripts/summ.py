import csv, sys, os
# usage: summ.py csv... : prints ours vs vendor per row
for path in sys.argv[1:]:
    rows = list(csv.DictReader(open(path)))
    print("==", os.path.basename(path))
    for r in rows:
        if r["impl"] != "omnigemm": continue
        v = next((x for x in rows if x["impl"] == "vendor" and x["M"] == r["M"] and x["N"] == r["N"] and x["K"] == r["K"] and x["dtype_in"] == r["dtype_in"]), None)
        vt = float(v["ms_median"])*1e3 if v else float("nan")
        print(f'{r["dtype_in"]} {r["M"]}x{r["N"]}x{r["K"]} {r["config"]} ours {float(r["ms_median"])*1e3:.1f} us vendor {vt:.1f} us ratio {r["ratio_vendor_over_omnigemm"]} {r["status"]} {r["check"]}')
