#!/usr/bin/env bash
# tests/sources.sh: one job, many files. Each source is analysed
# apart (attribution, allocation pairing, steps), each is placed on one
# clock, and a device's figures come from sources that do not overlap in
# time: overlapping ones are shown beside the chosen one, never summed.
# Every expected figure is computed here, by python3, from the traces it
# writes; each case failed before the fix.
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
PY=$VR_SRCDIR/tests/py/sources

cd "$TMP"
need python3 || true
need gzip || true

# gen.py: the traces and, for each, the figures it should give.

check "python3 writes the traces" "$PYTHON" "$PY/gen.py"

# expect DESC REPORT PYTHON-EXPR: the expression, over the report `d`, the
# expectations `x` and dev(rank) / src(path) helpers, is True.
expect() {
    got=$("$PYTHON" "$PY/expect.py" "$2" "$3" 2>&1 || true)
    if [ "$got" = True ]; then pass "$1"; else fail "$1" "$3 -> $got"; fi
}

#-- two ranks, same pid/tid, overlapping clocks -----------------------------------

# each rank's operators and peak are its own, in one command and from two
# imports into one database.
two_ranks() { # TAG REPORT
    for r in 0 1; do
        expect "$1: rank $r's device lists only its own operator" "$2" \
            "sorted(ops(dev($r))) == [x['rank$r']['op']]"
        expect "$1: rank $r's operator allocated its own bytes (self and incl.)" "$2" \
            "(ops(dev($r))[x['rank$r']['op']]['self_alloc_bytes'], ops(dev($r))[x['rank$r']['op']]['incl_alloc_bytes'], ops(dev($r))[x['rank$r']['op']]['self_alloc_count']) == (sum(x['rank$r']['sizes']),) * 2 + (len(x['rank$r']['sizes']),)"
        expect "$1: rank $r's operator was called once" "$2" \
            "ops(dev($r))[x['rank$r']['op']]['calls'] == 1"
        expect "$1: rank $r's peak is its own, reached in its own operator" "$2" \
            "(dev($r)['peak_allocated_bytes'], dev($r)['peak_allocated_op']) == (x['rank$r']['peak'], x['rank$r']['op'])"
        expect "$1: rank $r's largest allocation at the peak is its own" "$2" \
            "dev($r)['top_allocations'][0]['bytes'] == max(x['rank$r']['sizes']) and dev($r)['top_allocations'][0]['op'] == x['rank$r']['op']"
    done
}
vr_run one rank0.json rank1.json --format json -o ranks.json
[ "$rc" = 0 ] && pass "two ranks in one command: exit 0" || fail "two ranks in one command: exit 0" "$(cat one.err)"
two_ranks "one command" ranks.json
rm -f ranks.db
vr_run imp0 import rank0.json --db ranks.db -q
vr_run imp1 import rank1.json --db ranks.db -q
vr_run rep report --db ranks.db --format json -o ranks2.json
[ "$rc" = 0 ] && pass "two ranks from two imports: exit 0" || fail "two ranks from two imports: exit 0" "$(cat rep.err)"
two_ranks "two imports" ranks2.json
mkdir -p job/r0 job/r1
cp rank0.json job/r0/trace.json
cp rank1.json job/r1/trace.json
vr_run dir job --format json -o ranks3.json
[ "$rc" = 0 ] && pass "two ranks from their folder: exit 0" || fail "two ranks from their folder: exit 0" "$(cat dir.err)"
two_ranks "their folder" ranks3.json

#-- one device, overlapping sources: one chosen, the others beside it -------------

vr_run same same-a.json same-b.json same-c.json --format json -o same.json
[ "$rc" = 0 ] && pass "three overlapping files of one device: exit 0" \
    || fail "three overlapping files of one device: exit 0" "$(cat same.err)"
expect "overlapping files: the device's figures are one file's, never the sum" same.json \
    "(dev(3)['peak_allocated_bytes'], dev(3)['memory_events']) == (7 << 20, 6)"
expect "overlapping files: chosen by allocator totals first, then coverage" same.json \
    "[(s['path'], s['chosen']) for s in dev(3)['sources']] == [('same-a.json', False), ('same-b.json', True), ('same-c.json', False)]"
expect "overlapping files: source_choice is \"chosen\"" same.json "dev(3)['source_choice'] == 'chosen'"
expect "overlapping files: every file's own figures are listed beside" same.json \
    "[(s['peak_allocated_bytes'], s['memory_events'], s['totals_rebuilt']) for s in dev(3)['sources']] == [(3 << 20, 4, False), (7 << 20, 6, False), (15 << 20, 8, True)]"
expect "overlapping files: operators counted once (the chosen file's)" same.json \
    "(ops(dev(3))['w::op']['self_alloc_bytes'], ops(dev(3))['w::op']['calls']) == (7 << 20, 1)"
expect "overlapping files: one step, not three" same.json "len(dev(3)['steps']) == 1"
expect "overlapping files: allocated is not rebuilt (the chosen file has totals)" same.json \
    "dev(3)['totals_rebuilt'] is False"
vr_run samemd same-a.json same-b.json same-c.json -o same.md
if grep -q '^| same-b.json | yes | absolute | 6 |' same.md && grep -q '^| same-c.json | no | absolute | 8 |' same.md; then
    pass "overlapping files: the Markdown lists each file, counted or not"
else
    fail "overlapping files: the Markdown lists each file, counted or not" "$(grep -n 'same-' same.md | head -n 8)"
fi
vr_run onemd rank0.json -o one.md
if grep -q 'Several files hold' one.md; then
    fail "one file per device: no table of files" "$(cat one.md | head -n 30)"
else
    pass "one file per device: no table of files"
fi

#-- one device, sources apart in time: combined on one axis -------------------------

vr_run win win-2.json win-1.json --format json -o win.json
[ "$rc" = 0 ] && pass "two windows of one rank: exit 0" || fail "two windows of one rank: exit 0" "$(cat win.err)"
expect "two windows: both counted (source_choice \"combined\")" win.json \
    "dev(4)['source_choice'] == 'combined' and all(s['chosen'] for s in dev(4)['sources'])"
expect "two windows: events summed, peak the higher window's" win.json \
    "(dev(4)['memory_events'], dev(4)['peak_allocated_bytes']) == (8, 7 << 20)"
expect "two windows: one axis, from the first window's start to the second's end" win.json \
    "(dev(4)['start_ts_ns'], dev(4)['end_ts_ns'], dev(4)['peak_allocated_ts_ns']) == (src(dev(4), 'win-1.json')['start_ts_ns'], src(dev(4), 'win-2.json')['end_ts_ns'], src(dev(4), 'win-1.json')['peak_allocated_ts_ns'])"
expect "two windows: the peak's time is on the epoch axis" win.json \
    "dev(4)['peak_allocated_ts_ns'] == (1672444800 * 1000000 + 12) * 1000"
expect "two windows: the steps of both" win.json "[s['step'] for s in dev(4)['steps']] == [1, 2]"
expect "two windows: operators summed over both" win.json \
    "(ops(dev(4))['w::op']['self_alloc_bytes'], ops(dev(4))['w::op']['calls']) == (12 << 20, 2)"
expect "two windows: allocations live at the peak are the peak window's" win.json \
    "sorted(a['bytes'] for a in dev(4)['top_allocations']) == [1 << 20, 6 << 20]"

#-- one clock ------------------------------------------------------------------------

vr_run clk clock-2024.json clock-2022.json unplaced.json --format json -o clock.json
[ "$rc" = 0 ] && pass "2024, 2022 and unplaced traces: exit 0" || fail "2024, 2022 and unplaced traces: exit 0" "$(cat clk.err)"
expect "clock: each source says its rule" clock.json \
    "[s['clock'] for s in d['sources']] == ['baseTimeNanoseconds', 'absolute', 'unplaced']"
expect "clock: the offsets (baseTimeNanoseconds, 0, none)" clock.json \
    "[s['clock_offset_ns'] for s in d['sources']] == [(1672444800 * 1000000 - 5000) * 1000, 0, None]"
expect "clock: a 2024 and a 2022 trace of one moment start at the same epoch ns" clock.json \
    "[s['start_ts_ns'] for s in d['sources'][:2]] == [x['clock_ns']] * 2"
expect "clock: and their peaks land at the same epoch ns" clock.json \
    "[v['peak_allocated_ts_ns'] for v in d['devices'] if v['source_path'] != 'unplaced.json'] == [x['clock_ns'] + 20000] * 2"
expect "clock: an unplaced source keeps its relative times" clock.json \
    "d['sources'][2]['start_ts_ns'] == 250000"
# The same two files of one rank: the same moments overlap (not apart, as
# their raw clocks would say), so one is chosen.
vr_run clkr clock-2024-r.json clock-2022-r.json --format json -o clockr.json
expect "clock: one rank's 2024 and 2022 traces of one moment overlap: one chosen" clockr.json \
    "(dev(5)['source_choice'], [s['chosen'] for s in dev(5)['sources']], dev(5)['memory_events']) == ('chosen', [True, False], 3)"
# An unplaced file beside a placed one cannot be put on its axis: one is
# chosen, never both added.
vr_run unpl clock-2022-r.json unplaced-r.json --format json -o unpl.json
expect "clock: an unplaced file on a device with others: one chosen, not combined" unpl.json \
    "(dev(5)['source_choice'], [s['clock'] for s in dev(5)['sources']], [s['chosen'] for s in dev(5)['sources']]) == ('chosen', ['absolute', 'unplaced'], [True, False])"

#-- a database written by schema 2 -------------------------------------------------

# v2-two-ranks.db.gz: rank0.json and rank1.json above (same pid/tid, ranks
# 0 and 1), same-a.json and same-c.json (rank 3, overlapping; c without
# totals), written by gen.py and imported one by one with `vramreport
# import FILE --db v2.db` built from commit a40c70f (schema 2), then
# VACUUMed. Schema 2 credited rank 1's allocations to rank 0's op and
# merged rank 3's files into one timeline, rebuilding the totals of both.
gzip -dc "$VR_SRCDIR/tests/data/db/v2-two-ranks.db.gz" >v2.db
vr_run v2 report --db v2.db --format json -o v2.json
[ "$rc" = 0 ] && pass "a schema 2 database: reports" || fail "a schema 2 database: reports" "$(cat v2.err)"
vr_run fresh rank0.json rank1.json same-a.json same-c.json --format json -o fresh.json
expect "a schema 2 database: upgraded to the current schema" v2.json \
    "d['schema_version'] == json.load(open('fresh.json'))['schema_version']"
two_ranks "a schema 2 database" v2.json
expect "a schema 2 database: every source placed on the clock" v2.json \
    "[s['clock'] for s in d['sources']] == ['absolute'] * 4"
expect "a schema 2 database: ranks 0 and 1 as in a fresh import" v2.json \
    "[v for v in d['devices'] if v['rank'] in (0, 1)] == [v for v in json.load(open('fresh.json'))['devices'] if v['rank'] in (0, 1)]"
# Schema 2 overwrote same-a's totals when it rebuilt the device's: both
# files count as rebuilt now, and the one with more events is chosen.
expect "a schema 2 database: rank 3's overlapping files are no longer summed" v2.json \
    "(dev(3)['memory_events'], dev(3)['source_choice'], [s['chosen'] for s in dev(3)['sources']], dev(3)['totals_rebuilt']) == (8, 'chosen', [False, True], True)"

finish
