#!/bin/sh
# tests/bench/ranks.sh - a 4-rank job's traces in one report, against one rank's.
#
# usage: tests/bench/ranks.sh [--size-mb N] [--ranks N] [--runs N] [--keep]
#
# Run from the build directory (`make bench` does). Uses ./vramreport (or
# $VRAMREPORT) and the C compiler $CC (default cc) to build gen_trace.c and
# rusage.c from this folder. Generates N (default 4) traces of at least
# --size-mb MiB each (default 50), one a rank of one job (seeds 1..N, their
# distributedInfo set to rank r of N, as tests/merge.sh makes them), then,
# --runs times each (default 3):
#   vramreport rank0.json -o one.html --quiet               (one rank)
#   vramreport rank0.json ... rankN-1.json -o job.html --quiet   (the job)
# and, where `vramreport --help` offers --jobs, the job again with
# --jobs 1 (the default then runs the ranks' imports side by side).
# Prints a Markdown table: best wall and CPU, highest peak RSS, and each
# run's ratio to the one rank's (N: the job costs N ranks' time).
# The job's JSON report must hold each rank's cuda:0 with the generator's
# peak_allocated_bytes, else the script fails.
set -u

size_mb=50
nranks=4
runs=3
keep=0

die() {
    echo "bench-ranks: $*" >&2
    exit 1
}
log() { echo "bench-ranks: $*" >&2; }

while [ $# -gt 0 ]; do
    case $1 in
    --size-mb) [ $# -ge 2 ] || die "--size-mb needs a value"; size_mb=$2; shift 2 ;;
    --ranks) [ $# -ge 2 ] || die "--ranks needs a value"; nranks=$2; shift 2 ;;
    --runs) [ $# -ge 2 ] || die "--runs needs a value"; runs=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    -h|--help)
        sed -n '2,/^set -u/p' "$0" | sed -e '/^set -u/d' -e 's/^# \{0,1\}//' >&2
        exit 0 ;;
    *) die "unknown argument: $1 (try --help)" ;;
    esac
done
case $size_mb in ''|*[!0-9.]*) die "--size-mb: not a number: $size_mb" ;; esac
case $runs in ''|*[!0-9]*|0) die "--runs: not a positive integer: $runs" ;; esac
case $nranks in ''|*[!0-9]*|0|1) die "--ranks: an integer of 2 or more: $nranks" ;; esac

. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
bench_setup bench-ranks gen_trace

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else print "n/a" }'; }

# ---- the ranks: gen_trace writes rank 0 of 2; each becomes rank r of N ----
files=''
truth=''
total=0
r=0
while [ "$r" -lt "$nranks" ]; do
    f=$tmp/rank$r.json
    "$tmp/gen_trace" --seed $((r + 1)) --size-mb "$size_mb" 2>"$tmp/gen.err" |
        sed "s/\"rank\": 0, \"world_size\": 2/\"rank\": $r, \"world_size\": $nranks/" >"$f" ||
        { cat "$tmp/gen.err" >&2; die "gen_trace failed"; }
    peak=$(sed -n 's/^gen: .*peak_allocated=\([0-9]*\).*/\1/p' "$tmp/gen.err")
    [ -n "$peak" ] || die "gen_trace printed no ground truth"
    truth="$truth $r=$peak"
    total=$((total + $(wc -c <"$f")))
    files="$files $f"
    r=$((r + 1))
done
log "$nranks rank traces, $total bytes in all"

# measure NAME CMD...: $runs runs; sets m_wall, m_cpu (best), m_rss (highest)
measure() {
    m_name=$1
    shift
    m_wall='' m_cpu='' m_rss=''
    i=1
    while [ "$i" -le "$runs" ]; do
        rm -f "$tmp/out.html"
        "$tmp/rusage" "$@" >/dev/null 2>"$tmp/run.err" ||
            { grep -v '^wall_s=' "$tmp/run.err" | tail -n 20 >&2; die "$m_name failed"; }
        w=$(field wall_s "$tmp/run.err") c=$(field cpu_s "$tmp/run.err") rs=$(field maxrss_kb "$tmp/run.err")
        log "$m_name run $i/$runs: ${w}s, CPU ${c}s, peak RSS $(kb2mib "$rs") MiB"
        m_wall=$(fmin "$m_wall" "$w") m_cpu=$(fmin "$m_cpu" "$c") m_rss=$(fmax "$m_rss" "$rs")
        i=$((i + 1))
    done
}

# The job's report must hold every rank, each with its own peak.
# shellcheck disable=SC2086  # $files: the ranks' paths, no spaces (mktemp)
"$vr" $files -o "$tmp/job.json" --quiet || die "the job's JSON report failed"
python3 - "$tmp/job.json" "$truth" <<'EOF' || die "the job's report does not hold each rank's peak"
import json, sys

devices = json.load(open(sys.argv[1]))["devices"]
got = {d["rank"]: d["peak_allocated_bytes"] for d in devices if d["id"] == "cuda:0"}
want = {int(r): int(p) for r, p in (kv.split("=") for kv in sys.argv[2].split())}
if got != want:
    sys.exit("ranks' cuda:0 peaks: report %s, generator %s" % (got, want))
EOF
check="the job's report holds each rank's cuda:0 peak, as generated"
log "$check"

measure "one rank" "$vr" "$tmp/rank0.json" -o "$tmp/out.html" --quiet
one_wall=$m_wall one_cpu=$m_cpu one_rss=$m_rss
# shellcheck disable=SC2086
measure "$nranks ranks" "$vr" $files -o "$tmp/out.html" --quiet
job_wall=$m_wall job_cpu=$m_cpu job_rss=$m_rss
# --jobs comes with a later vramreport: detected, not assumed.
jobs1=''
if "$vr" --help 2>&1 | grep -q -e '--jobs'; then
    # shellcheck disable=SC2086
    measure "$nranks ranks, --jobs 1" "$vr" --jobs 1 $files -o "$tmp/out.html" --quiet
    jobs1="$m_wall $m_cpu $m_rss"
fi

row() { # label wall cpu rss
    echo "| $1 | $runs | $2 | $3 | $(kb2mib "$4") | $(ratio "$2" "$one_wall") | $(ratio "$3" "$one_cpu") |"
}
echo "### $nranks ranks in one report (${size_mb} MiB traces)"
echo
echo "- Machine: $(sed -n 's/^model name[[:space:]]*:[[:space:]]*//p' /proc/cpuinfo 2>/dev/null | head -n 1), $(nproc 2>/dev/null || echo '?') CPUs; $(uname -sr)"
echo "- Date: $(date -u '+%Y-%m-%d %H:%M UTC'); $nranks traces, $total bytes of JSON in all"
echo
echo "| Run | Runs | Best wall (s) | Best CPU (s) | Peak RSS (MiB) | wall / one rank's | CPU / one rank's |"
echo "|---|---:|---:|---:|---:|---:|---:|"
row "\`vramreport rank0.json -o one.html\` (one rank)" "$one_wall" "$one_cpu" "$one_rss"
if [ -n "$jobs1" ]; then
    # shellcheck disable=SC2086
    set -- $jobs1
    row "\`vramreport --jobs 1 rank0.json ... -o job.html\` ($nranks ranks)" "$1" "$2" "$3"
fi
row "\`vramreport rank0.json ... -o job.html\` ($nranks ranks)" "$job_wall" "$job_cpu" "$job_rss"
echo
echo "Correctness: $check."
echo
note=''
[ -n "$jobs1" ] && note=" The last row runs with the default --jobs."
echo "Best of $runs runs (wall and CPU each, user + system of every thread); a ratio of $nranks means the job costs $nranks ranks' time.$note"
