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
PY=$VR_SRCDIR/tests/py/pickle

DUMP=$VR_BUILDDIR/tests/unit/pickle_dump
SNAPS=$VR_SRCDIR/tests/data/realdata/snapshot
cd "$TMP"

need python3 || true
if [ ! -x "$DUMP" ]; then
    fail "pickle_dump is built" \
        "$DUMP is missing: make tests/unit/pickle_dump (make check builds it)"
    finish
fi

"$PYTHON" "$PY/make.py" "$TMP" || fail "python3 writes the test pickles"

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
    "$PYTHON" "$PY/oracle.py" dump "$f" >"$b.want" 2>"$b.oracle.err" ||
        fail "$b: python3 decodes it" "$(tail -1 "$b.oracle.err")"
    dump "$b" "$f"
    same "$b: decoded as Python decodes it" "$b.want" "$b.out"
    dump "$b.chunks" --chunk 0 "$f"
    same "$b: the same fed in random chunk sizes" "$b.want" "$b.chunks.out"
    "$PYTHON" "$PY/oracle.py" elements "$f" >"$b.want-elements"
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
    "$PYTHON" "$PY/oracle.py" dump "$f" >"p$p.want"
    dump "p$p" --chunk 0 "$f"
    same "protocol $p: a snapshot-shaped dict decoded as Python decodes it" "p$p.want" "p$p.out"
    "$PYTHON" "$PY/oracle.py" counts "$f" >"p$p.want-counts"
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
"$PYTHON" "$PY/shared.py" "$TMP" || fail "python3 writes the shared-tuple pickles"
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
    "$PYTHON" "$PY/shared_tuple.py" "$f" "$b.db" "$b" >"$b.tap" || echo "FAIL	$b: compared" >>"$b.tap"
    tap_lines "$b.tap"
done

finish
