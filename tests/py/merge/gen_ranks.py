"""Rank traces of one job from one generated trace (tests/merge.sh,
tests/scale.sh): gen_ranks.py TRACE.json OUTDIR N [FIRST]
writes OUTDIR/rankR.json for R in FIRST..FIRST+N-1: TRACE with
distributedInfo saying rank R of the job, every byte figure of its memory
events scaled by 1 + (R mod 7) / 10 (so the ranks peak apart, the same
shape), its times shifted by R ms."""
import json
import os
import sys

src, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
first = int(sys.argv[4]) if len(sys.argv) > 4 else 0
base = json.load(open(src))
KEYS = ("Bytes", "Total Allocated", "Total Reserved")
for r in range(first, first + n):
    # distributedInfo first, as real traces have it (ahead of the events)
    t = {"distributedInfo": {"backend": "nccl", "rank": r, "world_size": first + n}}
    t.update(json.loads(json.dumps(base)))
    num, den = 10 + r % 7, 10
    for e in t["traceEvents"]:
        if "ts" in e:
            e["ts"] = e["ts"] + 1000 * r
        a = e.get("args")
        if e.get("name") == "[memory]" and a:
            for k in KEYS:
                if k in a:
                    a[k] = a[k] * num // den
            if "Addr" in a:
                a["Addr"] = a["Addr"] * num // den  # blocks stay apart
    json.dump(t, open(os.path.join(out, "rank%d.json" % r), "w"))
