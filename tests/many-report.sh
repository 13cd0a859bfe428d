#!/usr/bin/env bash
# tests/many-report.sh: the report of many devices and ranks, in bounded
# memory. A report holds a small record a device (which ones to show in
# full) and builds rows only for those it shows; the JSON report's lists
# of a row per device or rank are written as they are read.
#   - 3,000 devices: the report's peak resident size (Markdown, JSON) is
#     within 8 MiB of 300 devices' (it held a row a device, 6.7 KiB: 18
#     MiB more);
#   - the JSON of 3,000 devices: the same bytes to a file and to standard
#     output; 16 devices in full and every other one once in
#     more_devices[]; past `ulimit -f`, the write fails with a message and
#     leaves no file;
#   - 4,000 ranks of 12 memory prints each: the report's peak resident
#     size (Markdown, JSON) is within 16 MiB of 400 ranks' (the prints'
#     query sorted every print five times: 29 MiB more), and the
#     growth of every 97th rank (50 MiB a step) is in its row;
#   - 40 ranks of two devices: ranks[] has all 80 rows, each at its
#     device's peak time; the HTML charts 16 ranks, a rank whose devices
#     are not shown in full drawn from their rows too.
# How fast it grows is the benchmark's (tests/bench/many.sh).
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
PY=$VR_SRCDIR/tests/py/many-report
cd "$TMP"
need python3 || true

for n in 300 3000; do
    "$PYTHON" "$VR_SRCDIR/tests/bench/gen_devices.py" "$n" >"d$n.json"
    vr_run "imp$n" import "d$n.json" --db "d$n.db" -q
    [ "$rc" -eq 0 ] && pass "$n devices: imported" || fail "$n devices: imported" "$(cat "imp$n.err")"
done

# The exit status and peak resident size (KiB) of a command, measured by
# tests/bench/rusage (a Python parent's size would be the floor of its
# child's). A sanitizer's quarantine keeps what is freed (256 MiB by
# default): kept small, the peak measures what is held.
peak_kib() {
    err=$1
    shift
    ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=1 \
        "$VR_BUILDDIR/tests/bench/rusage" "$@" >/dev/null 2>"$err" || true
    line=$(grep '^wall_s=' "$err" | tail -n 1)
    kib=$(echo "$line" | tr ' ' '\n' | sed -n 's/^maxrss_kb=//p')
    st=$(echo "$line" | tr ' ' '\n' | sed -n 's/^exit=//p')
    echo "${st:-127} ${kib:-0}"
}

for fmt in md json; do
    small=$(peak_kib small.err "$VRAMREPORT" report --db d300.db --format "$fmt" -o "d300.$fmt")
    large=$(peak_kib large.err "$VRAMREPORT" report --db d3000.db --format "$fmt" -o "d3000.$fmt")
    if [ "${small%% *}" != 0 ] || [ "${large%% *}" != 0 ] || crashed "${large%% *}" large.err; then
        fail "$fmt: the reports of 300 and 3,000 devices" "$(head -c 300 small.err large.err)"
        continue
    fi
    grown=$(( (${large#* } - ${small#* }) / 1024 ))
    [ "$grown" -lt 8 ] && pass "$fmt: 3,000 devices peak ${grown} MiB above 300 devices" \
        || fail "$fmt: 3,000 devices peak under 8 MiB above 300 devices" "${grown} MiB more"
done

# Memory prints of 400 and 4,000 ranks, 12 steps: the prints' query
# reads them in the order of an index (memory_print_series) and sorts
# only the series, so what grows is the page cache (the database's size).
for n in 400 4000; do
    "$PYTHON" "$VR_SRCDIR/tests/bench/gen_prints.py" "$n" 12 >"p$n.log"
    vr_run "pimp$n" import "p$n.log" --db "p$n.db" -q
    [ "$rc" -eq 0 ] && pass "$n ranks of memory prints: imported" \
        || fail "$n ranks of memory prints: imported" "$(cat "pimp$n.err")"
done
for fmt in md json; do
    small=$(peak_kib small.err "$VRAMREPORT" report --db p400.db --format "$fmt" -o "p400.$fmt")
    large=$(peak_kib large.err "$VRAMREPORT" report --db p4000.db --format "$fmt" -o "p4000.$fmt")
    if [ "${small%% *}" != 0 ] || [ "${large%% *}" != 0 ] || crashed "${large%% *}" large.err; then
        fail "$fmt: the reports of 400 and 4,000 ranks of prints" "$(head -c 300 small.err large.err)"
        continue
    fi
    grown=$(( (${large#* } - ${small#* }) / 1024 ))
    [ "$grown" -lt 16 ] && pass "$fmt: 4,000 ranks of prints peak ${grown} MiB above 400 ranks" \
        || fail "$fmt: 4,000 ranks of prints peak under 16 MiB above 400 ranks" "${grown} MiB more"
done
"$PYTHON" "$PY/prints.py" p4000.json >prints.tap 2>&1 || true
tap_lines prints.tap

# JSON to standard output: written as it is made, the same bytes.
vr_run stdout report --db d3000.db --format json
[ "$rc" -eq 0 ] && cmp -s stdout.out d3000.json && pass "JSON of 3,000 devices: standard output holds the file's bytes" \
    || fail "JSON of 3,000 devices: standard output holds the file's bytes" "rc $rc, $(wc -c <stdout.out) and $(wc -c <d3000.json) bytes"

"$PYTHON" "$PY/json_3000.py" d3000.json >json.tap 2>&1 || true
tap_lines json.tap

# Past `ulimit -f` (KiB), the JSON's first writes go out while it is
# made: the failure is said, and the temporary file removed.
mkdir limited
rc=0
(ulimit -f 256 && exec "$VRAMREPORT" report --db d3000.db -o limited/r.json) >limited.out 2>limited.err || rc=$?
[ "$rc" -eq 1 ] && pass "JSON report over ulimit -f: exit 1" \
    || fail "JSON report over ulimit -f: exit 1" "exit $rc"
grep -q '^vramreport: limited/r.json: write failed' limited.err \
    && pass "JSON report over ulimit -f: says the write failed" \
    || fail "JSON report over ulimit -f: says the write failed" "stderr: $(cat limited.err)"
left=$(ls -A limited)
[ -z "$left" ] && pass "JSON report over ulimit -f: no file is left" \
    || fail "JSON report over ulimit -f: no file is left" "$left"

# 40 ranks of two devices each. Rank r's devices peak at 1000 + 10r and
# 500 + r MiB, rank 0 first and rank 1 next: the 16 devices in full are
# the highest (the device 0 of ranks 25 to 39) and the lowest (rank 0's
# device 1), so ranks 0 and 1, which the summary names, are shown with
# devices that are not.
mkdir ranks
"$PYTHON" "$PY/gen_ranks.py" ranks
vr_run rimp import ranks --db ranks.db -q
[ "$rc" -eq 0 ] && pass "40 ranks: imported" || fail "40 ranks: imported" "$(cat rimp.err)"
vr_run rjson report --db ranks.db -o ranks.json
vr_run rhtml report --db ranks.db -o ranks.html
"$PYTHON" "$PY/ranks.py" ranks.json ranks.html >ranks.tap 2>&1 || true
tap_lines ranks.tap
finish
