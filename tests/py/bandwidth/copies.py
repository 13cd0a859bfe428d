# tests/bandwidth.sh runs this.
import gzip, json, sys
path, device, peak = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
d = json.load(gzip.open(path) if path.endswith(".gz") else open(path))
groups = {True: [], False: []}
for e in d["traceEvents"]:
    a = e.get("args", {})
    if e.get("cat") not in ("gpu_memcpy", "gpu_memset") or a.get("device") != device:
        continue
    b, ts, dur = a.get("bytes", 0), round(e["ts"] * 1000), round(e["dur"] * 1000)
    if b > 0 and dur > 0:
        host = any(k in e["name"] for k in ("HtoD", "DtoH", "HtoH"))
        groups[host].append((ts, dur, b, e["name"]))
def busy(ops):
    total, end, start = 0, None, None
    for ts, dur, _, _ in sorted(ops):
        if end is None or ts > end:
            if end is not None:
                total += end - start
            start, end = ts, ts + dur
        else:
            end = max(end, ts + dur)
    return total + (end - start if end is not None else 0)
on = groups[False]
nbytes, t = sum(o[2] for o in on), busy(on)
rate = nbytes * 1e9 / t
long = [o for o in on if o[1] >= 10000]
best = max(long, key=lambda o: o[2] / o[1]) if long else None
hb, ht = sum(o[2] for o in groups[True]), busy(groups[True])
print(json.dumps({"ops": len(on), "bytes": nbytes, "busy": t, "rate": round(rate),
                  "share": round(rate / peak, 4),
                  "best": [best[3], best[2], best[1], round(best[2] * 1e9 / best[1]),
                           round(best[2] * 1e9 / best[1] / peak, 4)] if best else None,
                  "host": [len(groups[True]), hb, ht, round(hb * 1e9 / ht)]
                          if groups[True] else [0, None, None, None]},
                 sort_keys=True))
