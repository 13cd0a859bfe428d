"""The job's report against each rank's own (tests/scale.sh,
tests/slurm/one-node.sh): own_peaks.py JOB.json OWN.json... prints one
PASS/FAIL line for the job's ranks[] (ranks 0..N-1) and one per rank's
own report (its device's peak is the job's row of that rank)."""
import json
import sys

job = json.load(open(sys.argv[1]))
peaks = {r["rank"]: r["peak_allocated_bytes"] for r in job["ranks"]}
own = sys.argv[2:]
print("%s\tthe job's ranks[]: ranks 0..%d" % ("PASS" if sorted(peaks) == list(range(len(own))) else "FAIL",
                                             len(own) - 1))
for p in own:
    d = json.load(open(p))["devices"][0]
    ok = peaks.get(d["rank"]) == d["peak_allocated_bytes"]
    print("%s\trank %d: its own report's peak, %s" % ("PASS" if ok else "FAIL", d["rank"],
                                                     d["peak_allocated_bytes"]))
