#!/usr/bin/env bash
# tests/gen-snapshot.sh: the synthetic allocator snapshot that `make bench`
# imports (tests/bench/gen_snapshot.c) must not rot. On a small
# size, checked against Python, the oracle:
#   - Python's pickle.load (an Unpickler refusing every global) reads it,
#     and pickle.dumps(protocol=4) of what it read gives back the very same
#     bytes: the file is laid out exactly as pickle.dump lays out the dict
#     (frames, memo, BINGET of shared objects, batches of 1000);
#   - the generator's ground truth (entries per action, segments, blocks,
#     reserved, allocated, peak, frames, stacks) is what Python counts in
#     the loaded dict;
#   - vramreport imports it and its database holds the same figures.
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"

GEN=$VR_BUILDDIR/tests/bench/gen_snapshot
cd "$TMP"
need python3 || true
if [ ! -x "$GEN" ]; then
    fail "gen_snapshot is built" "$GEN is missing: make tests/bench/gen_snapshot (make check builds it)"
    finish
fi

# 2,100 entries crosses two APPENDS batches; 31,000 a memo past 65,535
# slots and a few segment_free entries.
for n in 2100 31000; do
    "$GEN" --seed 7 --entries $n >snap$n.pickle 2>gen$n.err ||
        fail "gen_snapshot --entries $n runs" "$(cat gen$n.err)"
    "$GEN" --seed 7 --entries $n 2>/dev/null | cmp -s - snap$n.pickle &&
        pass "gen_snapshot is deterministic ($n entries)" ||
        fail "gen_snapshot is deterministic ($n entries)"
    sed -n 's/^gen: //p' gen$n.err >truth$n.txt
    vr_run import$n import snap$n.pickle --db snap$n.db --quiet
    [ "$rc" = 0 ] && pass "vramreport imports the $n-entry snapshot" ||
        fail "vramreport imports the $n-entry snapshot" "$(cat import$n.err)"
    "$PYTHON" - snap$n.pickle truth$n.txt snap$n.db >check$n.tap 2>check$n.err <<'PYEOF' || cat check$n.err
import io, pickle, sqlite3, sys

path, truth_path, db_path = sys.argv[1:4]
truth = dict(kv.split("=") for kv in open(truth_path).read().split())
truth = {k: int(v) for k, v in truth.items()}


def result(ok, desc, detail=""):
    print("PASS\t%s" % desc if ok else "FAIL\t%s\t%s" % (desc, detail))


class DataOnly(pickle.Unpickler):
    def find_class(self, module, name):
        raise pickle.UnpicklingError("refused: %s.%s" % (module, name))


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
PYEOF
    [ -s check$n.tap ] || printf 'FAIL\tthe Python check ran\n' >check$n.tap
    tap_lines check$n.tap
done
finish
