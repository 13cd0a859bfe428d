#!/usr/bin/env bash
# tests/pickle.sh: the data-only pickle decoder (src/parse/pickle.c)
# against Python's own Unpickler, the oracle. tests/unit/pickle_dump prints
# what our decoder makes of a file as canonical JSON; the oracle loads the
# same file with a pickle.Unpickler whose find_class always raises and
# prints it the same way. Checked:
#   - every real snapshot (tests/data/realdata/snapshot), whole, in random
#     chunk sizes, and one byte at a time for the smallest; whole and
#     streamed with two memo pages in memory, the rest in the memo's file;
#   - streaming: the element counts of segments and of each device's trace
#     list, and every element itself, against Python's;
#   - snapshot-shaped dicts pickled by python3 at protocols 2 to 5 (shared
#     frames, 64-bit addresses, long strings, a memo past 255 and past
#     65535 entries, APPENDS batches, an int beyond 64 bits);
#   - hostile files, each refused with one line and no crash: a pickle that
#     would run a command through GLOBAL/STACK_GLOBAL + REDUCE (the command
#     would create a marker file: it must not exist afterwards, and the
#     error names the opcode at its offset), truncated real snapshots,
#     memo references out of range, huge declared lengths, 10,000-deep
#     nesting, memo bombs, a reference cycle;
#   - 10,000 segments sharing one segment_pool_id tuple (one BINGET per
#     segment after the first), protocols 2 to 5, framed and not, imported
#     by vramreport: its segments, sizes and pools against Python's reading.
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"

DUMP=$VR_BUILDDIR/tests/unit/pickle_dump
SNAPS=$VR_SRCDIR/tests/data/realdata/snapshot
cd "$TMP"

need python3 || true
if [ ! -x "$DUMP" ]; then
    fail "pickle_dump is built" \
        "$DUMP is missing: make tests/unit/pickle_dump (make check builds it)"
    finish
fi

cat >"$TMP/oracle.py" <<'PYEOF'
# The oracle: Python's own Unpickler, data only (find_class and
# persistent_load refused), printed in pickle_dump's canonical form.
import math, pickle, sys

sys.setrecursionlimit(20000)


from vrtest import DataOnly


def text(b):
    out = bytearray(b'"')
    for c in b:
        if c in (0x22, 0x5C):
            out += b"\\" + bytes([c])
        elif c < 0x20:
            out += b"\\u%04x" % c
        else:
            out.append(c)
    return bytes(out + b'"')


def utf8(s):
    return s.encode("utf-8", "surrogatepass")


def canon(x):
    if x is None:
        return b"null"
    if x is True or x is False:
        return b"true" if x else b"false"
    if isinstance(x, int):
        return b"%d" % x if -(2**63) <= x < 2**63 else b'{"__too_large__":true}'
    if isinstance(x, float):
        if math.isnan(x):
            return b'{"__float__":"nan"}'
        if math.isinf(x):
            return b'{"__float__":"inf"}' if x > 0 else b'{"__float__":"-inf"}'
        return b"%.17g" % x
    if isinstance(x, str):
        return text(utf8(x))
    if isinstance(x, (bytes, bytearray)):
        return b'{"__bytes__":"' + bytes(x).hex().encode() + b'"}'
    if isinstance(x, (list, tuple)):
        return b"[" + b",".join(canon(v) for v in x) + b"]"
    if isinstance(x, dict):
        if all(isinstance(k, str) for k in x):
            items = sorted(((utf8(k), v) for k, v in x.items()), key=lambda kv: kv[0])
            return b"{" + b",".join(text(k) + b":" + canon(v) for k, v in items) + b"}"
        pairs = sorted(((canon(k), v) for k, v in x.items()), key=lambda kv: kv[0])
        return (b'{"__dict__":[' + b",".join(b"[" + k + b"," + canon(v) + b"]" for k, v in pairs)
                + b"]}")
    raise TypeError("not data: %r" % type(x))


def main():
    mode, path = sys.argv[1], sys.argv[2]
    out = sys.stdout.buffer
    with open(path, "rb") as f:
        data = DataOnly(f).load()
    if mode == "dump":
        out.write(canon(data) + b"\n")
        return
    # what `pickle_dump --stream segments,device_traces.*` prints
    traces = data.get("device_traces", [])
    if mode == "elements":
        for i, e in enumerate(data["segments"]):
            out.write(b"segments\t%d\t" % i + canon(e) + b"\n")
        for d, t in enumerate(traces):
            for i, e in enumerate(t):
                out.write(b"device_traces.%d\t%d\t" % (d, i) + canon(e) + b"\n")
    out.write(b"segments\t%d\n" % len(data["segments"]))
    for d, t in enumerate(traces):
        out.write(b"device_traces.%d\t%d\n" % (d, len(t)))


main()
PYEOF

cat >"$TMP/make.py" <<'PYEOF'
# Pickles for the checks below, written by python3's own pickle.dumps.
import os, pickle, struct, sys

out = sys.argv[1]


def save(name, data):
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)


# A snapshot-shaped dict (docs/formats/allocator-snapshot.md): frames lists
# shared between a block and a trace entry, frame dicts shared between
# stacks, addresses past 2^32 (LONG1), a filename past 255 bytes
# (BINUNICODE), 1,500 trace entries (APPENDS in batches of 1000), enough
# distinct strings for LONG_BINGET past slot 65535, and the odd values a
# hostile or future file may hold.
def snapshot(with_bytes):
    frames = [{"filename": "/src/model%d.py" % i + ("/deep" * 60 if i == 3 else ""),
               "line": i, "name": "forward_%d" % i} for i in range(40)]
    stacks = [frames[i:i + 5] for i in range(35)]
    segs = []
    for s in range(20):
        blocks = [{"address": 139926520725504 + s * 2**21 + b * 512, "size": 512,
                   "requested_size": 500, "state": ["active_allocated", "inactive"][b % 2],
                   "frames": stacks[(s + b) % 35]} for b in range(4)]
        segs.append({"device": 0, "address": 139926520725504 + s * 2**21,
                     "total_size": 2**21, "allocated_size": 1024, "active_size": 1024,
                     "requested_size": 1000, "stream": 0, "segment_type": "large",
                     "segment_pool_id": (0, 0), "is_expandable": False, "blocks": blocks})
    trace = [{"action": ["alloc", "free_requested", "free_completed"][i % 3],
              "addr": 139926520725504 + i * 512, "size": 512 * (i % 7), "stream": 0,
              "time_us": 1712195495519689 + i, "frames": stacks[i % 35]} for i in range(1500)]
    trace.append({"action": "oom", "device_free": 0, "size": 2**40, "stream": -1,
                  "time_us": 1712195495600000, "frames": []})
    labels = ["label-%d" % i for i in range(70000)]
    snap = {"segments": segs, "device_traces": [trace, [], trace[:3]],
            "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True",
                                   "max_split_size": -1, "garbage_collection_threshold": 0.0,
                                   "expandable_segments": True,
                                   "roundup_power2_divisions": {"1": 1, "2": 4}},
            "external_annotations": [{"device": 0, "time_us": 1, "stage": "fwd"}],
            "labels": labels, "odd": {"too_large": 2**70, "negative": -(2**70),
                                      "min": -(2**63), "max": 2**63 - 1, "float": -1.5e-300,
                                      "none": None, "int_keys": {1: "a", -2: "b"},
                                      "tuple": (1, "x", (2.5, None), [3])}}
    if with_bytes:
        snap["odd"]["bytes"] = b"\x00\xff\x01"
        snap["odd"]["long_bytes"] = bytes(range(256)) * 2
    return snap


for p in (2, 3, 4, 5):
    save("shaped-p%d.pickle" % p, pickle.dumps(snapshot(p >= 3), protocol=p))


# Would run a command if loaded: os.system creating a marker file.
class Boom:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, ("touch '%s'" % self.marker,))


marker = os.path.join(out, "MARKER")
for p in (2, 4):
    save("boom-p%d.pickle" % p, pickle.dumps({"segments": [Boom(marker)]}, protocol=p))
# The same payload, pointed elsewhere, to prove it is real (python3 runs it).
save("boom-proof.pickle", pickle.dumps(Boom(os.path.join(out, "PROOF")), protocol=4))

P = b"\x80\x04"
save("memo-out-of-range.pickle", P + b"]\x94(K\x01h\xc8e.")
save("memo-long-out-of-range.pickle", P + b"j\xff\xff\xff\xff.")
save("huge-binunicode8.pickle", P + b"\x8d" + struct.pack("<Q", 2**60) + b"abc")
save("huge-binbytes8.pickle", P + b"\x8e" + struct.pack("<Q", 2**60) + b"abc")
save("huge-long4.pickle", P + b"\x8b" + struct.pack("<i", 2**31 - 1) + b"\x00")
save("huge-binunicode.pickle", P + b"X" + struct.pack("<I", 2**32 - 1) + b"abc")

sys.setrecursionlimit(100000)
deep = []
for _ in range(10000):
    deep = [deep]
save("deep-lists.pickle", pickle.dumps(deep, protocol=4))
save("deep-marks.pickle", P + b"](" * 10000 + b".")
bomb = []
for _ in range(100):
    bomb = [bomb, bomb]
save("memo-bomb.pickle", pickle.dumps(bomb, protocol=4))
cycle = []
cycle.append(cycle)
save("cycle.pickle", pickle.dumps(cycle, protocol=4))
save("not-a-pickle.json", b'{"segments": []}')
PYEOF

"$PYTHON" "$TMP/make.py" "$TMP" || fail "python3 writes the test pickles"

# dump NAME ARGS...: runs pickle_dump; status in $rc, NAME.out, NAME.err
dump() {
    vr_name=$1
    shift
    rc=0
    "$DUMP" "$@" >"$vr_name.out" 2>"$vr_name.err" || rc=$?
}

# same DESC EXPECTED GOT: the two files are equal
same() {
    if cmp -s "$2" "$3"; then
        pass "$1"
    else
        fail "$1" "$(cmp "$2" "$3" 2>&1 | head -1)" "expected: $(head -c 200 "$2")" \
            "got:      $(head -c 200 "$3")" "stderr: $(head -c 300 "${3%.out}.err" 2>/dev/null)"
    fi
}

# refused DESC NAME PATTERN...: pickle_dump exited 1 with one line on
# stderr holding each PATTERN (grep -E), and did not crash
refused() {
    vr_desc=$1
    vr_name=$2
    shift 2
    if crashed "$rc" "$vr_name.err"; then
        fail "$vr_desc: no crash" "exit $rc" "$(head -5 "$vr_name.err")"
        return
    fi
    vr_lines=$(wc -l <"$vr_name.err" | tr -d ' ')
    if [ "$rc" -ne 1 ] || [ "$vr_lines" -ne 1 ]; then
        fail "$vr_desc: refused with one line" "exit $rc, $vr_lines lines:" \
            "$(head -5 "$vr_name.err")"
        return
    fi
    for vr_pat in "$@"; do
        if ! grep -q -E -e "$vr_pat" "$vr_name.err"; then
            fail "$vr_desc: says /$vr_pat/" "$(cat "$vr_name.err")"
            return
        fi
    done
    pass "$vr_desc: $(cut -c 1-150 "$vr_name.err")"
}

# The offset and name of the first opcode pickletools finds named $2 in $1.
opcode_at() {
    "$PYTHON" -c '
import pickletools, sys
for op, arg, pos in pickletools.genops(open(sys.argv[1], "rb")):
    if op.name in sys.argv[2].split(","):
        print(pos, op.name)
        break' "$1" "$2"
}

## Real snapshots: the whole value, and streamed.
smallest=
for f in "$SNAPS"/*.pickle; do
    b=$(basename "$f" .pickle)
    [ -n "$smallest" ] || smallest=$f
    [ "$(wc -c <"$f")" -lt "$(wc -c <"$smallest")" ] && smallest=$f
    "$PYTHON" "$TMP/oracle.py" dump "$f" >"$b.want" 2>"$b.oracle.err" ||
        fail "$b: python3 decodes it" "$(tail -1 "$b.oracle.err")"
    dump "$b" "$f"
    same "$b: decoded as Python decodes it" "$b.want" "$b.out"
    dump "$b.chunks" --chunk 0 "$f"
    same "$b: the same fed in random chunk sizes" "$b.want" "$b.chunks.out"
    "$PYTHON" "$TMP/oracle.py" elements "$f" >"$b.want-elements"
    grep -v -P '^[^\t]+\t[0-9]+$' "$b.want-elements" >"$b.want-elements-only" || true
    grep -P '^[^\t]+\t[0-9]+$' "$b.want-elements" >"$b.want-counts" || true
    dump "$b.counts" --stream 'segments,device_traces.*' "$f"
    same "$b: streamed, as many segments and trace entries as Python counts" \
        "$b.want-counts" "$b.counts.out"
    dump "$b.elements" --chunk 0 --stream 'segments,device_traces.*' --elements "$f"
    grep -v -P '^[^\t]+\t[0-9]+$' "$b.elements.out" >"$b.elements-only.out" || true
    same "$b: streamed, each element as Python has it (shared frames through tags)" \
        "$b.want-elements-only" "$b.elements-only.out"
    # two memo pages (8,192 slots) in memory, the others in the temporary
    # file: tags and held values go out and come back
    dump "$b.paged" --chunk 0 --memo-in-memory 32768 "$f"
    same "$b: whole, the memo mostly in its temporary file" "$b.want" "$b.paged.out"
    dump "$b.paged-elements" --chunk 0 --stream 'segments,device_traces.*' --elements \
        --memo-in-memory 32768 "$f"
    grep -v -P '^[^\t]+\t[0-9]+$' "$b.paged-elements.out" >"$b.paged-elements-only.out" || true
    same "$b: streamed, the memo mostly in its temporary file" \
        "$b.want-elements-only" "$b.paged-elements-only.out"
done
b=$(basename "$smallest" .pickle)
dump "$b.bytewise" --chunk 1 "$smallest"
same "$b: the same fed one byte at a time" "$b.want" "$b.bytewise.out"

## Snapshot-shaped dicts at every protocol python3 writes.
for p in 2 3 4 5; do
    f=$TMP/shaped-p$p.pickle
    "$PYTHON" "$TMP/oracle.py" dump "$f" >"p$p.want"
    dump "p$p" --chunk 0 "$f"
    same "protocol $p: a snapshot-shaped dict decoded as Python decodes it" "p$p.want" "p$p.out"
    "$PYTHON" "$TMP/oracle.py" counts "$f" >"p$p.want-counts"
    dump "p$p.counts" --stream 'segments,device_traces.*' "$f"
    same "protocol $p: streamed, the same counts" "p$p.want-counts" "p$p.counts.out"
done
if "$PYTHON" -c 'import pickletools, sys
names = {op.name for op, a, p in pickletools.genops(open(sys.argv[1], "rb"))}
need = {"LONG_BINGET", "BINUNICODE", "LONG1", "APPENDS", "FRAME", "MEMOIZE", "BINBYTES"}
sys.exit(0 if need <= names else 1)' "$TMP/shaped-p4.pickle"; then
    pass "protocol 4: the shaped dict uses LONG_BINGET, BINUNICODE, LONG1, BINBYTES, FRAME"
else
    fail "protocol 4: the shaped dict uses the opcodes it is meant to test"
fi

## A pickle that would run a command.
"$PYTHON" -c 'import pickle, sys; pickle.load(open(sys.argv[1], "rb"))' \
    "$TMP/boom-proof.pickle" >/dev/null 2>&1 || true
if [ -e "$TMP/PROOF" ]; then
    pass "the payload is real: python3's own pickle.load runs the command"
else
    fail "the payload is real: python3's own pickle.load runs the command"
fi
for p in 2 4; do
    f=$TMP/boom-p$p.pickle
    read -r off name <<EOF
$(opcode_at "$f" GLOBAL,STACK_GLOBAL)
EOF
    dump "boom$p" "$f"
    refused "protocol $p: GLOBAL+REDUCE" "boom$p" \
        "^pickle_dump: .*: byte $off: opcode $name \\(0x[0-9a-f]{2}\\) would import code: refused"
    dump "boom$p.stream" --stream 'segments' "$f"
    refused "protocol $p: GLOBAL+REDUCE, streamed" "boom$p.stream" "byte $off: opcode $name "
done
if [ -e "$TMP/MARKER" ]; then
    fail "nothing was run: the marker file does not exist"
else
    pass "nothing was run: the marker file does not exist"
fi

## Truncated real snapshots: exit 3, one line, never a crash.
big=$SNAPS/cs336-bcrafton.pickle
size=$(wc -c <"$big")
for cut in 1 2 11 100 1000 $((size / 2)) $((size - 1)); do
    head -c "$cut" "$big" >"cut$cut.pickle"
    dump "cut$cut" --stream 'segments,device_traces.*' "cut$cut.pickle"
    if crashed "$rc" "cut$cut.err"; then
        fail "cut at $cut bytes: no crash" "$(head -5 "cut$cut.err")"
    elif [ "$cut" -lt 2 ]; then
        refused "cut at $cut byte" "cut$cut" "not a pickle|PROTO"
    elif [ "$rc" -eq 3 ] && [ "$(wc -l <"cut$cut.err")" -eq 1 ] &&
        grep -q "truncated" "cut$cut.err"; then
        pass "cut at $cut bytes: truncated, said in one line"
    else
        fail "cut at $cut bytes: truncated, said in one line" "exit $rc" "$(head -3 "cut$cut.err")"
    fi
done

## Hostile files.
dump memo1 "$TMP/memo-out-of-range.pickle"
refused "BINGET of a slot never set" memo1 "byte 7: BINGET of memo slot 200, which was never set"
dump memo2 "$TMP/memo-long-out-of-range.pickle"
refused "LONG_BINGET of slot 2^32 - 1" memo2 "byte 2: LONG_BINGET of memo slot 4294967295"
for h in binunicode8 binbytes8 long4 binunicode; do
    dump "huge-$h" "$TMP/huge-$h.pickle"
    refused "$h declaring a huge length" "huge-$h" \
        "declares [0-9]+ bytes, more than the decoder's limit"
done
dump deep-lists "$TMP/deep-lists.pickle"
refused "10,000 nested lists (pickle.dumps)" deep-lists "nested more than 256 deep"
dump deep-marks "$TMP/deep-marks.pickle"
refused "10,000 MARKs" deep-marks "more than 256 MARKs open"
dump bomb "$TMP/memo-bomb.pickle"
refused "a memo bomb: [b, b] nested 100 times (pickle.dumps)" bomb \
    "expands to more than 16777216 nodes"
dump cycle "$TMP/cycle.pickle"
refused "a list that holds itself (pickle.dumps)" cycle "inside itself"
dump json "$TMP/not-a-pickle.json"
refused "JSON" json "byte 0: not a pickle"

## A shared tuple: pickle.dump memoizes one segment_pool_id tuple and
## writes BINGET for each later segment's. Imported whole, at every
## protocol, framed and not; the figures against Python's reading.
cat >"$TMP/shared.py" <<'PYEOF'
import os, pickle, pickletools, sys

out = sys.argv[1]
pool = (3, 7)                     # one object, shared by every segment
segs = [{"device": 0, "address": 2**40 + i * 2**21, "total_size": 2**21,
         "allocated_size": 0, "active_size": 0, "requested_size": 0, "stream": 0,
         "segment_type": "small", "segment_pool_id": pool, "is_expandable": False,
         "blocks": [{"address": 2**40 + i * 2**21, "size": 2**21, "requested_size": 0,
                     "state": "inactive", "frames": []}]} for i in range(10000)]
snap = {"segments": segs, "device_traces": [[]]}


def unframed(data):
    """The same pickle without its FRAME opcodes (a valid pickle: framing is optional)."""
    cut = [pos for op, arg, pos in pickletools.genops(data) if op.name == "FRAME"]
    for pos in reversed(cut):
        data = data[:pos] + data[pos + 9:]
    return data


for p in (2, 3, 4, 5):
    data = pickle.dumps(snap, protocol=p)
    open(os.path.join(out, "pool-p%d.pickle" % p), "wb").write(data)
    if p >= 4:
        open(os.path.join(out, "pool-p%d-unframed.pickle" % p), "wb").write(unframed(data))
PYEOF
"$PYTHON" "$TMP/shared.py" "$TMP" || fail "python3 writes the shared-tuple pickles"
for f in "$TMP"/pool-p*.pickle; do
    b=$(basename "$f" .pickle)
    if ! "$PYTHON" -c 'import pickletools, sys
ops = [op.name for op, a, p in pickletools.genops(open(sys.argv[1], "rb"))]
sys.exit(0 if ops.count("BINGET") + ops.count("LONG_BINGET") >= 9999 else 1)' "$f"; then
        fail "$b: the tuple is written once and referred to by BINGET"
        continue
    fi
    rm -f "$b.db"
    "$VRAMREPORT" import "$f" --db "$b.db" -q >"$b.imp.out" 2>"$b.imp.err" && rc=0 || rc=$?
    if [ "$rc" -ne 0 ]; then
        fail "$b: 10,000 segments sharing one tuple imported" "exit $rc: $(head -c 300 "$b.imp.err")"
        continue
    fi
    "$PYTHON" - "$f" "$b.db" "$b" <<'PYEOF' >"$b.tap" || echo "FAIL	$b: compared" >>"$b.tap"
import sqlite3, sys
from vrtest import load_pickle
d = load_pickle(sys.argv[1])
want = (len(d["segments"]), sum(s["total_size"] for s in d["segments"]),
        sorted({"%d,%d" % s["segment_pool_id"] for s in d["segments"]}))
db = sqlite3.connect(sys.argv[2])
n, total = db.execute("SELECT count(*), sum(total_bytes) FROM segment").fetchone()
pools = sorted(r[0] for r in db.execute("SELECT DISTINCT pool FROM segment"))
got = (n, total, pools)
print(("PASS\t%s: 10,000 segments sharing one tuple imported as Python reads them %r"
       % (sys.argv[3], got)) if got == want else
      "FAIL\t%s: the figures as Python reads them\twant %r, got %r" % (sys.argv[3], want, got))
PYEOF
    tap_lines "$b.tap"
done

finish
