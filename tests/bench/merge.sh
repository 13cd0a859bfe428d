#!/bin/sh
# tests/bench/merge.sh - `vramreport merge` as the ranks grow.
#
# usage: tests/bench/merge.sh [--ranks "64 256"]
#
# Run from the build directory (`make bench` does). For each count N: N
# rank traces of one generated training job (tests/gen-scenarios.py, then
# tests/py/merge/gen_ranks.py: the same shape, peaks scaled apart), each
# imported into its own database as a job array's task would, then merged
# into one job database (docs/scale.md). Prints the merge's wall and
# processor time and peak RSS, the job database's size, and the HTML
# report of the job (time and size: a report shows 16 devices in full, so
# it must not grow much with the ranks). The imports are not timed (each
# is one rank's import, as anywhere else). Table rows for
# docs/performance.md go to stdout.
set -u
counts="64 256"
die() { echo "bench-merge: $*" >&2; exit 1; }
while [ $# -gt 0 ]; do
    case $1 in
    --ranks) counts=$2; shift 2 ;;
    *) die "unknown argument: $1" ;;
    esac
done
benchdir=$(cd "$(dirname "$0")" && pwd) || die "cannot locate the source tree"
src=$(dirname "$(dirname "$benchdir")")
CC=${CC:-cc}
vr=${VRAMREPORT:-./vramreport}
case $vr in /*) ;; *) vr=$(pwd)/$vr ;; esac
[ -x "$vr" ] || die "vramreport not found: $vr"
command -v python3 >/dev/null || die "python3 is needed to write the inputs"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/vramreport-bench-merge.XXXXXX") || die "mktemp failed"
trap 'rm -rf "$tmp"' EXIT
$CC -std=c11 -O2 -o "$tmp/rusage" "$benchdir/rusage.c" || die "cannot build rusage"
python3 "$src/tests/gen-scenarios.py" training "$tmp/base.json" "$tmp/truth.json" || die "gen-scenarios failed"

# "wall_s=... maxrss_kb=... exit=... cpu_s=..." of one run, into $line
measure() {
    "$tmp/rusage" "$@" 2>"$tmp/run.err" >/dev/null || { cat "$tmp/run.err" >&2; die "failed: $*"; }
    line=$(grep 'wall_s=' "$tmp/run.err" | tail -n 1)
}
field() { echo "$line" | tr ' ' '\n' | sed -n "s/^$1=//p"; }

echo "| ranks | merge wall | merge cpu | merge peak RSS | job.db | HTML report | HTML size |"
echo "|---:|---:|---:|---:|---:|---:|---:|"
for n in $counts; do
    d=$tmp/r$n
    mkdir -p "$d"
    python3 "$src/tests/py/merge/gen_ranks.py" "$tmp/base.json" "$d" "$n" || die "gen_ranks failed"
    i=0
    while [ "$i" -lt "$n" ]; do
        "$vr" import -q "$d/rank$i.json" --db "$d/rank$i.db" || die "import of rank $i failed"
        rm -f "$d/rank$i.json"
        i=$((i + 1))
    done
    measure "$vr" merge -q "$d"/rank*.db --db "$d/job.db"
    mw=$(field wall_s) mc=$(field cpu_s) mr=$(field maxrss_kb)
    dbsize=$(wc -c <"$d/job.db")
    measure "$vr" report --db "$d/job.db" -o "$d/job.html"
    hw=$(field wall_s)
    hsize=$(wc -c <"$d/job.html")
    printf '| %s | %s s | %s s | %s MiB | %s MiB | %s s | %s KiB |\n' "$n" "$mw" "$mc" \
        "$(awk "BEGIN{printf \"%.1f\", $mr/1024}")" "$(awk "BEGIN{printf \"%.1f\", $dbsize/1048576}")" \
        "$hw" "$((hsize / 1024))"
    rm -rf "$d"
done
