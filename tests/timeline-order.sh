#!/usr/bin/env bash
# tests/timeline-order.sh: the timeline pass gives the same allocations,
# peaks and steps whatever the order of the memory events in the file.
# It reads the events in table order when only a few are out of place
# (guessed among the table's last rows, else found by the index) and by
# the index otherwise (timeline.c): each variant below takes one of those
# ways, and each must give what the file sorted by device and time gives.
# The pairing and the peaks are also computed here, by python3, from the
# events themselves. The HTML report's memory charts, which read the
# events in table order too when they are one device's and source's
# (render/out/chart_timeline.c: the rows out of place put back, else the
# points cleared and read again by time), must be the sorted file's.
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
PY=$VR_SRCDIR/tests/py/timeline-order

cd "$TMP"
need python3 || true

check "python3 writes the traces" "$PYTHON" "$PY/gen.py"

# dump.py DB: what the timeline wrote, with each event named by its
# device and time (event ids follow the file's order).

for v in one-sorted one-tail one-middle one-shuffled two-sorted two-tail two-middle two-mixed; do
    vr_run "imp-$v" import "$v.json" --db "$v.db" -q
    if [ "$rc" = 0 ]; then
        pass "$v: imported"
    else
        fail "$v: imported" "$(cat "imp-$v.err")"
    fi
    "$PYTHON" "$PY/dump.py" "$v.db" >"$v.dump" 2>"$v.dump.err" || fail "$v: read back" "$(cat "$v.dump.err")"
done

# The oracle's pairing and peak per device.
oracle() {
    "$PYTHON" "$PY/oracle_check.py" "$1" "$2"
}
check "one device, sorted: pairing and peak as computed from the events" oracle one-sorted one
check "two devices, sorted: pairing and peaks as computed from the events" oracle two-sorted two

same() {
    if cmp -s "$1.dump" "$2.dump"; then
        pass "$2: the same allocations, peaks and steps as $1"
    else
        fail "$2: the same allocations, peaks and steps as $1" \
            "$(diff "$1.dump" "$2.dump" | head -n 12)"
    fi
}
same one-sorted one-tail
same one-sorted one-middle
same one-sorted one-shuffled
same two-sorted two-tail
same two-sorted two-middle
same two-sorted two-mixed

# charts V: the memory-over-time charts of V's report.
charts() {
    vr_run "rep-$1" report --db "$1.db" -o "$1.html"
    "$PYTHON" -c '
import re, sys
html = open(sys.argv[1], encoding="utf-8").read()
svgs = re.findall(r"<svg [^>]*class=\"vr-chart\".*?</svg>", html, re.S)
sys.stdout.write("\n".join(svgs))' "$1.html" >"$1.charts"
}
for v in one-sorted one-tail one-middle one-shuffled two-sorted two-tail two-middle two-mixed; do
    charts "$v"
done
[ -s one-sorted.charts ] && pass "the sorted file's report draws its memory chart" \
    || fail "the sorted file's report draws its memory chart" "$(cat rep-one-sorted.err)"
same_charts() {
    if cmp -s "$1.charts" "$2.charts"; then
        pass "$2: the report's memory charts are $1's"
    else
        fail "$2: the report's memory charts are $1's" "$(diff "$1.charts" "$2.charts" | head -n 6)"
    fi
}
same_charts one-sorted one-tail
same_charts one-sorted one-middle
same_charts one-sorted one-shuffled
same_charts two-sorted two-tail
same_charts two-sorted two-middle
same_charts two-sorted two-mixed

finish
