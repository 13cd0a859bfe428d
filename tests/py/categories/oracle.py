# tests/categories.sh runs this.
import collections, json, sqlite3, sys

CATEGORIES = ["parameter", "optimizer_state", "input", "temporary", "activation", "kv_cache",
              "gradient", "autograd_detail", "unknown"]
PEAK_GROUP = {"forward": "forward", "backward": "backward", "optimizer": "optimizer",
              "zero_grad": "optimizer", "loading": "other", "before": "other"}


def out(ok, desc, detail=""):
    print("PASS\t%s" % desc if ok else "FAIL\t%s\t%s" % (desc, detail))


def truth_at_peak(truth):
    """The first event with the highest total, and what was live then."""
    peak_seq = max(range(len(truth["timeline"])),
                   key=lambda i: (truth["timeline"][i][2], -i)) + 1
    live = collections.Counter()
    for a in truth["allocations"]:
        if a["alloc_seq"] <= peak_seq and (a["free_seq"] is None or a["free_seq"] > peak_seq):
            live[a["category"]] += a["bytes"]
    return truth["timeline"][peak_seq - 1][2], live


LIVE_AT_PEAK = """
SELECT coalesce(a.category, 'NULL'), sum(a.bytes) FROM device_summary ds
  JOIN mem_event pe ON pe.id = ds.peak_allocated_event_id
  JOIN allocation a ON a.device_id = ds.device_id AND a.source_id = ds.source_id
 WHERE (a.alloc_ts_ns < pe.ts_ns OR (a.alloc_ts_ns = pe.ts_ns AND a.alloc_event_id <= pe.id))
   AND (a.free_ts_ns IS NULL OR a.free_ts_ns > pe.ts_ns
        OR (a.free_ts_ns = pe.ts_ns AND a.free_event_id > pe.id))
 GROUP BY 1"""


def main(name, truth_path, db_path, report_path):
    truth = json.load(open(truth_path))
    db = sqlite3.connect(db_path)
    peak, want = truth_at_peak(truth)
    got = dict(db.execute(LIVE_AT_PEAK).fetchall())
    db_peak, unknown = db.execute(
        "SELECT peak_allocated_bytes, live_unknown_bytes FROM device_summary").fetchone()
    out(db_peak == peak, "%s: the peak is the truth's (%d)" % (name, peak), str(db_peak))
    for c in CATEGORIES:
        w, g = want.get(c, 0), got.get(c, 0)
        out(abs(w - g) <= peak * 0.02,
            "%s: %s live at the peak: %d bytes (within 2%% of the peak)" % (name, c, w),
            "got %d" % g)
    out("NULL" not in got and set(got) <= set(CATEGORIES),
        "%s: every allocation live at the peak has one of the nine categories" % name,
        str(sorted(got)))
    out(unknown == truth["preexisting_bytes"] and sum(got.values()) + unknown == peak,
        "%s: memory live before the trace began stays unknown (%d bytes), the rest is "
        "categorised" % (name, truth["preexisting_bytes"]),
        "unknown %s, categorised %d" % (unknown, sum(got.values())))
    # The peak of each phase of each step.
    want_pp = {}
    for step, phase, total in truth["timeline"]:
        key = (step, PEAK_GROUP[phase])
        want_pp[key] = max(want_pp.get(key, 0), total)
    report = json.load(open(report_path))
    got_pp = {(p["step"], p["phase"]): p["peak_allocated_bytes"]
              for p in report["devices"][0]["phase_peaks"]}
    out(want_pp == got_pp, "%s: devices[].phase_peaks: the peak of each phase of each step "
        "(%d)" % (name, len(want_pp)),
        str(sorted(set(want_pp.items()) ^ set(got_pp.items()), key=str)[:6]))
    # Phases: one run of each kind per micro-batch, backward on autograd's thread.
    runs = collections.Counter((s, p) for s, p in truth["phases"])
    rows = db.execute("SELECT step, kind, tid FROM phase").fetchall()
    got_runs = collections.Counter((s, k) for s, k, _ in rows)
    out(got_runs == runs, "%s: the phases of each step, from the ops (%d)" % (name, len(rows)),
        str(sorted(set(got_runs.items()) ^ set(runs.items()), key=str)[:6]))
    bwd_tids = {t for _, k, t in rows if k == "backward"}
    out(bwd_tids <= {truth["autograd_tid"]}, "%s: backward runs on autograd's thread" % name,
        str(bwd_tids))


main(*sys.argv[1:])
