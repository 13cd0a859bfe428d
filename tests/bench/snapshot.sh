#!/bin/sh
# tests/bench/snapshot.sh - benchmark of `vramreport import` on a generated
# CUDA caching-allocator snapshot (a pickle).
#
# usage: tests/bench/snapshot.sh [--size-mb N] [--seed N] [--runs N] [--keep] [--no-baseline]
#
# Run from the build directory (`make bench` runs it after run.sh). Uses
# ./vramreport (or $VRAMREPORT) and the C compiler $CC (default cc) to build
# gen_snapshot.c and rusage.c from this folder. A snapshot of N MiB (default
# 512, at least a million trace entries) is generated, then
#   vramreport import SNAP --db X.db --quiet          (--runs times, default 3)
# The best wall time (and, from VRAMREPORT_TIMING, its import and analysis
# stages), the throughput in MiB/s of pickle and the highest peak RSS
# are reported, as a Markdown table on stdout (progress on stderr). Then,
# --runs times each, beside it in the same table:
#   vramreport SNAP -o report.html --quiet            (end to end)
#   python3 tests/bench/baseline.py snapshot SNAP     (the Python baseline:
#       pickle.load and memory_viz's replay of alloc/free_completed)
# and the ratios of the two (wall, CPU, peak RSS; --no-baseline skips it).
# The database must hold the generator's ground truth (trace entries per
# action, ooms, segments, blocks, reserved and allocated bytes at the end,
# the peak, distinct frames and stacks), and the baseline's peak must be
# vramreport's (its JSON report's peak_allocated_bytes), else the script fails.
set -u

size_mb=512
seed=1
runs=3
keep=0
baseline=1

die() {
    echo "bench: $*" >&2
    exit 1
}
log() { echo "bench: $*" >&2; }

while [ $# -gt 0 ]; do
    case $1 in
    --size-mb) [ $# -ge 2 ] || die "--size-mb needs a value"; size_mb=$2; shift 2 ;;
    --seed) [ $# -ge 2 ] || die "--seed needs a value"; seed=$2; shift 2 ;;
    --runs) [ $# -ge 2 ] || die "--runs needs a value"; runs=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    --no-baseline) baseline=0; shift ;;
    -h|--help)
        sed -n '2,/^set -u/p' "$0" | sed -e '/^set -u/d' -e 's/^# \{0,1\}//' >&2
        exit 0 ;;
    *) die "unknown argument: $1 (try --help)" ;;
    esac
done
case $size_mb in ''|*[!0-9.]*) die "--size-mb: not a number: $size_mb" ;; esac
case $runs in ''|*[!0-9]*|0) die "--runs: not a positive integer: $runs" ;; esac
case $seed in ''|*[!0-9]*) die "--seed: not a number: $seed" ;; esac

. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
bench_setup snapbench gen_snapshot

rate() { awk -v b="$1" -v s="$2" 'BEGIN { if (s + 0 > 0) printf "%.1f", b / 1048576 / s; else print "n/a" }'; }
# stage NAME FILE: seconds of a stage from VRAMREPORT_TIMING's lines
stage() { sed -n "s/^vramreport: timing: $1 \([0-9.]*\) s.*/\1/p" "$2" | tail -n 1; }
# stage_cpu NAME FILE: the process's CPU seconds when the stage ended
stage_cpu() { sed -n "s/^vramreport: timing: $1 .*(cpu \([0-9.]*\) s so far).*/\1/p" "$2" | tail -n 1; }

snap=$tmp/snapshot.pickle
log "generating a ${size_mb} MiB snapshot (seed $seed)"
"$tmp/rusage" "$tmp/gen_snapshot" --seed "$seed" --size-mb "$size_mb" >"$snap" 2>"$tmp/gen.err" ||
    { cat "$tmp/gen.err" >&2; die "gen_snapshot failed"; }
truth=$(sed -n 's/^gen: //p' "$tmp/gen.err")
[ -n "$truth" ] || die "gen_snapshot printed no ground truth"
log "gen: $truth"
gt() { echo "$truth" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
bytes=$(gt bytes)
[ "$(wc -c <"$snap" | tr -d ' ')" = "$bytes" ] || die "the snapshot's size differs from the generator's"
gen_wall=$(field wall_s "$tmp/gen.err")

best=
best_stage=
best_cpu=
best_stage_cpu=
best_analyze_cpu=
best_analyze=
best_writer=
rss=
i=1
while [ "$i" -le "$runs" ]; do
    rm -f "$tmp/snap.db" "$tmp/snap.db-wal" "$tmp/snap.db-shm" "$tmp/snap.db-journal"
    if ! VRAMREPORT_TIMING=1 "$tmp/rusage" "$vr" import "$snap" --db "$tmp/snap.db" --quiet >"$tmp/run.out" 2>"$tmp/run.err"; then
        grep -v '^wall_s=' "$tmp/run.err" | tail -n 20 >&2
        die "vramreport import failed"
    fi
    w=$(field wall_s "$tmp/run.err")
    r=$(field maxrss_kb "$tmp/run.err")
    st=$(stage import "$tmp/run.err")
    c=$(field cpu_s "$tmp/run.err")
    log "import run $i/$runs: ${w}s ($(rate "$bytes" "$w") MiB/s), import stage ${st}s ($(rate "$bytes" "$st") MiB/s), analysis $(stage analyze "$tmp/run.err")s, CPU ${c}s ($(rate "$bytes" "$c") MiB/s), peak RSS $(kb2mib "$r") MiB"
    if [ -z "$best" ] || awk -v a="$best" -v b="$w" 'BEGIN { exit !(b + 0 < a + 0) }'; then
        best_stage=$st
        best_cpu=$c
        best_stage_cpu=$(stage_cpu import "$tmp/run.err")
        best_analyze_cpu=$(awk -v a="$(stage_cpu analyze "$tmp/run.err")" -v b="$best_stage_cpu" 'BEGIN { printf "%.3f", a - b }')
        best_analyze=$(stage analyze "$tmp/run.err")
        best_writer=$(sed -n 's/^vramreport: timing: writer thread: cpu \([0-9.]*\) s$/\1/p' "$tmp/run.err" | tail -n 1)
    fi
    best=$(awk -v a="$best" -v b="$w" 'BEGIN { print (a == "" || b + 0 < a + 0) ? b : a }')
    rss=$(awk -v a="$rss" -v b="$r" 'BEGIN { print (a == "" || b + 0 > a + 0) ? b : a }')
    i=$((i + 1))
done

# ---- correctness: the database against the generator's ground truth -------
python3 - "$tmp/snap.db" "$truth" >"$tmp/check.txt" 2>&1 <<'EOF'
import sqlite3, sys

db = sqlite3.connect(sys.argv[1])
truth = {k: int(v) for k, v in (kv.split("=") for kv in sys.argv[2].split())}
one = lambda q: db.execute(q).fetchone()
got = {"entries": one("SELECT count(*) FROM trace_entry")[0],
       "oom": one("SELECT count(*) FROM oom_event")[0],
       "blocks": one("SELECT count(*) FROM block")[0],
       "frames": one("SELECT count(*) FROM frame")[0],
       "stacks": one("SELECT count(*) FROM stack")[0],
       "peak_allocated": one("SELECT max(total_allocated) FROM mem_event")[0]}
for action, n in db.execute("SELECT action, count(*) FROM trace_entry GROUP BY action"):
    got[action] = n
got["segments"], got["reserved"] = one("SELECT count(*), sum(total_bytes) FROM segment")
got["allocated"], end_reserved = one(
    "SELECT total_allocated, total_reserved FROM mem_event ORDER BY ts_ns DESC, id DESC LIMIT 1")
bad = ["%s: database %s, generator %s" % (k, got.get(k), v)
       for k, v in sorted(truth.items()) if k != "bytes" and got.get(k, 0) != v]
if end_reserved != truth["reserved"]:
    bad.append("the timeline ends at %s reserved, not %s" % (end_reserved, truth["reserved"]))
print("\n".join(bad) if bad else "OK")
sys.exit(1 if bad else 0)
EOF
check=$?
status=0
if [ "$check" = 0 ]; then
    check_msg="the database holds the generator's ground truth ($(echo "$truth" | tr ' ' '\n' | grep -c =) figures)"
else
    sed 's/^/bench: /' "$tmp/check.txt" >&2
    check_msg="MISMATCH with the generator's ground truth"
    status=1
fi
log "$check_msg"

# ---- end to end, and the Python baseline, on the same snapshot -------------
# best NAME CMD...: runs CMD $runs times; sets b_wall, b_cpu (the best of
# each), b_rss (the highest), b_out (the last run's stdout file)
best() {
    b_name=$1
    shift
    b_wall='' b_cpu='' b_rss='' b_out=$tmp/best.out
    j=1
    while [ "$j" -le "$runs" ]; do
        if ! "$tmp/rusage" "$@" >"$b_out" 2>"$tmp/best.err"; then
            grep -v '^wall_s=' "$tmp/best.err" | tail -n 20 >&2
            log "$b_name failed"
            return 1
        fi
        w=$(field wall_s "$tmp/best.err") c=$(field cpu_s "$tmp/best.err") r=$(field maxrss_kb "$tmp/best.err")
        log "$b_name run $j/$runs: ${w}s, CPU ${c}s, peak RSS $(kb2mib "$r") MiB"
        b_wall=$(awk -v a="$b_wall" -v b="$w" 'BEGIN { print (a == "" || b + 0 < a + 0) ? b : a }')
        b_cpu=$(awk -v a="$b_cpu" -v b="$c" 'BEGIN { print (a == "" || b + 0 < a + 0) ? b : a }')
        b_rss=$(awk -v a="$b_rss" -v b="$r" 'BEGIN { print (a == "" || b + 0 > a + 0) ? b : a }')
        j=$((j + 1))
    done
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.1fx", a / b; else print "n/a" }'; }

one_wall='' py_wall='' py_note=''
if best "vramreport SNAP -o report.html" "$vr" "$snap" -o "$tmp/report.html" --quiet; then
    one_wall=$b_wall one_cpu=$b_cpu one_rss=$b_rss
else
    status=1
fi
vr_peak=$("$vr" report --db "$tmp/snap.db" --format json -o - 2>"$tmp/report.err" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["devices"][0]["peak_allocated_bytes"])' 2>>"$tmp/report.err")
[ -n "$vr_peak" ] || { cat "$tmp/report.err" >&2; log "no peak_allocated_bytes in the JSON report"; status=1; }
if [ "$baseline" = 0 ]; then
    py_note="skipped (--no-baseline)"
elif best "Python baseline" python3 "$benchdir/baseline.py" snapshot "$snap"; then
    py_wall=$b_wall py_cpu=$b_cpu py_rss=$b_rss
    py_peak=$(sed -n 's/^device=0 peak_allocated=//p' "$b_out")
    if [ "$py_peak" = "$vr_peak" ]; then
        py_note="its peak, $py_peak bytes allocated, is vramreport's"
    else
        py_note="MISMATCH: its peak is ${py_peak:-none}, vramreport's ${vr_peak:-none}"
        status=1
    fi
    log "Python baseline: $py_note"
else
    py_note="failed"
    status=1
fi

ncpu=$(nproc 2>/dev/null || echo '?')
cpu=$(sed -n 's/^model name[[:space:]]*:[[:space:]]*//p' /proc/cpuinfo 2>/dev/null | head -n 1)
echo "### ${size_mb} MiB allocator snapshot (seed $seed)"
echo
echo "- Machine: ${cpu:-$(uname -m)}, $ncpu CPUs; $(uname -sr)"
echo "- Date: $(date -u '+%Y-%m-%d %H:%M UTC'); compiler: $($CC --version 2>/dev/null | head -n 1)"
echo "- Snapshot: $bytes bytes, $(gt entries) trace entries ($(gt alloc) alloc, $(gt free_completed) free_completed, $(gt segment_alloc) segment_alloc, $(gt oom) oom), $(gt segments) segments, $(gt blocks) blocks, $(gt frames) frames, $(gt stacks) stacks; generated in ${gen_wall}s"
echo
echo "| Step | Runs | Best wall (s) | MiB/s (pickle) | CPU (s) | MiB/s of CPU | Peak RSS (MiB) |"
echo "|---|---:|---:|---:|---:|---:|---:|"
echo "| \`vramreport import SNAP --db X.db\` (the whole command) | $runs | $best | $(rate "$bytes" "$best") | $best_cpu | $(rate "$bytes" "$best_cpu") | $(kb2mib "$rss") |"
echo "| of which the import stage (decode, frames and stacks, rows) | | $best_stage | $(rate "$bytes" "$best_stage") | $best_stage_cpu | $(rate "$bytes" "$best_stage_cpu") | |"
echo "| of which the import's writer thread (SQLite's inserts, beside the decoding) | | | | ${best_writer:-n/a} | | |"
echo "| of which the analysis | | $best_analyze | | $best_analyze_cpu | | |"
if [ -n "$one_wall" ]; then
    echo "| \`vramreport SNAP -o report.html\` (end to end) | $runs | $one_wall | $(rate "$bytes" "$one_wall") | $one_cpu | $(rate "$bytes" "$one_cpu") | $(kb2mib "$one_rss") |"
fi
if [ -n "$py_wall" ]; then
    echo "| Python baseline (\`pickle.load\`, alloc/free replay) | $runs | $py_wall | $(rate "$bytes" "$py_wall") | $py_cpu | $(rate "$bytes" "$py_cpu") | $(kb2mib "$py_rss") |"
    [ -n "$one_wall" ] &&
        echo "| ratio, Python / vramreport end to end (above 1: vramreport ahead) | | $(ratio "$py_wall" "$one_wall") | | $(ratio "$py_cpu" "$one_cpu") | | $(ratio "$py_rss" "$one_rss") |"
else
    echo "| Python baseline | | $py_note | | | | |"
fi
echo
echo "Correctness: $check_msg; Python baseline: $py_note."
echo
echo "Best of $runs runs by wall time; MiB/s is the pickle's size over the time; 1 MiB = 2^20 bytes. CPU is user + system time of every thread (on a shared machine wall time stretches, CPU time much less); the import stage runs on two threads, so its CPU time may exceed its wall time. The end-to-end run and the Python baseline are timed in the same run on the same snapshot (best of $runs, wall and CPU each)."
exit $status
