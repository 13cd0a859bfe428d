#!/usr/bin/env bash
# tests/snapshots-json.sh: the JSON form of CUDA caching-allocator
# snapshots. Every real pickle in tests/data/realdata/snapshot/ is
# turned into JSON here by Python (a restricted Unpickler that refuses every
# global, then json.dump), both forms are imported into two databases, and
# their figures must be the same, by SQL on the two databases and in the
# report's JSON. Cut and broken JSON, files named for the other form, the
# legacy shapes, unknown keys and the user's annotations (stages) are
# checked on small files Python writes in both forms, with the expected
# values computed here from the data.
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"

REAL=$VR_SRCDIR/tests/data/realdata/snapshot
cd "$TMP"
need python3 || true

cat >snapjs.py <<'PYEOF'
"""Helpers: pickle -> JSON, the synthetic cases, figures of a database."""
import json, pickle, sqlite3, sys

class DataOnly(pickle.Unpickler):
    def find_class(self, module, name):
        raise pickle.UnpicklingError("global %s.%s refused" % (module, name))

def plain(x):
    """What json.dump can write: tuples as lists, bytes as text, keys as text."""
    if isinstance(x, dict):
        return {str(k): plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [plain(v) for v in x]
    if isinstance(x, (bytes, bytearray)):
        return bytes(x).decode("latin-1")
    return x

def load(path):
    with open(path, "rb") as f:
        return DataOnly(f).load()

def tojson(src, dst):
    with open(dst, "w") as f:
        json.dump(plain(load(src)), f)

def q(db, sql):
    return [tuple(r) for r in db.execute(sql).fetchall()]

def figures(path):
    """What a user checks: counts per kind and action, the end state per
    device, frames and stacks, the top sites, settings, tallies, stages."""
    db = sqlite3.connect(path)
    f = {
        "events": dict(q(db, "SELECT kind, count FROM source_events")),
        "entries": q(db, "SELECT d.idx, t.action, count(*), sum(coalesce(t.bytes, 0)) FROM trace_entry t"
                         " JOIN device d ON d.id = t.device_id GROUP BY 1, 2 ORDER BY 1, 2"),
        "segments": q(db, "SELECT count(*), sum(total_bytes) FROM segment"),
        "blocks": q(db, "SELECT state, count(*), sum(bytes), sum(requested_bytes) FROM block"
                        " GROUP BY state ORDER BY state"),
        "end_state": q(db, "SELECT d.idx, s.final_reserved_bytes, s.final_allocated_bytes,"
                           " s.pending_free_bytes, s.expandable_segments, s.largest_free_block_bytes,"
                           " s.pre_existing_bytes FROM snapshot_summary s"
                           " JOIN device d ON d.id = s.device_id ORDER BY 1"),
        "frames": q(db, "SELECT count(*) FROM frame")[0][0],
        "stacks": q(db, "SELECT count(*) FROM stack")[0][0],
        "peak": q(db, "SELECT d.idx, s.peak_allocated_bytes FROM device_summary s"
                      " JOIN device d ON d.id = s.device_id ORDER BY 1"),
        "top_sites": q(db, "SELECT d.idx, fn.text, f.line, nn.text, s.bytes, s.count FROM alloc_site s"
                           " JOIN device d ON d.id = s.device_id LEFT JOIN frame f ON f.id = s.frame_id"
                           " LEFT JOIN name fn ON fn.id = f.filename_id"
                           " LEFT JOIN name nn ON nn.id = f.function_id ORDER BY 1, 5 DESC, 2, 3"),
        "settings": q(db, "SELECT key, value FROM allocator_setting ORDER BY key"),
        "tally": dict(q(db, "SELECT kind, count FROM source_tally")),
        "stages": q(db, "SELECT n.text, o.ts_ns, o.dur_ns FROM op o JOIN name n ON n.id = o.name_id"
                        " WHERE o.cat = 'user_annotation' ORDER BY 2, 1"),
        "ooms": q(db, "SELECT requested_bytes, device_free_bytes, total_allocated, total_reserved FROM oom_event"
                      " ORDER BY ts_ns"),
    }
    db.close()
    return f

def say(ok, desc, detail=""):
    print(("PASS\t%s" % desc) if ok else ("FAIL\t%s\t%s" % (desc, detail)))

def same(name, a, b):
    fa, fb = figures(a), figures(b)
    for k in fa:
        say(fa[k] == fb[k], "%s: %s the same from the pickle and the JSON" % (name, k),
            "pickle %r\njson   %r" % (fa[k], fb[k]))
    return fa

MiB = 1 << 20
T0 = 1700000000000000

def seg(device, address, blocks, **extra):
    d = {"device": device, "address": address, "total_size": sum(b["size"] for b in blocks),
         "allocated_size": sum(b["size"] for b in blocks if b["state"] == "active_allocated"),
         "active_size": 0, "requested_size": 0, "stream": 0, "segment_type": "large",
         "segment_pool_id": (0, 0), "frames": [], "blocks": blocks}
    d.update(extra)
    return d

def blk(size, state, **extra):
    d = {"size": size, "state": state, "requested_size": size, "frames": []}
    d.update(extra)
    return d

def entry(action, size, t, addr=1 << 40, **extra):
    d = {"action": action, "addr": addr, "size": size, "stream": 0, "time_us": t, "frames": []}
    d.update(extra)
    return d

# The keys PyTorch writes in each kind of dict (torch/csrc/cuda/Module.cpp,
# docs/formats/allocator-snapshot.md): any other is unknown, counted and named.
KNOWN = {
    "root": {"segments", "device_traces", "allocator_settings", "external_annotations",
             "host_segments", "host_traces"},
    "segment": {"device", "address", "total_size", "allocated_size", "active_size",
                "requested_size", "stream", "segment_type", "segment_pool_id",
                "is_expandable", "frames", "blocks"},
    "block": {"address", "size", "requested_size", "state", "frames", "history"},
    "history": {"addr", "real_size", "frames"},
    "trace_entry": {"action", "addr", "device_free", "size", "stream", "time_us", "frames",
                    "compile_context", "user_metadata"},
    "frame": {"filename", "line", "name", "fx_node_op", "fx_node_name", "fx_node_target",
              "fx_original_trace"},
}

def unknown_keys(snap):
    """(count, distinct "where.key" names) of the keys not in KNOWN."""
    found = []
    def look(kind, d):
        if isinstance(d, dict):
            found.extend("%s.%s" % (kind, k) for k in d if k not in KNOWN[kind])
    def frames(x):
        for f in x.get("frames") or []:
            look("frame", f)
    look("root", snap)
    for sg in snap["segments"]:
        look("segment", sg)
        frames(sg)
        for b in sg["blocks"]:
            look("block", b)
            frames(b)
            for h in b.get("history", [])[:1]:
                look("history", h)
                frames(h)
    for t in snap["device_traces"]:
        for e in t:
            look("trace_entry", e)
            frames(e)
    return len(found), sorted(set(found))

def strip_frames(x):
    if isinstance(x, dict):
        return {k: strip_frames(v) for k, v in x.items() if k != "frames"}
    if isinstance(x, list):
        return [strip_frames(v) for v in x]
    return x

def cases():
    """name -> (the snapshot, what must come out of it)."""
    out = {}
    fr = [{"filename": "/home/u/train.py", "line": 42, "name": "forward"},
          {"filename": "/usr/lib/python3/site-packages/torch/nn/modules/module.py", "line": 1, "name": "_call_impl"}]
    # A bare list of segments (old tools): no history.
    segs = [seg(0, 1 << 40, [blk(2 * MiB, "active_allocated"), blk(MiB, "inactive")]),
            seg(1, 1 << 41, [blk(4 * MiB, "active_allocated", frames=fr)])]
    out["bare-list"] = (segs, {
        "events": {"segment": 2, "block": 3},
        "end_state": [(0, 3 * MiB, 2 * MiB), (1, 4 * MiB, 4 * MiB)]})
    # Old blocks: frames and the real size in history[0], no address.
    hist = [seg(0, 1 << 40, [
        {"size": 2 * MiB, "state": "active_allocated",
         "history": [{"addr": 1 << 40, "real_size": 2 * MiB - 100, "frames": fr}]},
        {"size": MiB, "state": "active_allocated",
         "history": [{"addr": (1 << 40) + 2 * MiB, "real_size": MiB - 7}]},
        {"size": MiB, "state": "inactive"}])]
    for s in hist:
        del s["frames"]
    out["history"] = ({"segments": hist, "device_traces": [[]]}, {
        "events": {"segment": 1, "block": 3},
        "requested": sorted([2 * MiB - 100, MiB - 7]),
        "frames": 2, "stacks": 1,
        "end_state": [(0, 4 * MiB, 3 * MiB)]})
    # No frames anywhere; a history of one device.
    trace = [entry("segment_alloc", 8 * MiB, T0 + 1), entry("alloc", 2 * MiB, T0 + 2),
             entry("alloc", 4 * MiB, T0 + 3, addr=(1 << 40) + 2 * MiB),
             entry("free_requested", 4 * MiB, T0 + 4, addr=(1 << 40) + 2 * MiB),
             entry("free_completed", 4 * MiB, T0 + 5, addr=(1 << 40) + 2 * MiB)]
    nof = strip_frames({"segments": [seg(0, 1 << 40, [blk(2 * MiB, "active_allocated"),
                                                      blk(6 * MiB, "inactive")])],
                        "device_traces": [trace]})
    want_nof = {"events": {"segment": 1, "block": 2, "segment_alloc": 1, "alloc": 2,
                           "free_requested": 1, "free_completed": 1},
                "frames": 0, "stacks": 0, "peak": [(0, 6 * MiB)],
                "end_state": [(0, 8 * MiB, 2 * MiB)]}
    out["noframes"] = (nof, want_nof)
    # device_traces as one flat list of entries (device 0's).
    flat = dict(nof, device_traces=nof["device_traces"][0])
    out["flat-traces"] = (flat, want_nof)
    # Both names of a block freed but waiting on a stream; expandable segments.
    states = {"segments": [seg(0, 1 << 40, [blk(MiB, "active_allocated"), blk(2 * MiB, "active_awaiting_free"),
                                            blk(4 * MiB, "active_pending_free"), blk(MiB, "inactive")],
                               is_expandable=True)], "device_traces": []}
    out["states-expandable"] = (states, {
        "events": {"segment": 1, "block": 4},
        "pending_blocks": 2, "pending": [(0, 6 * MiB)], "expandable": [(0, 1)],
        "end_state": [(0, 8 * MiB, MiB)]})
    # Unknown keys at the top and inside segments, blocks and entries;
    # unknown actions.
    unk = json.loads(json.dumps(nof))
    unk["segments"][0]["new_segment_key"] = 1
    unk["segments"][0]["blocks"][0]["new_block_key"] = [1, 2]
    for e in unk["device_traces"][0]:
        e.update({"compile_context": "N/A", "user_metadata": "", "pool_id": [0, 0],
                  "brand_new": {"x": 1}})
    unk["device_traces"][0] += [entry("annotate", 0, T0 + 6, user_metadata="m"),
                                entry("future_action", 0, T0 + 7)]
    unk["device_traces"][0][1]["frames"] = [{"filename": "/home/u/train.py", "line": 3,
                                             "name": "f", "new_frame_key": 1}]
    unk["host_segments"] = []
    unk["future_key"] = {"a": [1, 2, 3]}
    count, names = unknown_keys(unk)
    want_unk = dict(want_nof, unknown_key=count, unknown_names=names, frames=1, stacks=1)
    want_unk["events"] = dict(want_nof["events"], other_action=2)
    out["unknown-keys"] = (unk, want_unk)
    # Pinned host memory (newer PyTorch): counted, not read; the device's
    # figures as without it.
    host = json.loads(json.dumps(nof))
    host["host_segments"] = [seg(-1, 1 << 30, [blk(MiB, "active_allocated")]) for _ in range(3)]
    host["host_traces"] = [[entry("alloc", MiB, T0), entry("free_completed", MiB, T0 + 1)],
                           [entry("alloc", 2 * MiB, T0 + 2)]]
    records = (len(host["host_segments"]), sum(len(t) for t in host["host_traces"]))
    out["host-memory"] = (host, dict(want_nof, host_memory=sum(records), unknown_key=0,
                                     events=dict(want_nof["events"], host_segment=records[0],
                                                 host_trace_entry=records[1])))
    # A flat host_traces list.
    flat_host = dict(host, host_traces=host["host_traces"][0])
    out["host-memory-flat"] = (flat_host, dict(want_nof, host_memory=records[0] + 2,
                                               events=dict(want_nof["events"],
                                                           host_segment=records[0],
                                                           host_trace_entry=2)))
    # Many distinct unknown keys: all counted, the first eight named.
    many = json.loads(json.dumps(nof))
    many["segments"][0].update({"k%02d" % i: i for i in range(12)})
    count, names = unknown_keys(many)
    out["many-unknown-keys"] = (many, dict(want_nof, unknown_key=count,
                                           unknown_names=sorted(names[:8] + ["..."])))
    # The user's stages: START/END pairs; an END whose START is gone runs
    # from the source's first time, a START without its END to its last.
    ann = [{"name": "step", "stage": "START", "device": 0, "time_us": T0},
           {"name": "init", "stage": "END", "device": 0, "time_us": T0 + 3},
           {"name": "forward", "stage": "START", "device": 0, "time_us": T0 + 1},
           {"name": "forward", "stage": "END", "device": 0, "time_us": T0 + 5},
           {"name": "backward <b>|x", "stage": "START", "device": 0, "time_us": T0 + 6},
           {"name": "backward <b>|x", "stage": "END", "device": 0, "time_us": T0 + 9},
           {"name": "step", "stage": "END", "device": 0, "time_us": T0 + 20},
           {"name": "optimizer", "stage": "START", "device": 0, "time_us": T0 + 21},
           {"stage": "START", "device": 0, "time_us": T0 + 22}]
    trace = [entry("segment_alloc", 8 * MiB, T0 + 2), entry("alloc", MiB, T0 + 2),
             entry("alloc", 4 * MiB, T0 + 7, addr=(1 << 40) + MiB),
             entry("free_requested", 4 * MiB, T0 + 8, addr=(1 << 40) + MiB),
             entry("free_completed", 4 * MiB, T0 + 8, addr=(1 << 40) + MiB),
             entry("alloc", MiB, T0 + 30, addr=(1 << 40) + 5 * MiB)]
    stg = {"segments": [seg(0, 1 << 40, [blk(MiB, "active_allocated"), blk(4 * MiB, "inactive"),
                                         blk(MiB, "active_allocated"), blk(2 * MiB, "inactive")])],
           "device_traces": [trace], "external_annotations": ann}
    first = min([a["time_us"] for a in ann if "name" in a] + [e["time_us"] for e in trace]) * 1000
    last = max([a["time_us"] for a in ann] + [e["time_us"] for e in trace]) * 1000
    pairs = [("step", T0, T0 + 20), ("forward", T0 + 1, T0 + 5), ("backward <b>|x", T0 + 6, T0 + 9)]
    stages = [(n, a * 1000, (b - a) * 1000) for n, a, b in pairs]
    stages.append(("init", first, (T0 + 3) * 1000 - first))
    stages.append(("optimizer", (T0 + 21) * 1000, last - (T0 + 21) * 1000))
    out["stages"] = (stg, {"stages": sorted(stages, key=lambda s: (s[1], s[0])),
                           "malformed": 1, "peak": [(0, 5 * MiB)],
                           "peak_stage": "backward <b>|x"})
    return out

def write_cases():
    for name, (data, want) in cases().items():
        with open(name + ".pickle", "wb") as f:
            pickle.dump(data, f, protocol=4)
        with open(name + ".json", "w") as f:
            json.dump(plain(data), f)
        with open(name + ".want", "w") as f:
            json.dump(want, f)

def check(name, path, want_path):
    want = json.load(open(want_path))
    f = figures(path)
    db = sqlite3.connect(path)
    got = {
        "events": f["events"],
        "end_state": [list(r[:3]) for r in f["end_state"]],
        "requested": sorted(r[0] for r in q(db, "SELECT requested_bytes FROM block WHERE state <> 'inactive'")),
        "frames": f["frames"], "stacks": f["stacks"],
        "peak": [list(r) for r in f["peak"]],
        "pending": [list(r[:1] + r[3:4]) for r in f["end_state"]],
        "pending_blocks": q(db, "SELECT count(*) FROM block WHERE state = 'active_pending_free'")[0][0],
        "expandable": [list(r[:1] + r[4:5]) for r in f["end_state"]],
        "unknown_key": f["tally"].get("unknown_key", 0),
        "unknown_names": sorted(q(db, "SELECT value FROM source_meta WHERE key = 'unknown_keys'")[0][0].split(", "))
            if "unknown_names" in want else None,
        "malformed": f["tally"].get("malformed_event", 0),
        "host_memory": f["tally"].get("host_memory", 0),
        "stages": [list(s) for s in f["stages"]],
    }
    for k, v in want.items():
        if k in got:
            exp = json.loads(json.dumps(v))
            say(got[k] == exp, "%s: %s" % (name, k), "got %r, want %r" % (got[k], exp))

if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "tojson":
        tojson(sys.argv[2], sys.argv[3])
    elif cmd == "cases":
        write_cases()
    elif cmd == "same":
        f = same(sys.argv[2], sys.argv[3], sys.argv[4])
        data = load(sys.argv[5])  # the oracle: the file's own count
        segs = len(data if isinstance(data, list) else data["segments"])
        say(f["events"].get("segment", 0) == segs and segs > 0,
            "%s: every segment of the file is in (%d)" % (sys.argv[2], segs),
            "got %r" % f["events"].get("segment"))
    elif cmd == "check":
        check(sys.argv[2], sys.argv[3], sys.argv[4])
PYEOF

# Imports FILE into DB (fresh) and finishes its analysis (report --format json).
import_both() {
    rm -f "$2" "$2.json"
    vr_run imp import "$1" --db "$2" -q
    [ "$rc" = 0 ] || { fail "$1: imported" "exit $rc: $(cat imp.err)"; return 1; }
    vr_run rep report --db "$2" --format json -o "$2.json"
    [ "$rc" = 0 ] || { fail "$1: reported" "exit $rc: $(cat rep.err)"; return 1; }
    return 0
}

#-- every real snapshot, in both forms ---------------------------------------------------

for f in "$REAL"/*.pickle; do
    name=${f##*/}
    name=${name%.pickle}
    "$PYTHON" snapjs.py tojson "$f" "$name.json" 2>py.err || { fail "$name: Python writes its JSON" "$(cat py.err)"; continue; }
    import_both "$f" "$name-p.db" && import_both "$name.json" "$name-j.db" || continue
    "$PYTHON" snapjs.py same "$name" "$name-p.db" "$name-j.db" "$f" >"$name.tap" 2>&1 \
        || echo "FAIL	$name: compared	$(tail -3 "$name.tap")" >>"$name.tap"
    tap_lines "$name.tap"
    got=$("$PYTHON" - "$name-p.db.json" "$name-j.db.json" <<'PYEOF' 2>&1 || true
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
def figures(d):
    # A device's figures; the paths of the files naturally differ.
    return [{k: v for k, v in dev.items() if k not in ("sources", "source_path")}
            for dev in d["devices"]]
fa, fb = figures(a), figures(b)
print("same" if fa == fb and fa else "differ: %r" % [
    (k, da[k], db.get(k)) for da, db in zip(fa, fb) for k in da if da[k] != db.get(k)][:3])
PYEOF
)
    [ "$got" = same ] && pass "$name: the report's device figures are the same from both forms" \
        || fail "$name: the report's device figures are the same from both forms" "$got"
    got=$(json_get "$name-j.db.json" 'd["sources"][0]["format"]')
    [ "$got" = snapshot_json ] && pass "$name: the JSON is read as snapshot_json" \
        || fail "$name: the JSON is read as snapshot_json" "$got"
done

#-- named for the other form: read by content -------------------------------------------

cp "$REAL/cs336-silmont-segments.pickle" pickle-named.json
cp cs336-silmont-segments.json json-named.pickle
for f in pickle-named.json:snapshot json-named.pickle:snapshot_json; do
    file=${f%%:*}
    want=${f#*:}
    import_both "$file" "$file.db" || continue
    got=$(sqlite3 "$file.db" 'SELECT format FROM source' 2>&1 || true)
    n=$(sqlite3 "$file.db" "SELECT count FROM source_events WHERE kind = 'segment'" 2>&1 || true)
    want_n=$(sqlite3 cs336-silmont-segments-p.db "SELECT count FROM source_events WHERE kind = 'segment'" 2>&1 || true)
    [ "$got" = "$want" ] && [ "$n" = "$want_n" ] && pass "$file: read by its content as $want ($n segments)" \
        || fail "$file: read by its content as $want" "format $got, $n segments (want $want_n)"
done

#-- cut and broken JSON -----------------------------------------------------------------

# Cut halfway through device_traces: the segments and the entries before
# the cut are in, and the import says it was cut.
"$PYTHON" - cs336-bcrafton.json <<'PYEOF' >cut.info
import sys
text = open(sys.argv[1]).read()
start = text.index('"device_traces"')
end = text.index(']]', start)
cut = (start + end) // 2
open("cut.json", "w").write(text[:cut])
print(cut)
PYEOF
vr_run cut import cut.json --db cut.db
[ "$rc" = 0 ] && pass "a JSON snapshot cut inside device_traces: exit 0" \
    || fail "a JSON snapshot cut inside device_traces: exit 0" "exit $rc: $(cat cut.err)"
grep -q '^vramreport: warning: cut.json: truncated at byte' cut.err && pass "a cut JSON snapshot: said on stderr" \
    || fail "a cut JSON snapshot: said on stderr" "$(cat cut.err)"
got=$(sqlite3 cut.db "SELECT (SELECT truncated FROM source),
    (SELECT count FROM source_events WHERE kind = 'segment') = (SELECT count(*) FROM segment),
    (SELECT count(*) FROM segment),
    (SELECT count(*) FROM trace_entry) > 0" 2>&1 || true)
want=$(sqlite3 cs336-bcrafton-j.db "SELECT 1, 1, (SELECT count(*) FROM segment), 1" 2>&1 || true)
full=$(sqlite3 cs336-bcrafton-j.db "SELECT count(*) FROM trace_entry" 2>&1 || true)
cutn=$(sqlite3 cut.db "SELECT count(*) FROM trace_entry" 2>&1 || true)
[ "$got" = "$want" ] && [ "$cutn" -lt "$full" ] \
    && pass "a cut JSON snapshot: every segment, and $cutn of $full trace entries, are in; truncated is set" \
    || fail "a cut JSON snapshot: segments and the entries before the cut are in" "got $got want $want; $cutn of $full entries"

# Broken structure: one line naming the file and the byte.
printf '{"segments": [{"device": 0, "total_size": 1, "blocks": []}]], "device_traces": []}' >bad.json
off=$("$PYTHON" -c 'print(open("bad.json").read().index("]]") + 1)')
vr_run bad import bad.json --db bad.db
[ "$rc" = 1 ] && [ "$(wc -l <bad.err | tr -d ' ')" = 1 ] && grep -q "^vramreport: bad.json: byte $off: expected" bad.err \
    && pass "malformed JSON: exit 1, one line with the byte offset ($off)" \
    || fail "malformed JSON: exit 1, one line with the byte offset ($off)" "exit $rc: $(cat bad.err)"
[ ! -e bad.db ] || [ "$(sqlite3 bad.db 'SELECT count(*) FROM segment' 2>/dev/null || echo 0)" = 0 ] \
    && pass "malformed JSON: nothing half-written" || fail "malformed JSON: nothing half-written"

# A broken record inside a good document is skipped and counted.
printf '{"segments": [{"device": 0, "total_size": 1048576, "blocks": [{"size": 1048576, "state": "inactive"}]}, {"device": 0, "total_size": : 5}], "device_traces": [[{"action": "alloc", "size": 1, "addr": 1, "time_us": 1}]]}' >rec.json
vr_run rec import rec.json --db rec.db -q
got=$(sqlite3 rec.db "SELECT (SELECT count(*) FROM segment), (SELECT count FROM source_tally WHERE kind = 'malformed_event'), (SELECT count(*) FROM trace_entry)" 2>&1 || true)
[ "$rc" = 0 ] && [ "$got" = "1|1|1" ] && pass "a broken record: skipped and counted, the rest read" \
    || fail "a broken record: skipped and counted, the rest read" "exit $rc, got $got: $(cat rec.err)"

#-- legacy shapes, unknown keys, stages: both forms ----------------------------------------

"$PYTHON" snapjs.py cases || fail "Python writes the synthetic snapshots"
for w in *.want; do
    name=${w%.want}
    for form in pickle json; do
        import_both "$name.$form" "$name-$form.db" || continue
        "$PYTHON" snapjs.py check "$name ($form)" "$name-$form.db" "$w" >"$name-$form.tap" 2>&1 \
            || echo "FAIL	$name ($form): checked	$(tail -3 "$name-$form.tap")" >>"$name-$form.tap"
        tap_lines "$name-$form.tap"
    done
    "$PYTHON" snapjs.py same "$name" "$name-pickle.db" "$name-json.db" "$name.pickle" >"$name.same" 2>&1 || true
    bad=$(grep -c '^FAIL' "$name.same" || true)
    [ "$bad" = 0 ] && pass "$name: every figure the same from both forms" \
        || fail "$name: every figure the same from both forms" "$(grep '^FAIL' "$name.same" | head -3)"
done

# The stage the peak fell in, in the report: JSON, Markdown (escaped), HTML.
want=$("$PYTHON" -c 'import json; print(json.load(open("stages.want"))["peak_stage"])')
for form in pickle json; do
    got=$(json_get "stages-$form.db.json" 'd["devices"][0].get("peak_stage")')
    [ "$got" = "$want" ] && pass "stages ($form): the report's peak_stage is '$want'" \
        || fail "stages ($form): the report's peak_stage" "got $got, want $want"
done
vr_run md report --db stages-json.db -o stages.md
grep -q '^The peak fell in the stage backward' stages.md && pass "Markdown: the stage the peak fell in" \
    || fail "Markdown: the stage the peak fell in" "exit $rc: $(grep -i stage stages.md || cat md.err)"
grep 'The peak fell in the stage' stages.md | grep -q '<b>|x' && fail "Markdown: the stage's name is escaped" "$(grep 'peak fell' stages.md)" \
    || pass "Markdown: the stage's name is escaped"
vr_run html report --db stages-json.db --format html -o stages.html
grep -q '<b>|x' stages.html && fail "HTML: the stage's name is escaped" || pass "HTML: the stage's name is escaped"
got=$(json_get noframes-json.db.json 'd["devices"][0].get("peak_stage", "absent")')
[ "$got" = absent ] && pass "no annotations: no peak_stage" || fail "no annotations: no peak_stage" "$got"

finish
