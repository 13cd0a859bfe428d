# tests/snapshot-ooms.sh runs this.
"""Compares the database and the JSON report with the forward model."""
import json, sqlite3, sys
want = json.load(open(sys.argv[1]))
db = sqlite3.connect(sys.argv[2])
rep = json.load(open(sys.argv[3]))
name = sys.argv[4]
def say(desc, got, exp):
    print(("PASS\t%s: %s" % (name, desc)) if got == exp else
          ("FAIL\t%s: %s\tgot %r, want %r" % (name, desc, got, exp)))
devices = {d["id"]: d for d in rep["devices"]}
for idx, ooms in sorted(want.items()):
    dev = "cuda:%s" % idx
    rows = db.execute(
        "SELECT e.id, e.requested_bytes, e.device_free_bytes, e.total_allocated, e.total_reserved,"
        " e.largest_free_block_bytes FROM oom_event e JOIN device d ON d.id = e.device_id"
        " WHERE d.idx = ? ORDER BY e.id", (int(idx),)).fetchall()
    say("%s: one OOM row per oom entry" % dev, len(rows), len(ooms))
    js = devices[dev]["out_of_memory"]
    for n, (w, r) in enumerate(zip(ooms, rows)):
        at = "%s OOM %d" % (dev, n + 1)
        say(at + ": requested, device free", (r[1], r[2]), (w["requested"], w["device_free"]))
        say(at + ": allocated and reserved then (the import's running totals)", (r[3], r[4]),
            (w["import_allocated"], w["reserved"]))
        say(at + ": largest free block (oom_event)", r[5], w["largest"])
        frag = db.execute(
            "SELECT pool || '|' || stream, is_request_pool, segments, expandable_segments,"
            " reserved_bytes, allocated_bytes, free_bytes, largest_free_block_bytes,"
            " inactive_split_bytes, unmatched_entries, internal_waste_bytes"
            " FROM oom_fragmentation WHERE oom_id = ?", (r[0],)).fetchall()
        got = {f[0]: {"segments": f[2], "expandable": f[3], "reserved": f[4], "allocated": f[5],
                      "free": f[6], "largest": f[7], "split": f[8], "waste": f[10]}
               for f in frag if f[2] > 0}
        say(at + ": per pool and stream", got, w["pools"])
        req = [f[0] for f in frag if f[1] == 1]
        say(at + ": the request's pool and stream marked", req, [w["request_pool"]])
        say(at + ": every entry after it matched", sorted(set(f[9] for f in frag)), [0])
        j = js[n] if n < len(js) else {}
        say(at + ": JSON requested, device free, largest free block, largest in its pool",
            (j.get("requested_bytes"), j.get("device_free_bytes"),
             j.get("largest_free_block_bytes"), j.get("largest_free_block_in_pool_bytes")),
            (w["requested"], w["device_free"], w["largest"], w["in_pool"]))
        say(at + ": JSON totals", (j.get("total_allocated_bytes"), j.get("total_reserved_bytes")),
            (w["import_allocated"], w["reserved"]))
