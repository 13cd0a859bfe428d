#!/usr/bin/env bash
# tests/snapshot-device.sh: a snapshot and a trace of the same run are one
# device, never summed (docs/schema.md, "Sources of one device").
# Python writes, from one list of allocations, a Kineto trace ([memory]
# events) and an allocator snapshot (trace entries, end-state segments) of
# one process, and the same for another process (other addresses, same
# sizes and times). Every expected figure is computed here from that list
# or from a report of each file alone.
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
PY=$VR_SRCDIR/tests/py/snapshot-device

cd "$TMP"
need python3 || true
need sqlite3 || true

"$PYTHON" "$PY/gen.py" || fail "gen.py writes the files"

# report NAME FILES...: one vramreport run, its JSON in NAME.json.
report() {
    name=$1
    shift
    vr_run "$name" "$@" --format json -o "$name.json" --quiet
    [ "$rc" = 0 ] && pass "$name: vramreport $*" || fail "$name: vramreport $*" "exit $rc: $(cat "$name.err")"
}

# expect DESC FILE EXPR: EXPR (Python, d = the JSON report, t = truth.json,
# alone = the snapshot's own device, reported alone) holds.
expect() {
    got=$(json_get "$2" "__import__('json').dumps(bool($3))" 2>&1) || got="error: $got"
    [ "$got" = true ] && pass "$1" || fail "$1" "$3: $got" \
        "$(json_get "$2" "[(v['id'], v.get('memory_events'), v.get('peak_allocated_bytes'), v.get('same_device')) for v in d['devices']]" 2>&1)"
}

report alone snap-a.pickle
report trace-alone trace-a.json
alone_events=$(json_get alone.json "d['devices'][0]['memory_events']")
alone_peak=$(json_get alone.json "d['devices'][0]['peak_allocated_bytes']")
trace_peak=$(json_get trace-alone.json "d['devices'][0]['peak_allocated_bytes']")
truth() { "$PYTHON" -c "import json; print(json.load(open('truth.json'))['$1'])"; }
[ "$alone_peak" = "$(truth peak)" ] && pass "the snapshot alone: its peak is the run's" ||
    fail "the snapshot alone: its peak is the run's" "got $alone_peak, want $(truth peak)"
[ "$trace_peak" = "$(truth trace_peak)" ] && pass "the trace alone: its peak is the window's" ||
    fail "the trace alone: its peak is the window's" "got $trace_peak, want $(truth trace_peak)"

# one_device NAME: the report NAME.json has run a's snapshot and trace as
# one device, counted once.
one_device() {
    f=$1.json
    expect "$1: one device" "$f" "len(d['devices']) == 1"
    expect "$1: both files are the device's sources, one counted" "$f" \
        "sorted((s['path'].split('/')[-1], s['chosen']) for s in d['devices'][0]['sources']) == [('snap-a.pickle', True), ('trace-a.json', False)]"
    expect "$1: figures are the snapshot's, not summed" "$f" \
        "(d['devices'][0]['memory_events'], d['devices'][0]['peak_allocated_bytes'], d['devices'][0]['source_choice']) == ($alone_events, $alone_peak, 'chosen')"
    expect "$1: the report says why (rule history, every allocation matched)" "$f" \
        "[(j['path'].split('/')[-1], j['with_path'].split('/')[-1], j['rule'], j['compared'], j['matched'], j['other_compared'], j['other_matched']) for j in d['devices'][0]['same_device']] == [('snap-a.pickle', 'trace-a.json', 'history', $(truth trace_allocs), $(truth trace_allocs), $(truth trace_allocs), $(truth trace_allocs))]"
}

report snap-first snap-a.pickle trace-a.json
one_device snap-first
report trace-first trace-a.json snap-a.pickle
one_device trace-first

# Separate imports into one database, in both orders.
for order in "snap-a.pickle trace-a.json" "trace-a.json snap-a.pickle"; do
    name=sep-${order%%.*}
    rm -f "$name.db"
    for f in $order; do
        vr_run "$name-imp" import "$f" --db "$name.db" --quiet
        [ "$rc" = 0 ] || fail "$name: import $f" "exit $rc: $(cat "$name-imp.err")"
    done
    vr_run "$name" report --db "$name.db" --format json -o "$name.json"
    [ "$rc" = 0 ] && pass "$name: report" || fail "$name: report" "$(cat "$name.err")"
    one_device "$name"
    # The snapshot's trace entries moved with its memory events (trace_entry
    # is a view of both, migration 16): all on the one device left.
    got=$(sqlite3 "$name.db" "SELECT count(*), count(DISTINCT device_id),
        (SELECT count(*) FROM trace_entry WHERE device_id NOT IN (SELECT id FROM device))
        FROM trace_entry")
    [ "${got#*|}" = "1|0" ] && [ "${got%%|*}" -gt 0 ] &&
        pass "$name: the trace entries moved to the device" ||
        fail "$name: the trace entries moved to the device" "entries, devices, on no device: $got"
done

# Markdown names both files and says why.
vr_run md snap-a.pickle trace-a.json -o md.md --quiet
grep -q "snap-a.pickle is this device's snapshot, taken with .*trace-a.json to be one process" md.md &&
    grep -q "(rule history): $(truth trace_allocs) of the snapshot's $(truth trace_allocs) allocations" md.md &&
    pass "the Markdown report says the files are one device, and why" ||
    fail "the Markdown report says the files are one device, and why" "$(grep -n "snapshot" md.md | head -5)"

# Another process: same sizes at the same moments, other addresses.
for order in "snap-a.pickle trace-b.json" "trace-b.json snap-a.pickle"; do
    name=two-${order%%.*}
    report "$name" $order
    expect "$name: another process's trace is another device" "$name.json" \
        "len(d['devices']) == 2 and all(len(v['sources']) == 1 and 'same_device' not in v for v in d['devices'])"
    expect "$name: each device keeps its own figures" "$name.json" \
        "sorted(v['peak_allocated_bytes'] for v in d['devices']) == sorted([$alone_peak, $(truth trace_peak)])"
done

# No history in the snapshot: the trace's live allocations at its end are
# blocks of the snapshot.
for order in "end-a.pickle trace-a.json" "trace-a.json end-a.pickle"; do
    name=end-${order%%.*}
    report "$name" $order
    expect "$name: one device by the end state" "$name.json" \
        "len(d['devices']) == 1 and [(j['rule'], j['compared'], j['matched']) for j in d['devices'][0]['same_device']] == [('end_state', $(truth trace_live_at_end), $(truth trace_live_at_end))]"
done
report end-other end-a.pickle trace-b.json
expect "end-other: another process's end state is another device" end-other.json "len(d['devices']) == 2"

# Two traces that both fit the snapshot: it joins neither.
report twice trace-a.json trace-a2.json snap-a.pickle
expect "twice: a snapshot two traces fit is joined to neither" twice.json \
    "len(d['devices']) == 3 and not any('same_device' in v for v in d['devices'])"

finish
