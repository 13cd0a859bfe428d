# tests/snapshots-json.sh runs this.
"""Helpers: pickle -> JSON, the synthetic cases, figures of a database."""
import json, pickle, sqlite3, sys
import os
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from vrtest import load_pickle

def plain(x):
    """What json.dump can write: tuples as lists, bytes as text, keys as text."""
    if isinstance(x, dict):
        return {str(k): plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [plain(v) for v in x]
    if isinstance(x, (bytes, bytearray)):
        return bytes(x).decode("latin-1")
    return x

def tojson(src, dst):
    with open(dst, "w") as f:
        json.dump(plain(load_pickle(src)), f)

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
        data = load_pickle(sys.argv[5])  # the oracle: the file's own count
        segs = len(data if isinstance(data, list) else data["segments"])
        say(f["events"].get("segment", 0) == segs and segs > 0,
            "%s: every segment of the file is in (%d)" % (sys.argv[2], segs),
            "got %r" % f["events"].get("segment"))
    elif cmd == "check":
        check(sys.argv[2], sys.argv[3], sys.argv[4])
