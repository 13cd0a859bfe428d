#!/bin/sh
# tests/bench/ooms.sh - how the work grows with the out-of-memory errors of a log.
#
# usage: tests/bench/ooms.sh [--ooms "N1 N2"] [--every L] [--keep]
#
# Run from the build directory (`make bench` does). Builds gen_log.c and
# rusage.c with $CC and, for each count N (default 5000 and 20000), writes
# a log of N errors (two ranks, an error of each after every L lines of
# steps, default 20; gen_log --vary: one shape per rank whose request
# ranges over 22-28 MiB), then runs the whole of `vramreport LOG -o
# report.FMT` for FMT json and html, and reports for each the processor
# time (user + system: on a shared, loaded machine the wall time measures
# the load), the peak RSS and the report's size, then the ratios of the
# last count to the first. Work that grows with the errors alone grows
# like them (4 times for 5,000 to 20,000); the report's size does not grow
# at all (the errors of one shape are told once). The JSON must count
# every error and group them in two shapes, else the script fails.
# Then two logs of one job, N errors each in N / 2,000 s (gen_log --every 1
# --rate 1000: each error has a twin in the other log, among thousands of
# candidates within the twin search's 10 s), to JSON: every error of rank
# 0 in the second log must be found the twin of one of the first's (rank
# 1's, printed after rank 0's traceback, have no stamp: never twins).
# Markdown table rows for docs/performance.md go to stdout.
set -u
counts="5000 20000"
every=20
keep=0
die() { echo "bench-ooms: $*" >&2; exit 1; }
while [ $# -gt 0 ]; do
    case $1 in
    --ooms) counts=$2; shift 2 ;;
    --every) every=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    *) die "unknown argument: $1" ;;
    esac
done
benchdir=$(cd "$(dirname "$0")" && pwd) || die "cannot locate the source tree"
CC=${CC:-cc}
vr=${VRAMREPORT:-./vramreport}
case $vr in /*) ;; *) vr=$(pwd)/$vr ;; esac
[ -x "$vr" ] || die "vramreport not found: $vr"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/vramreport-bench-ooms.XXXXXX") || die "mktemp failed"
trap '[ "$keep" = 1 ] && echo "bench-ooms: kept $tmp" >&2 || rm -rf "$tmp"' EXIT
$CC -std=c11 -O2 -o "$tmp/gen_log" "$benchdir/gen_log.c" || die "cannot build gen_log"
$CC -std=c11 -O2 -o "$tmp/rusage" "$benchdir/rusage.c" || die "cannot build rusage"
field() { tr ' ' '\n' <"$1" | sed -n "s/^$2=//p"; }
first=
for n in $counts; do
    "$tmp/gen_log" --ooms "$n" --every "$every" --vary >"$tmp/ooms-$n.log" 2>"$tmp/gen.err" ||
        die "gen_log failed"
    got=$(field "$tmp/gen.err" ooms)
    [ "$got" = "$n" ] || die "gen_log wrote $got errors, not $n"
    mib=$(awk -v b="$(field "$tmp/gen.err" bytes)" 'BEGIN { printf "%.1f", b / 1048576 }')
    for fmt in json html; do
        out="$tmp/report-$n.$fmt"
        "$tmp/rusage" "$vr" -q "$tmp/ooms-$n.log" -o "$out" 2>"$tmp/run.err" ||
            { cat "$tmp/run.err" >&2; die "vramreport failed on $n errors ($fmt)"; }
        line=$(grep '^wall_s=' "$tmp/run.err")
        echo "$line" >"$tmp/line"
        cpu=$(field "$tmp/line" cpu_s)
        rss=$(field "$tmp/line" maxrss_kb)
        size=$(wc -c <"$out" | tr -d ' ')
        echo "bench-ooms: $n errors ($mib MiB), $fmt: ${cpu}s cpu, peak RSS $((rss / 1024)) MiB, report $size bytes" >&2
        echo "$n $fmt $cpu $rss $size $mib" >>"$tmp/results"
    done
    python3 - "$tmp/report-$n.json" "$n" <<'EOF' || die "the JSON of $n errors is not what the log holds"
import json, sys
d = json.load(open(sys.argv[1])); n = int(sys.argv[2])
groups = d["oom_groups"]
ok = (d["oom_event_count"] == n and sum(g["errors"] for g in groups) == n and len(groups) == 2
      and all(g["requested_min_bytes"] == 22 << 20 and g["requested_max_bytes"] == 28 << 20
              for g in groups))
sys.exit(0 if ok else 1)
EOF
    [ -n "$first" ] || first=$n
    last=$n
done
echo "bench-ooms: every error counted, in two shapes of 22-28 MiB" >&2
for n in $counts; do
    "$tmp/gen_log" --ooms "$n" --every 1 --rate 1000 --vary >"$tmp/twin-a.log" 2>/dev/null &&
        "$tmp/gen_log" --ooms "$n" --every 1 --rate 1000 --vary --seed 2 >"$tmp/twin-b.log" 2>/dev/null ||
        die "gen_log failed"
    out="$tmp/twins-$n.json"
    "$tmp/rusage" "$vr" -q "$tmp/twin-a.log" "$tmp/twin-b.log" -o "$out" 2>"$tmp/run.err" ||
        { cat "$tmp/run.err" >&2; die "vramreport failed on two logs of $n errors"; }
    grep '^wall_s=' "$tmp/run.err" >"$tmp/line"
    cpu=$(field "$tmp/line" cpu_s)
    rss=$(field "$tmp/line" maxrss_kb)
    size=$(wc -c <"$out" | tr -d ' ')
    echo "bench-ooms: two logs of $n errors in $((n / 2000)) s: ${cpu}s cpu, peak RSS $((rss / 1024)) MiB, report $size bytes" >&2
    echo "$n twins $cpu $rss $size 0" >>"$tmp/results"
    python3 - "$out" "$n" <<'EOF' || die "two logs of $n errors: rank 0's not each the twin of one"
import json, sys
d = json.load(open(sys.argv[1])); n = int(sys.argv[2])
# rank 0's n / 2 errors of the second log are twins of the first's: one OOM
# each, counted once (oom_event_count since the twins are joined, 606072e)
sys.exit(0 if d["oom_event_count"] == 2 * n - n // 2 and d["verdict"]["finding_count"] == n + n // 2 else 1)
EOF
done
echo "bench-ooms: two logs: each error of rank 0 in the second the twin of one of the first's" >&2
awk -v first="$first" -v last="$last" '
    function label(n, f) {
        return f == "twins" ? sprintf("two logs of one job, %d errors each in %g s -> json", n, n / 2000) \
                            : sprintf("job log, %d errors (%.1f MiB) -> %s", n, mib[n], f)
    }
    { cpu[$1, $2] = $3; rss[$1, $2] = $4; size[$1, $2] = $5; if ($2 != "twins") mib[$1] = $6 }
    END {
        for (i = 0; i < 3; i++) {
            f = i == 0 ? "json" : i == 1 ? "html" : "twins"
            for (k = 0; k < 2; k++) {
                n = k ? last : first
                printf "| %s | %.2f s | %.0f MiB | %.0f KiB |\n", label(n, f), cpu[n, f],
                    rss[n, f] / 1024, size[n, f] / 1024
            }
            printf "bench-ooms: %s, %d/%d errors (x%.1f): cpu x%.2f, peak RSS x%.2f, report x%.2f\n",
                f, last, first, last / first, cpu[last, f] / (cpu[first, f] > 0 ? cpu[first, f] : 0.01),
                rss[last, f] / rss[first, f], size[last, f] / size[first, f] > "/dev/stderr"
        }
    }' "$tmp/results"
