#!/bin/sh
# tests/bench/log.sh - benchmark of the job-log reader on a generated log.
#
# usage: tests/bench/log.sh [--size-mb N] [--runs N] [--keep]
#
# Run from the build directory (`make bench` does). Builds gen_log.c and
# rusage.c with $CC, writes a log of at least N MiB (default 1024) with a
# few out-of-memory errors, then runs `vramreport import LOG --db X -q`
# --runs times (default 3) and reports the best wall time and processor
# time (user + system: on a shared, loaded machine the wall time measures
# the load), the throughputs and the highest peak RSS. The database must hold exactly the errors the
# generator wrote, each with its requested size, else the script fails.
# A Markdown table row for docs/performance.md goes to stdout.
set -u
size_mb=1024
runs=3
keep=0
die() { echo "bench-log: $*" >&2; exit 1; }
while [ $# -gt 0 ]; do
    case $1 in
    --size-mb) size_mb=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    *) die "unknown argument: $1" ;;
    esac
done
benchdir=$(cd "$(dirname "$0")" && pwd) || die "cannot locate the source tree"
CC=${CC:-cc}
vr=${VRAMREPORT:-./vramreport}
case $vr in /*) ;; *) vr=$(pwd)/$vr ;; esac
[ -x "$vr" ] || die "vramreport not found: $vr"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/vramreport-bench-log.XXXXXX") || die "mktemp failed"
trap '[ "$keep" = 1 ] && echo "bench-log: kept $tmp" >&2 || rm -rf "$tmp"' EXIT
$CC -std=c11 -O2 -o "$tmp/gen_log" "$benchdir/gen_log.c" || die "cannot build gen_log"
$CC -std=c11 -O2 -o "$tmp/rusage" "$benchdir/rusage.c" || die "cannot build rusage"
"$tmp/gen_log" --size-mb "$size_mb" --ooms 6 >"$tmp/train.log" 2>"$tmp/gen.err" || die "gen_log failed"
gen=$(grep '^gen:' "$tmp/gen.err")
echo "bench-log: $gen" >&2
gt() { echo "$gen" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
bytes=$(gt bytes)
best=
cpu=
rss=
i=1
while [ "$i" -le "$runs" ]; do
    rm -f "$tmp/log.db"*
    "$tmp/rusage" "$vr" import "$tmp/train.log" --db "$tmp/log.db" -q 2>"$tmp/run.err" ||
        { cat "$tmp/run.err" >&2; die "import failed"; }
    w=$(grep '^wall_s=' "$tmp/run.err" | tr ' ' '\n' | sed -n 's/^wall_s=//p')
    r=$(grep '^wall_s=' "$tmp/run.err" | tr ' ' '\n' | sed -n 's/^maxrss_kb=//p')
    c=$(grep '^wall_s=' "$tmp/run.err" | tr ' ' '\n' | sed -n 's/^cpu_s=//p')
    echo "bench-log: run $i/$runs: ${w}s wall, ${c}s cpu, peak RSS $((r / 1024)) MiB" >&2
    cpu=$(awk -v a="$cpu" -v b="$c" 'BEGIN { print (a == "" || b + 0 < a + 0) ? b : a }')
    best=$(awk -v a="$best" -v b="$w" 'BEGIN { print (a == "" || b + 0 < a + 0) ? b : a }')
    rss=$(awk -v a="$rss" -v b="$r" 'BEGIN { print (a == "" || b + 0 > a + 0) ? b : a }')
    i=$((i + 1))
done
got=$(python3 -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); print(*c.execute("SELECT count(*), min(requested_bytes), max(requested_bytes), count(DISTINCT rank) FROM oom_event").fetchone())' "$tmp/log.db")
want="$(gt ooms) $(gt requested) $(gt requested) 2"
[ "$got" = "$want" ] || die "the database holds '$got' (errors, min/max requested, ranks), expected '$want'"
echo "bench-log: every error found, with its figures ($got)" >&2
awk -v b="$bytes" -v s="$best" -v c="$cpu" -v r="$rss" -v n="$(gt lines)" -v k="$(gt ooms)" 'BEGIN {
    printf "| job log, %.0f MiB, %d lines, %d errors | import | %.2f s (%.0f MiB/s) | %.2f s (%.0f MiB/s) | %.0f MiB |\n",
        b / 1048576, n, k, s, b / 1048576 / s, c, b / 1048576 / c, r / 1024 }'
