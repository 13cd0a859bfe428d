#!/bin/sh
# tests/bench/many.sh - how the work grows with devices and ranks.
#
# usage: tests/bench/many.sh [--devices N] [--ranks N] [--files N]
#
# Run from the build directory (`make bench` does). Three shapes, each at
# a size and at 4x it: one profiler trace naming N devices (default
# 2500), a job log of memory prints from N ranks (default 1000, 12
# steps) and a folder of N one-rank traces (default 250), each imported
# and reported (HTML). Prints the processor time of each run and the
# ratio, 4x against 1x (linear work gives about 4), and the peak RSS of
# the import (with its analysis), of the HTML report and of the JSON
# report, each with its ratio: what grows is SQLite's (its page cache,
# which follows the database up to 64 MiB, and its sorts), and a small
# record a device, rank or print (src/render/results/many.h); the JSON report is
# written as it is made. The HTML report's size is printed too (it must
# not grow: a report shows 16 devices in full). Table rows for
# docs/performance.md go to stdout.
set -u
devices=2500
ranks=1000
files=250
die() { echo "bench-many: $*" >&2; exit 1; }
while [ $# -gt 0 ]; do
    case $1 in
    --devices) devices=$2; shift 2 ;;
    --ranks) ranks=$2; shift 2 ;;
    --files) files=$2; shift 2 ;;
    *) die "unknown argument: $1" ;;
    esac
done
benchdir=$(cd "$(dirname "$0")" && pwd) || die "cannot locate the source tree"
CC=${CC:-cc}
vr=${VRAMREPORT:-./vramreport}
case $vr in /*) ;; *) vr=$(pwd)/$vr ;; esac
[ -x "$vr" ] || die "vramreport not found: $vr"
command -v python3 >/dev/null || die "python3 is needed to write the inputs"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/vramreport-bench-many.XXXXXX") || die "mktemp failed"
trap 'rm -rf "$tmp"' EXIT
$CC -std=c11 -O2 -o "$tmp/rusage" "$benchdir/rusage.c" || die "cannot build rusage"

# one run: "cpu_s maxrss_kb"
measure() {
    "$tmp/rusage" "$@" 2>"$tmp/run.err" >/dev/null || { cat "$tmp/run.err" >&2; die "failed: $*"; }
    line=$(grep '^wall_s=' "$tmp/run.err")
    c=$(echo "$line" | tr ' ' '\n' | sed -n 's/^cpu_s=//p')
    r=$(echo "$line" | tr ' ' '\n' | sed -n 's/^maxrss_kb=//p')
    echo "$c $r"
}

# shape, size, input: import + HTML report (+ JSON report, its RSS alone);
# "cpu_s import_kb report_kb report_bytes json_kb"
one() {
    rm -f "$tmp/x.db"* "$tmp/x.html" "$tmp/x.json"
    set -- $(measure "$vr" import "$3" --db "$tmp/x.db" -q) $(measure "$vr" report --db "$tmp/x.db" -o "$tmp/x.html") \
        $(measure "$vr" report --db "$tmp/x.db" -o "$tmp/x.json")
    cpu=$(awk -v a="$1" -v b="$3" 'BEGIN { print a + b }')
    echo "$cpu $2 $4 $(wc -c <"$tmp/x.html") $6"
}

row() { # shape, n, 4n, results of both
    awk -v s="$1" -v n="$2" -v m="$3" -v c1="$4" -v i1="$5" -v r1="$6" -v b1="$7" -v j1="$8" \
        -v c2="$9" -v i2="${10}" -v r2="${11}" -v b2="${12}" -v j2="${13}" 'BEGIN {
        printf "| %s | %d / %d | %.2f s / %.2f s (%.1fx) | %.0f / %.0f MiB (%.1fx) | %.0f / %.0f MiB (%.1fx) | %.0f / %.0f MiB (%.1fx) | %.0f / %.0f KiB |\n",
            s, n, m, c1, c2, c2 / c1, i1 / 1024, i2 / 1024, i2 / i1, r1 / 1024, r2 / 1024, r2 / r1,
            j1 / 1024, j2 / 1024, j2 / j1, b1 / 1024, b2 / 1024 }'
}

echo "| shape | size / 4x | processor time (ratio) | peak RSS, import (ratio) | peak RSS, HTML report (ratio) | peak RSS, JSON report (ratio) | HTML report |"
echo "|---|---|---|---|---|---|---|"
python3 "$benchdir/gen_devices.py" "$devices" >"$tmp/d1.json" || die "gen_devices failed"
python3 "$benchdir/gen_devices.py" $((devices * 4)) >"$tmp/d4.json" || die "gen_devices failed"
a=$(one devices "$devices" "$tmp/d1.json")
b=$(one devices $((devices * 4)) "$tmp/d4.json")
row "devices, one trace" "$devices" $((devices * 4)) $a $b
python3 "$benchdir/gen_prints.py" "$ranks" 12 >"$tmp/p1.log" || die "gen_prints failed"
python3 "$benchdir/gen_prints.py" $((ranks * 4)) 12 >"$tmp/p4.log" || die "gen_prints failed"
a=$(one prints "$ranks" "$tmp/p1.log")
b=$(one prints $((ranks * 4)) "$tmp/p4.log")
row "ranks' memory prints, 12 steps" "$ranks" $((ranks * 4)) $a $b
python3 "$benchdir/gen_devices.py" --ranks "$files" "$tmp/f1" || die "gen_devices failed"
python3 "$benchdir/gen_devices.py" --ranks $((files * 4)) "$tmp/f4" || die "gen_devices failed"
a=$(one files "$files" "$tmp/f1")
b=$(one files $((files * 4)) "$tmp/f4")
row "one-rank traces, a folder" "$files" $((files * 4)) $a $b
