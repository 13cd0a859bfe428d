#!/usr/bin/env bash
# tests/snapshot-ooms.sh: the allocator's layout at every `oom` entry of a
# snapshot (src/analyze/snapshot_replay.c walks the trace back
# from the end state). Python plays a scripted history FORWARD with its
# own simple model of the caching allocator (segments, blocks, free runs
# merged), writes the snapshot the allocator would dump (the end state
# and the trace), and notes at each oom what the layout was: the largest
# free block per pool and stream and overall, allocated, reserved,
# segments, inactive split bytes. The database and the JSON report must
# say the same. Real snapshots (none has an oom entry) get oom entries
# added: one at the end must agree with the end state (snapshot_summary),
# one in the middle must replay without a mismatch.
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"

REAL=$VR_SRCDIR/tests/data/realdata/snapshot
cd "$TMP"
need python3 || true

cat >sim.py <<'PYEOF'
"""A forward model of the CUDA caching allocator's layout, and snapshots
written from it (pickle, shaped like torch.cuda.memory._dump_snapshot)."""
import json, pickle

MiB = 1 << 20
BASE = 1 << 40

def round_block(n):
    return max(512, (n + 511) // 512 * 512)

class Allocator:
    def __init__(self, device=0):
        self.device = device
        self.ranges = {}   # address -> [size, stream, type, expandable]: held ranges
        self.blocks = {}   # address -> [size, requested, state, stream]
        self.trace = []
        self.t = 1700000000000000
        self.expected = []  # per oom, in order

    def entry(self, action, **kw):
        self.t += 1
        e = {"action": action, "time_us": self.t, "frames": []}
        e.update(kw)
        self.trace.append(e)

    # history
    def segment_alloc(self, addr, size, stream, kind="large"):
        self.ranges[addr] = [size, stream, kind, False]
        self.entry("segment_alloc", addr=addr, size=size, stream=stream)

    def segment_free(self, addr):
        size, stream, _, _ = self.ranges.pop(addr)
        assert not any(addr <= a < addr + size for a in self.blocks)
        self.entry("segment_free", addr=addr, size=size, stream=stream)

    def segment_map(self, addr, size, stream):
        self.ranges[addr] = [size, stream, "large", True]
        self.entry("segment_map", addr=addr, size=size, stream=stream)

    def segment_unmap(self, addr, size, stream):
        seg = self.segment_of(addr)
        assert seg is not None
        lo, hi, _, _, _ = seg
        # the range is cut out of the held ranges it covers
        new = {}
        for a, (s, st, k, x) in self.ranges.items():
            if a + s <= addr or a >= addr + size:
                new[a] = [s, st, k, x]
                continue
            if a < addr:
                new[a] = [addr - a, st, k, x]
            if a + s > addr + size:
                new[addr + size] = [a + s - addr - size, st, k, x]
        self.ranges = new
        self.entry("segment_unmap", addr=addr, size=size, stream=stream)

    def alloc(self, addr, requested, stream):
        size = round_block(requested)
        assert addr not in self.blocks
        self.blocks[addr] = [size, requested, "active_allocated", stream]
        self.entry("alloc", addr=addr, size=requested, stream=stream)

    def free(self, addr, complete=True):
        b = self.blocks[addr]
        self.entry("free_requested", addr=addr, size=b[1], stream=b[3])
        b[2] = "active_pending_free"
        if complete:
            del self.blocks[addr]
            self.entry("free_completed", addr=addr, size=b[1], stream=b[3])

    def oom(self, requested, stream, device_free):
        size = round_block(requested)
        self.expected.append(self.figures(size, stream, device_free))
        self.entry("oom", size=size, stream=stream, device_free=device_free)

    # the layout
    def segments(self):
        """Held ranges as the snapshot shows them: contiguous expandable
        ranges of one stream are one segment."""
        out = []
        for a in sorted(self.ranges):
            s, st, k, x = self.ranges[a]
            if out and x and out[-1][4] and out[-1][1] == a and out[-1][2] == st:
                out[-1][1] = a + s
            else:
                out.append([a, a + s, st, k, x])
        return [tuple(o) for o in out]

    def segment_of(self, addr):
        for seg in self.segments():
            if seg[0] <= addr < seg[1]:
                return seg
        return None

    def cut(self, seg):
        """A segment's blocks in address order, free runs included."""
        lo, hi = seg[0], seg[1]
        used = sorted((a, b) for a, b in self.blocks.items() if lo <= a < hi)
        out, at = [], lo
        for a, b in used:
            if a > at:
                out.append((at, a - at, 0, "inactive"))
            out.append((a, b[0], b[1], b[2]))
            at = a + b[0]
        if hi > at:
            out.append((at, hi - at, 0, "inactive"))
        return out

    def figures(self, size, stream, device_free):
        pools = {}
        allocated = reserved = 0
        largest = 0
        for seg in self.segments():
            key = "%s|%s" % (seg[3], seg[2])
            p = pools.setdefault(key, {"segments": 0, "expandable": 0, "reserved": 0,
                                       "allocated": 0, "largest": 0, "split": 0, "waste": 0})
            blocks = self.cut(seg)
            free = [b[1] for b in blocks if b[3] == "inactive"]
            used = sum(b[1] for b in blocks if b[3] != "inactive")
            p["segments"] += 1
            p["expandable"] += seg[4]
            p["reserved"] += seg[1] - seg[0]
            p["allocated"] += used
            p["waste"] += sum(b[1] - b[2] for b in blocks if b[3] != "inactive")
            p["largest"] = max([p["largest"]] + free)
            if used:
                p["split"] += sum(free)
            reserved += seg[1] - seg[0]
            allocated += used
            largest = max([largest] + free)
        for p in pools.values():
            p["free"] = p["reserved"] - p["allocated"]
        want = "%s|%s" % ("small" if size <= MiB else "large", stream)
        return {"requested": size, "device_free": device_free, "allocated": allocated,
                "reserved": reserved, "largest": largest, "pools": pools,
                "in_pool": pools.get(want, {}).get("largest", 0), "request_pool": want}

    def snapshot_segments(self):
        out = []
        for seg in self.segments():
            blocks = self.cut(seg)
            out.append({
                "device": self.device, "address": seg[0], "total_size": seg[1] - seg[0],
                "allocated_size": sum(b[1] for b in blocks if b[3] == "active_allocated"),
                "active_size": sum(b[1] for b in blocks if b[3] != "inactive"),
                "requested_size": sum(b[2] for b in blocks), "stream": seg[2],
                "segment_type": seg[3], "segment_pool_id": (0, 0), "is_expandable": seg[4],
                "frames": [],
                "blocks": [{"address": a, "size": s, "requested_size": r, "state": st,
                            "frames": []} for a, s, r, st in blocks]})
        return out

def dump(path, allocators, drop=0, reverse=False):
    """The snapshot; `drop`: entries of device 0 lost off the ring buffer's start;
    `reverse`: segments and their blocks listed from the highest address down."""
    segments, traces = [], []
    for i, a in enumerate(allocators):
        segments += a.snapshot_segments()
        traces.append(a.trace[drop:] if i == 0 else a.trace)
    if reverse:
        for seg in segments:
            seg["blocks"].reverse()
        segments.reverse()
    d = {"segments": segments, "device_traces": traces,
         "allocator_settings": {"expandable_segments": any(
             r[3] for a in allocators for r in a.ranges.values())}}
    with open(path, "wb") as f:
        pickle.dump(d, f, protocol=4)
PYEOF

cat >history.py <<'PYEOF'
"""Two devices. cuda:0: two streams, a large segment split by allocs and
frees, a small segment, OOMs in the middle (one whose request fits a free
block of the other stream), later frees, a segment freed after the first
OOM, a free whose size is not a multiple of 512 (internal waste from the
trace) and a live block of the same kind (from the end state), a block
left waiting to be freed. cuda:1: expandable segments mapped, cut and unmapped around an OOM."""
import json, sys
from sim import Allocator, dump, MiB, BASE

a = Allocator(0)
S1, S2, S3, S4 = BASE, BASE + 64 * MiB, BASE + 128 * MiB, BASE + 192 * MiB
a.segment_alloc(S1, 20 * MiB, 0)
a.segment_alloc(S2, 2 * MiB, 0, "small")
a.segment_alloc(S3, 20 * MiB, 7)
a.alloc(S1, 4 * MiB, 0)
a.alloc(S1 + 4 * MiB, 3 * MiB, 0)
a.alloc(S1 + 7 * MiB, 5 * MiB, 0)
a.alloc(S1 + 12 * MiB, 6 * MiB, 0)
a.alloc(S2, 1000, 0)               # a 1024-byte block
a.alloc(S2 + 1024, 64 * 1024, 0)
a.alloc(S2 + 66 * 1024, 3000, 0)    # a 3072-byte block, live to the end
a.alloc(S3, 2 * MiB, 7)
a.free(S1 + 4 * MiB)                # 3 MiB hole
a.segment_alloc(S4, 20 * MiB, 0)    # freed after the first OOM
a.alloc(S4, 18 * MiB, 0)
a.alloc(S1 + 18 * MiB, MiB + 512, 0)
# 9 MiB asked on stream 0: the largest free block there is 3 MiB; stream 7
# has 18 MiB free in one block.
a.oom(9 * MiB, 0, 5 * MiB)
a.free(S2)                          # requested 1000: the block comes back as 1024
a.free(S1 + 12 * MiB)
a.free(S4)
a.segment_free(S4)
a.alloc(S3 + 2 * MiB, 4 * MiB, 7)
a.oom(600 * 1024, 7, 1 * MiB)       # a small request on a stream with no small pool
a.free(S1 + 7 * MiB)
a.alloc(S1 + 4 * MiB, 2 * MiB, 0)
a.free(S3 + 2 * MiB, complete=False)  # still waiting at the end
a.oom(30 * MiB, 0, 0)               # the snapshot ends on it

b = Allocator(1)
E = BASE + (1 << 36)
b.segment_map(E, 20 * MiB, 0)
b.alloc(E, 8 * MiB, 0)
b.segment_map(E + 20 * MiB, 20 * MiB, 0)
b.alloc(E + 8 * MiB, 20 * MiB, 0)
b.segment_map(E + 60 * MiB, 20 * MiB, 0)   # a second, separate range
b.alloc(E + 60 * MiB, 2 * MiB, 0)
b.oom(40 * MiB, 0, 2 * MiB)
b.free(E + 60 * MiB)
b.segment_unmap(E + 60 * MiB, 20 * MiB, 0)
b.free(E + 8 * MiB)
b.segment_unmap(E + 20 * MiB, 20 * MiB, 0)
b.segment_map(E + 20 * MiB, 20 * MiB, 0)
b.alloc(E + 8 * MiB, 30 * MiB, 0)

def anchor(al):
    """What the import's running totals say at each oom: the end state
    minus the recorded changes after it (entries carry requested sizes,
    so a block rounded up leaves its rounding in)."""
    end = sum(blk[0] for blk in al.blocks.values())
    ooms = [i for i, e in enumerate(al.trace) if e["action"] == "oom"]
    for w, i in zip(al.expected, ooms):
        w["import_allocated"] = end - sum(
            e["size"] if e["action"] == "alloc" else -e["size"] if e["action"] == "free_completed"
            else 0 for e in al.trace[i + 1:])

anchor(a)
anchor(b)
# An alloc that also says device_free is stored as a trace_entry_other row
# and a memory event that is not an entry: the replay's unchecked read
# (every row from the device's last entry down) no longer counts only the
# device's entries there, and the device is walked again, filtered.
next(e for e in a.trace if e["action"] == "alloc" and e["addr"] == S3 + 2 * MiB)["device_free"] = MiB
dump("history.pickle", [a, b])
# The same history with its first 14 entries lost off the ring buffer:
# three segments and the first allocations are pre-existing.
dump("dropped.pickle", [a, b], drop=14)
# The same end state listed from the highest address down: the replay,
# which loads blocks as the table lists them while their addresses rise,
# reads them again sorted.
dump("reversed.pickle", [a, b], reverse=True)
json.dump({"0": a.expected, "1": b.expected}, open("history.want", "w"), indent=1)
PYEOF
"$PYTHON" history.py || fail "python3 played the history"

cat >compare.py <<'PYEOF'
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
PYEOF

for f in history dropped reversed; do
    rm -f $f.db
    vr_run imp-$f import $f.pickle --db $f.db -q
    [ "$rc" = 0 ] && pass "$f.pickle: imported" || fail "$f.pickle: imported" "exit $rc: $(cat imp-$f.err)"
    vr_run rep-$f report --db $f.db --format json -o $f.json
    [ "$rc" = 0 ] && pass "$f.pickle: reported" || fail "$f.pickle: reported" "exit $rc: $(cat rep-$f.err)"
    "$PYTHON" compare.py history.want $f.db $f.json $f >$f.tap 2>&1 || echo "FAIL	$f: compared	$(tail -3 $f.tap)" >>$f.tap
    tap_lines $f.tap
done

# The figures the story is about, said plainly.
got=$(json_get history.json '[(o["requested_bytes"] >> 20, o["largest_free_block_bytes"] >> 20, o["largest_free_block_in_pool_bytes"] >> 20) for o in d["devices"][0]["out_of_memory"]][0]')
[ "$got" = "(9, 18, 3)" ] \
    && pass "9 MiB asked on stream 0: 18 MiB free in one block on stream 7, 3 MiB on its own" \
    || fail "9 MiB asked on stream 0: 18 MiB free in one block on stream 7, 3 MiB on its own" "got $got"

# Markdown: the OOM table shows the largest free block against the request.
vr_run md report --db history.db -o history.md
grep -q '^| At | Requested | Allocated then | Reserved then | Largest free block | In its pool and stream | Free on the device |$' history.md \
    && grep -q '| 9.00 MiB | .* | 18.0 MiB | 3.00 MiB | 5.00 MiB |$' history.md \
    && pass "Markdown: the OOM table shows the largest free block against the request" \
    || fail "Markdown: the OOM table shows the largest free block against the request" "$(grep -A6 'Out-of-memory' history.md)"

# Analysing again (a report finishes an analysis marked incomplete) gives
# the same rows: the pass clears what it owns.
before=$(sqlite3 history.db 'SELECT count(*), sum(largest_free_block_bytes) FROM oom_fragmentation')
sqlite3 history.db 'UPDATE analysis_state SET complete = 0'
vr_run again report --db history.db --format json -o again.json
after=$(sqlite3 history.db 'SELECT count(*), sum(largest_free_block_bytes) FROM oom_fragmentation')
[ "$rc" = 0 ] && [ "$before" = "$after" ] && pass "analysing twice: the same rows ($after)" \
    || fail "analysing twice: the same rows" "exit $rc, $before then $after: $(cat again.err)"

#-- a trace that does not match its end state --------------------------------------------

# Frees of addresses no segment holds, an alloc undone twice, overlapping
# and negative ranges, a map inside nothing: the walk skips and counts
# them, never fails, and the OOM still gets figures.
"$PYTHON" - <<'PYEOF' || fail "python3 wrote the mismatched snapshot"
import pickle
MiB = 1 << 20
B = 1 << 40
seg = {"device": 0, "address": B, "total_size": 20 * MiB, "stream": 0, "segment_type": "large",
       "segment_pool_id": (0, 0), "is_expandable": False, "frames": [], "blocks": [
           {"address": B, "size": 4 * MiB, "requested_size": 4 * MiB, "state": "active_allocated"},
           {"address": B + 2 * MiB, "size": 4 * MiB, "requested_size": 4 * MiB,
            "state": "active_allocated"},   # overlaps the one before
           {"address": B + 6 * MiB, "size": 14 * MiB, "requested_size": 0, "state": "inactive"}]}
t = 1700000000000000
def e(action, **kw):
    global t
    t += 1
    d = {"action": action, "time_us": t, "stream": 0}
    d.update(kw)
    return d
trace = [e("oom", size=30 * MiB, device_free=0),
         e("free_completed", addr=B + 100 * MiB, size=MiB),       # no segment there
         e("alloc", addr=B + 8 * MiB, size=MiB),                  # no block there
         e("segment_free", addr=B + 10 * MiB, size=20 * MiB),     # overlaps the segment
         e("segment_free", addr=B + 200 * MiB, size=-5),          # a negative size
         e("segment_map", addr=B + 300 * MiB, size=20 * MiB),     # maps nothing held
         e("segment_unmap", addr=(1 << 63) - 10, size=20 * MiB),  # past the end of addresses
         e("free_requested", addr=B + 12 * MiB, size=MiB),
         e("alloc", size=MiB),                                     # no address
         e("alloc", addr=B, size=4 * MiB)]                         # the one real change
pickle.dump({"segments": [seg], "device_traces": [trace]}, open("mismatch.pickle", "wb"), protocol=4)
PYEOF
rm -f mismatch.db
vr_run mism mismatch.pickle --db mismatch.db --format json -o mismatch.json
[ "$rc" = 0 ] && pass "a mismatched trace: exit 0" || fail "a mismatched trace: exit 0" "exit $rc: $(cat mism.err)"
got=$(sqlite3 mismatch.db 'SELECT e.largest_free_block_bytes >> 20, f.unmatched_entries > 0
                             FROM oom_event e JOIN oom_fragmentation f ON f.oom_id = e.id AND f.is_request_pool = 1')
# (the overlapping block is dropped; undoing the alloc at B frees the rest)
[ "$got" = "20|1" ] && pass "a mismatched trace: the OOM still has its figures, and says entries did not match" \
    || fail "a mismatched trace: the OOM still has its figures, and says entries did not match" "got $got"

#-- real snapshots, with oom entries added ----------------------------------------------

cat >addoom.py <<'PYEOF'
"""A real snapshot with two oom entries added to cuda:0's trace: one in
the middle, one at the end."""
import pickle, sys
class DataOnly(pickle.Unpickler):
    def find_class(self, module, name):
        raise pickle.UnpicklingError("global %s.%s refused" % (module, name))
d = DataOnly(open(sys.argv[1], "rb")).load()
trace = d["device_traces"][0]
def oom(after):
    e = dict(after)
    e.update(action="oom", size=512 << 20, device_free=1 << 20, stream=0)
    e.pop("addr", None)
    return e
mid = len(trace) // 2
trace.insert(mid + 1, oom(trace[mid]))
trace.append(oom(trace[-1]))
pickle.dump(d, open(sys.argv[2], "wb"), protocol=4)
PYEOF
for f in cs336-bcrafton cs336-silmont-segments cs336-silmont-forward-bf16; do
    "$PYTHON" addoom.py "$REAL/$f.pickle" $f-oom.pickle || { fail "$f: oom entries added"; continue; }
    rm -f $f.db
    vr_run imp-$f $f-oom.pickle --db $f.db -q --format json -o $f.json
    [ "$rc" = 0 ] || { fail "$f: imported and reported" "exit $rc: $(cat imp-$f.err)"; continue; }
    got=$(sqlite3 $f.db "SELECT (e.largest_free_block_bytes IS s.largest_free_block_bytes
                                 OR (e.largest_free_block_bytes = 0 AND s.largest_free_block_bytes IS NULL))
                                || ',' || (e.total_reserved = s.final_reserved_bytes)
                                || ',' || (e.total_allocated = s.final_allocated_bytes + s.pending_free_bytes)
                                || ',' || (SELECT sum(segments) = s.segment_count AND sum(reserved_bytes) = s.final_reserved_bytes
                                                  AND sum(allocated_bytes) = s.final_allocated_bytes + s.pending_free_bytes
                                                  AND sum(inactive_split_bytes) = s.inactive_split_bytes
                                                  AND max(unmatched_entries) = 0
                                             FROM oom_fragmentation f WHERE f.oom_id = e.id)
                           FROM oom_event e JOIN snapshot_summary s USING (source_id, device_id)
                          ORDER BY e.id DESC LIMIT 1")
    [ "$got" = "1,1,1,1" ] && pass "$f: an OOM at the end has the end state's figures (snapshot_summary)" \
        || fail "$f: an OOM at the end has the end state's figures (snapshot_summary)" "got $got"
    got=$(sqlite3 $f.db "SELECT (SELECT max(unmatched_entries) FROM oom_fragmentation f WHERE f.oom_id = e.id)
                                || ',' || (e.total_reserved = (SELECT sum(reserved_bytes) FROM oom_fragmentation f WHERE f.oom_id = e.id))
                                || ',' || (e.largest_free_block_bytes <= e.total_reserved - e.total_allocated + 511 * 4096)
                           FROM oom_event e ORDER BY e.id LIMIT 1")
    [ "$got" = "0,1,1" ] && pass "$f: an OOM in the middle replays with every entry matched, reserved as the import's" \
        || fail "$f: an OOM in the middle replays with every entry matched, reserved as the import's" "got $got"
done

finish
