"""tests/merge.sh's oracle: compare.py JOB.json RANK.json... [--all ALL.json]
Each rank's device figures in the merged job's JSON report EQUAL those of
that rank's own report (every member of the device but its database ids),
and its findings (kind, severity, title) and OOM errors theirs; with
--all, the same figures equal those of one run over all the rank files.
Prints ok/FAIL lines; exits 1 on any FAIL."""
import json
import sys

# a device's members that are the database's, not the rank's figures
IDS = {"db_id", "source_id", "device_db_id", "finding_id", "oom_id", "id_in_db"}


def strip(v):
    if isinstance(v, dict):
        return {k: strip(x) for k, x in v.items() if k not in IDS}
    if isinstance(v, list):
        return [strip(x) for x in v]
    return v


def by_rank(doc):
    """Devices by (rank, label); a device of no rank by (its source's
    path, label)."""
    out = {}
    for d in doc["devices"] + doc.get("more_devices", []):
        rank = d.get("rank")
        out[(rank if rank is not None else d.get("source_path"), d["id"])] = d
    return out


def findings(doc, rank=None, job_wide=False):
    """(kind, severity, rank, title) of each finding: of one rank (not
    rank-imbalance, which compares ranks: a rank's own report sees one),
    or with job_wide all of them."""
    return sorted((f.get("kind"), f.get("severity"), str(f.get("rank")), f.get("title"))
                  for f in doc.get("findings", [])
                  if job_wide or (f.get("rank") == rank and f.get("kind") != "rank-imbalance"))


def ooms(doc, rank):
    return sorted((o.get("ts_ns"), o.get("requested_bytes"))
                  for o in doc.get("oom_events", []) if o.get("rank") == rank)


bad = 0


def check(desc, got, want):
    global bad
    if got == want:
        print("ok", desc)
        return
    bad += 1
    print("FAIL", desc)
    if isinstance(got, dict) and isinstance(want, dict):
        for k in sorted(set(got) | set(want)):
            if got.get(k) != want.get(k):
                print("   ", k, "merged:", json.dumps(got.get(k))[:300])
                print("   ", k, "own:   ", json.dumps(want.get(k))[:300])
    else:
        print("    merged:", json.dumps(got)[:600])
        print("    own:   ", json.dumps(want)[:600])


args = sys.argv[1:]
alldoc = None
if "--all" in args:
    i = args.index("--all")
    alldoc = json.load(open(args[i + 1]))
    del args[i:i + 2]
job = json.load(open(args[0]))
jr = by_rank(job)
n = 0
for path in args[1:]:
    own = json.load(open(path))
    for key, d in by_rank(own).items():
        n += 1
        m = jr.get(key)
        check("rank %s %s: in the merged report" % key, m is not None, True)
        if m is None:
            continue
        check("rank %s %s: every figure its own report's" % key, strip(m), strip(d))
        check("rank %s: findings its own report's" % key[0], findings(job, key[0]),
              findings(own, key[0]))
        check("rank %s: OOM errors its own report's" % key[0], ooms(job, key[0]),
              ooms(own, key[0]))
        if alldoc is not None:
            a = by_rank(alldoc).get(key)
            fig = ("peak_allocated_bytes", "peak_allocated_ts_ns", "peak_reserved_bytes",
                   "peak_reserved_ts_ns", "peak_breakdown", "out_of_memory_count",
                   "top_sites", "live_at_peak_bytes", "steps")
            check("rank %s %s: the peaks, breakdown, OOMs, sites of one run over all" % key,
                  {k: m.get(k) for k in fig}, {k: (a or {}).get(k) for k in fig})
if alldoc is not None:
    check("findings (rank-imbalance too) those of one run over all", findings(job, job_wide=True),
          findings(alldoc, job_wide=True))
    check("ranks_summary that of one run over all", job.get("ranks_summary"),
          alldoc.get("ranks_summary"))
check("ranks compared: %d" % n, n > 0, True)
sys.exit(1 if bad else 0)
