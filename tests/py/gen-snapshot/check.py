# tests/gen-snapshot.sh runs this.
import io, pickle, sqlite3, sys
import os, sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from vrtest import DataOnly

path, truth_path, db_path = sys.argv[1:4]
truth = dict(kv.split("=") for kv in open(truth_path).read().split())
truth = {k: int(v) for k, v in truth.items()}


def result(ok, desc, detail=""):
    print("PASS\t%s" % desc if ok else "FAIL\t%s\t%s" % (desc, detail))


data = open(path, "rb").read()
snap = DataOnly(io.BytesIO(data)).load()
again = pickle.dumps(snap, protocol=4)
first = next((i for i in range(min(len(data), len(again))) if data[i] != again[i]), None)
result(again == data, "pickle.dumps of what pickle.load read gives the same bytes",
       "sizes %d and %d, first difference at byte %s" % (len(data), len(again), first))
result(data[:2] == b"\x80\x04" and data[2] == 0x95, "protocol 4, framed")
result(len(data) == truth["bytes"], "bytes as the generator says")

# What Python counts in the dict.
want = {"bytes": len(data)}
trace = snap["device_traces"][0]
want["entries"] = len(trace)
for action in ("alloc", "free_requested", "free_completed", "segment_alloc", "segment_free", "oom"):
    want[action] = sum(1 for e in trace if e["action"] == action)
segs = snap["segments"]
want["segments"] = len(segs)
want["blocks"] = sum(len(s["blocks"]) for s in segs)
want["reserved"] = sum(s["total_size"] for s in segs)
want["allocated"] = sum(b["size"] for s in segs for b in s["blocks"] if b["state"] != "inactive")
run = peak = 0
for e in trace:
    run += e["size"] if e["action"] == "alloc" else -e["size"] if e["action"] == "free_completed" else 0
    peak = max(peak, run)
want["peak_allocated"] = peak
stacks, frames = set(), set()
for e in trace + segs + [b for s in segs for b in s["blocks"]]:
    fr = tuple((f["filename"], f["line"], f["name"]) for f in e["frames"])
    if fr:
        stacks.add(fr)
    frames.update(fr)
want["frames"] = len(frames)
want["stacks"] = len(stacks)
# the history starts empty: it must end where the segments say
result(run == want["allocated"], "the history ends at the segments' allocated bytes",
       "%d vs %d" % (run, want["allocated"]))
seg_run = sum(e["size"] * (1 if e["action"] == "segment_alloc" else -1)
              for e in trace if e["action"] in ("segment_alloc", "segment_free"))
result(seg_run == want["reserved"], "the history ends at the segments' reserved bytes")
depths = [len(e["frames"]) for e in trace]
result(min(depths) >= 8 and max(depths) <= 30, "stacks of 8 to 30 frames")
entry_lists = {id(e["frames"]) for e in trace}
shared = sum(1 for s in segs for b in s["blocks"] if b["frames"] and id(b["frames"]) in entry_lists)
live = sum(1 for s in segs for b in s["blocks"] if b["state"] != "inactive")
result(shared == live, "each live block shares its frames list with a trace entry",
       "%d of %d" % (shared, live))
frees = [e for e in trace if e["action"] == "free_requested"]
result(any(e["frames"] is a["frames"] for e in frees[:50] for a in trace if a["action"] == "alloc"),
       "a free shares its frames list with its alloc")
for k, v in sorted(want.items()):
    result(truth.get(k) == v, "ground truth %s" % k, "generator %s, Python %s" % (truth.get(k), v))

# What vramreport stored.
db = sqlite3.connect(db_path)
one = lambda q: db.execute(q).fetchone()
got = {"entries": one("SELECT count(*) FROM trace_entry")[0]}
for action in ("alloc", "free_requested", "free_completed", "segment_alloc", "segment_free"):
    got[action] = one("SELECT count(*) FROM trace_entry WHERE action = '%s'" % action)[0]
got["oom"] = one("SELECT count(*) FROM oom_event")[0]
got["segments"], got["reserved"] = one("SELECT count(*), coalesce(sum(total_bytes), 0) FROM segment")
got["blocks"] = one("SELECT count(*) FROM block")[0]
got["allocated"], last_reserved = one(
    "SELECT total_allocated, total_reserved FROM mem_event ORDER BY ts_ns DESC, id DESC LIMIT 1")
got["peak_allocated"] = one("SELECT max(total_allocated) FROM mem_event")[0]
got["frames"] = one("SELECT count(*) FROM frame")[0]
got["stacks"] = one("SELECT count(*) FROM stack")[0]
for k, v in sorted(got.items()):
    result(v == want[k], "database %s" % k, "vramreport %s, Python %s" % (v, want[k]))
result(last_reserved == want["reserved"], "database: the timeline ends at the reserved bytes")
