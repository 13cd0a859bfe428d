#!/bin/sh
# tests/bench/run.sh - end-to-end benchmark of vramreport on a generated Kineto trace.
#
# usage: tests/bench/run.sh [--size-mb N] [--keep] [--format 2024|2022|2021] [--seed N] [--runs N]
#                           [--no-baseline]
#
# Run from the build directory.  Uses ./vramreport (or $VRAMREPORT) and the C
# compiler $CC (default cc) to build gen_trace.c and rusage.c from
# the source tree (the parent of this script's folder).  A trace of at least
# N MiB (default 1100) of uncompressed JSON is generated into a temporary
# directory, then:
#   (a) vramreport import TRACE --db X.db --quiet       (--runs times, default 3)
#   (b) vramreport TRACE -o report.html --quiet         (--runs times)
#   (c) vramreport import TRACE.zst ... once, if zstd is installed (optional)
#   (d) the Python baseline, python3 tests/bench/baseline.py trace TRACE
#       (--runs times; json.load and the highest "Total Allocated" a device)
# For each, the best (fastest) wall time and CPU time, the throughput in
# MiB/s of uncompressed JSON and the highest peak RSS are reported, and the
# ratios of (b), vramreport end to end, to (d).  The report's JSON
# (vramreport report --db X.db --format json -o -) must give the generator's
# ground-truth peak_allocated_bytes for cuda:0, and the baseline the same
# figure, else the script fails.  --no-baseline skips (d) (a 1 GiB trace's
# json.load needs several GiB of memory).
# A Markdown table for docs/performance.md is printed on stdout; progress
# goes to stderr.  --keep leaves the temporary directory in place.
# shellcheck disable=SC2317  # functions are called indirectly (trap, measure)
set -u

size_mb=1100
keep=0
format=2024
seed=1
runs=3
baseline=1

die() {
    echo "bench: $*" >&2
    exit 1
}

while [ $# -gt 0 ]; do
    case $1 in
    --size-mb) [ $# -ge 2 ] || die "--size-mb needs a value"; size_mb=$2; shift 2 ;;
    --size-mb=*) size_mb=${1#*=}; shift ;;
    --keep) keep=1; shift ;;
    --format) [ $# -ge 2 ] || die "--format needs a value"; format=$2; shift 2 ;;
    --format=*) format=${1#*=}; shift ;;
    --seed) [ $# -ge 2 ] || die "--seed needs a value"; seed=$2; shift 2 ;;
    --seed=*) seed=${1#*=}; shift ;;
    --runs) [ $# -ge 2 ] || die "--runs needs a value"; runs=$2; shift 2 ;;
    --runs=*) runs=${1#*=}; shift ;;
    --no-baseline) baseline=0; shift ;;
    -h|--help)
        sed -n '2,/^set -u/p' "$0" | sed -e '/^set -u/d' -e '/shellcheck/d' -e 's/^# \{0,1\}//' >&2
        exit 0 ;;
    *) die "unknown argument: $1 (try --help)" ;;
    esac
done

case $size_mb in ''|*[!0-9.]*) die "--size-mb: not a number: $size_mb" ;; esac
case $runs in ''|*[!0-9]*|0) die "--runs: not a positive integer: $runs" ;; esac
case $format in 2024|2022|2021) ;; *) die "--format must be 2024, 2022 or 2021" ;; esac

benchdir=$(cd "$(dirname "$0")" && pwd) || die "cannot locate the source tree"
[ -f "$benchdir/gen_trace.c" ] || die "missing $benchdir/gen_trace.c"
CC=${CC:-cc}

vr=${VRAMREPORT:-./vramreport}
case $vr in
/*) ;;
*/*) vr=$(pwd)/$vr ;;
*) vr=$(command -v "$vr" 2>/dev/null || echo "$vr") ;;
esac
[ -x "$vr" ] || die "vramreport not found or not executable: $vr (set VRAMREPORT)"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/vramreport-bench.XXXXXX") || die "mktemp failed"
cleanup() {
    if [ "$keep" = 1 ]; then
        echo "bench: kept $tmp" >&2
    else
        rm -rf "$tmp"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log() { echo "bench: $*" >&2; }

# ---- build the helpers ------------------------------------------------------
log "building gen_trace and rusage with $CC"
$CC -std=c11 -O2 -o "$tmp/gen_trace" "$benchdir/gen_trace.c" || die "cannot build gen_trace"
$CC -std=c11 -O2 -o "$tmp/rusage" "$benchdir/rusage.c" || die "cannot build rusage"
RUSAGE=$tmp/rusage

# ---- helpers ----------------------------------------------------------------
# field NAME FILE: value of NAME=... from the last "wall_s=" line of FILE
field() {
    grep '^wall_s=' "$2" | tail -n 1 | tr ' ' '\n' | sed -n "s/^$1=//p"
}
fmin() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b + 0 < a + 0) print b; else print a }'; }
imax() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b + 0 > a + 0) print b; else print a }'; }
mib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }
rate() { awk -v b="$1" -v s="$2" 'BEGIN { if (s + 0 > 0) printf "%.1f", b / 1048576 / s; else print "n/a" }'; }
kb2mib() { awk -v k="$1" 'BEGIN { printf "%.0f", k / 1024 }'; }

# measure NAME PREP CMD...: run CMD $runs times (after PREP), sets m_wall
# (best wall seconds), m_cpu (best CPU seconds, user + system), m_rss (max
# peak RSS in KiB); returns non-zero on failure
measure() {
    m_name=$1
    m_prep=$2
    shift 2
    m_wall=
    m_cpu=
    m_rss=
    i=1
    while [ "$i" -le "$m_runs" ]; do
        $m_prep
        (cd "$tmp" && "$RUSAGE" "$@") >"$tmp/cmd.out" 2>"$tmp/cmd.err"
        rc=$?
        if [ "$rc" -ne 0 ]; then
            log "$m_name failed (exit $rc): $*"
            grep -v '^wall_s=' "$tmp/cmd.err" | tail -n 20 >&2
            return 1
        fi
        w=$(field wall_s "$tmp/cmd.err")
        r=$(field maxrss_kb "$tmp/cmd.err")
        c=$(field cpu_s "$tmp/cmd.err")
        log "$m_name run $i/$m_runs: ${w}s, CPU ${c}s, peak RSS $(kb2mib "$r") MiB"
        m_wall=$(fmin "$m_wall" "$w")
        m_cpu=$(fmin "$m_cpu" "$c")
        m_rss=$(imax "$m_rss" "$r")
        i=$((i + 1))
    done
    return 0
}
prep_import() { rm -f "$tmp/bench.db" "$tmp/bench.db-wal" "$tmp/bench.db-shm" "$tmp/bench.db-journal"; }
prep_oneshot() { rm -f "$tmp/report.html"; }
prep_none() { :; }
prep_zst() { rm -f "$tmp/zst.db" "$tmp/zst.db-wal" "$tmp/zst.db-shm" "$tmp/zst.db-journal"; }

# ---- generate the trace -----------------------------------------------------
trace=$tmp/trace.json
log "generating a ${size_mb} MiB trace (format $format, seed $seed)"
"$RUSAGE" "$tmp/gen_trace" --seed "$seed" --size-mb "$size_mb" --format "$format" >"$trace" 2>"$tmp/gen.err" ||
    { cat "$tmp/gen.err" >&2; die "gen_trace failed"; }
gen_line=$(grep '^gen:' "$tmp/gen.err" | tail -n 1)
[ -n "$gen_line" ] || die "gen_trace printed no ground truth"
log "$gen_line"
gt() { echo "$gen_line" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
trace_bytes=$(gt bytes)
gt_events=$(gt events)
gt_mem=$(gt mem_events)
gt_peak=$(gt peak_allocated)
gen_wall=$(field wall_s "$tmp/gen.err")
gen_rss=$(field maxrss_kb "$tmp/gen.err")
actual=$(wc -c <"$trace" | tr -d ' ')
[ "$actual" = "$trace_bytes" ] || die "trace size $actual differs from generator's $trace_bytes"

status=0

# ---- (a) import ---------------------------------------------------------------
m_runs=$runs
if measure "import" prep_import "$vr" import "$trace" --db "$tmp/bench.db" --quiet; then
    imp_wall=$m_wall imp_cpu=$m_cpu imp_rss=$m_rss
else
    imp_wall=''; imp_cpu=''; imp_rss=''; status=1
fi

# ---- correctness: peak_allocated_bytes for cuda:0 ---------------------------
check_peak=
check_msg="not checked"
if [ -n "$imp_wall" ]; then
    if "$vr" report --db "$tmp/bench.db" --format json -o - >"$tmp/report.json" 2>"$tmp/report.err"; then
        if command -v python3 >/dev/null 2>&1; then
            check_peak=$(python3 - "$tmp/report.json" "$gt_peak" <<'EOF'
import json, sys

doc = json.load(open(sys.argv[1]))
want = int(sys.argv[2])
CUDA0 = {"cuda:0", "cuda0", "gpu0", "gpu:0", "gpu 0", "cuda 0"}

def is_cuda0(o):
    for k in ("device", "device_name", "device_label", "name", "label", "id", "key"):
        v = o.get(k)
        if isinstance(v, str) and v.strip().lower() in CUDA0:
            return True
    dt = o.get("device_type", o.get("type"))
    di = o.get("device_id", o.get("device_index", o.get("index")))
    if dt in (1, "cuda", "CUDA", "gpu", "GPU") and di == 0:
        return True
    return False

found = []  # (is_cuda0, value)

def walk(o, ctx):
    if isinstance(o, dict):
        here = ctx or is_cuda0(o)
        if "peak_allocated_bytes" in o and isinstance(o["peak_allocated_bytes"], (int, float)):
            found.append((here, int(o["peak_allocated_bytes"])))
        for k, v in o.items():
            walk(v, here or (isinstance(k, str) and k.strip().lower() in CUDA0))
    elif isinstance(o, list):
        for v in o:
            walk(v, ctx)

walk(doc, False)
tagged = [v for c, v in found if c]
if tagged:
    got = tagged[0]
elif len(found) == 1:
    got = found[0][1]
elif any(v == want for _, v in found):
    got = want
elif found:
    got = max(v for _, v in found)
else:
    got = ""
print(got)
EOF
)
        else
            vals=$(grep -o '"peak_allocated_bytes"[[:space:]]*:[[:space:]]*[0-9]*' "$tmp/report.json" | sed 's/.*:[[:space:]]*//')
            check_peak=$(echo "$vals" | head -n 1)
            for v in $vals; do [ "$v" = "$gt_peak" ] && check_peak=$v; done
        fi
        if [ -z "$check_peak" ]; then
            check_msg="FAILED: no peak_allocated_bytes in the JSON report"
            status=1
        elif [ "$check_peak" = "$gt_peak" ]; then
            check_msg="OK"
        else
            check_msg="MISMATCH"
            status=1
        fi
    else
        grep -v '^$' "$tmp/report.err" | tail -n 20 >&2
        check_msg="FAILED: vramreport report exited non-zero"
        status=1
    fi
    log "peak_allocated_bytes (cuda:0): tool=${check_peak:-?} generator=$gt_peak: $check_msg"
fi

# ---- (b) one-shot report ------------------------------------------------------
if measure "one-shot" prep_oneshot "$vr" "$trace" -o "$tmp/report.html" --quiet; then
    one_wall=$m_wall one_cpu=$m_cpu one_rss=$m_rss
    [ -s "$tmp/report.html" ] || { log "one-shot wrote no report.html"; status=1; }
else
    one_wall=''; one_cpu=''; one_rss=''; status=1
fi

# ---- (d) the Python baseline, on the same trace -------------------------------
# Its figure must be vramreport's (and the generator's): equal work's first step.
py_wall=''; py_cpu=''; py_rss=''; py_peak=''; py_note=''
if [ "$baseline" = 0 ]; then
    py_note="skipped (--no-baseline)"
elif ! command -v python3 >/dev/null 2>&1; then
    py_note="python3 not installed"
else
    m_runs=$runs
    if measure "Python baseline" prep_none python3 "$benchdir/baseline.py" trace "$trace"; then
        py_wall=$m_wall py_cpu=$m_cpu py_rss=$m_rss
        py_peak=$(sed -n 's/^device=0 peak_allocated=//p' "$tmp/cmd.out")
        if [ "$py_peak" != "$gt_peak" ] || [ "$py_peak" != "$check_peak" ]; then
            log "Python baseline's peak for device 0 (${py_peak:-none}) is not vramreport's (${check_peak:-?}) and the generator's ($gt_peak)"
            py_note="MISMATCH"
            status=1
        fi
    else
        py_note="failed"
        status=1
    fi
fi

# ---- (c) zstd-compressed input, once (optional) -----------------------------
zst_wall=''; zst_cpu=''; zst_rss=''; zst_bytes=''; zst_note=''
if command -v zstd >/dev/null 2>&1; then
    log "compressing the trace with zstd"
    if zstd -q -T0 -3 -f "$trace" -o "$trace.zst" 2>"$tmp/zstd.err"; then
        zst_bytes=$(wc -c <"$trace.zst" | tr -d ' ')
        m_runs=1
        if measure "import (zstd)" prep_zst "$vr" import "$trace.zst" --db "$tmp/zst.db" --quiet; then
            zst_wall=$m_wall zst_cpu=$m_cpu zst_rss=$m_rss
        else
            zst_note="failed (optional)"
        fi
        rm -f "$trace.zst"
    else
        zst_note="zstd failed"
    fi
else
    zst_note="zstd not installed"
fi

# ---- machine -----------------------------------------------------------------
ncpu=$(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null || echo '?')
cpu=$(sed -n 's/^model name[[:space:]]*:[[:space:]]*//p' /proc/cpuinfo 2>/dev/null | head -n 1)
[ -n "$cpu" ] || cpu=$(uname -m)
memkb=$(sed -n 's/^MemTotal:[[:space:]]*\([0-9]*\).*/\1/p' /proc/meminfo 2>/dev/null)
if [ -n "$memkb" ]; then mem="$(awk -v k="$memkb" 'BEGIN { printf "%.0f", k / 1048576 }') GiB RAM"; else mem="? RAM"; fi
os=$(uname -sr)
today=$(date -u '+%Y-%m-%d %H:%M UTC')
ccver=$($CC --version 2>/dev/null | head -n 1)
vrver=$("$vr" --version 2>/dev/null | head -n 1)
[ -n "$vrver" ] || vrver="(no --version)"

cell() { if [ -n "$1" ]; then echo "$1"; else echo "failed"; fi; }
row() { # label input runs wall rss note cpu
    if [ -n "$4" ]; then
        echo "| $1 | $2 | $3 | $4 | ${7:--} | $(rate "$trace_bytes" "$4") | $(kb2mib "$5") |"
    else
        echo "| $1 | $2 | $3 | ${6:-failed} | | | |"
    fi
}
# ratio A B: A / B to one decimal, "2.0x" ("n/a" without both)
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.1fx", a / b; else print "n/a" }'; }

size_cell="$(mib "$trace_bytes") MiB JSON"
events_m=$(awk -v e="$gt_events" 'BEGIN { printf "%.2f", e / 1e6 }')
mem_m=$(awk -v e="$gt_mem" 'BEGIN { printf "%.2f", e / 1e6 }')

echo "### ${size_mb} MiB Kineto trace (format $format, seed $seed)"
echo
echo "- Machine: $cpu, $ncpu CPUs, $mem; $os"
echo "- Date: $today"
echo "- vramreport: $vrver; compiler: ${ccver:-$CC}"
echo "- Trace: $trace_bytes bytes, $gt_events events ($events_m M), $gt_mem memory events ($mem_m M)"
echo
echo "| Step | Input | Runs | Best wall (s) | Best CPU (s) | MiB/s (uncompressed JSON) | Peak RSS (MiB) |"
echo "|---|---|---:|---:|---:|---:|---:|"
row "generate (\`gen_trace\`)" "$size_cell" 1 "$gen_wall" "$gen_rss"
row "\`vramreport import TRACE --db X.db\`" "$size_cell" "$runs" "$imp_wall" "$imp_rss" "" "$imp_cpu"
row "\`vramreport TRACE -o report.html\`" "$size_cell" "$runs" "$one_wall" "$one_rss" "" "$one_cpu"
if [ -n "$zst_bytes" ]; then
    row "\`vramreport import TRACE.zst --db X.db\`" "$(mib "$zst_bytes") MiB zstd -3" 1 "$zst_wall" "$zst_rss" "$zst_note" "$zst_cpu"
else
    echo "| \`vramreport import TRACE.zst --db X.db\` | - | - | $zst_note | | | |"
fi
if [ -n "$py_wall" ]; then
    row "Python baseline (\`json.load\`, max \"Total Allocated\")" "$size_cell" "$runs" "$py_wall" "$py_rss" "" "$py_cpu"
    echo "| ratio, Python / vramreport end to end (above 1: vramreport ahead) | | | $(ratio "$py_wall" "$one_wall") | $(ratio "$py_cpu" "$one_cpu") | | $(ratio "$py_rss" "$one_rss") |"
else
    echo "| Python baseline | $size_cell | - | $py_note | | | |"
fi
echo
py_check=
[ -n "$py_wall" ] && py_check="; the Python baseline's = ${py_peak:-none}${py_note:+: $py_note}"
echo "Correctness: peak_allocated_bytes for cuda:0 = $(cell "$check_peak"), generator ground truth = $gt_peak: $check_msg$py_check"
echo
echo "Best of $runs runs (wall and CPU each); MiB/s is the uncompressed JSON size divided by the best wall time; CPU is user + system of every thread; the ratios set the one-shot report (vramreport end to end: import, analysis, HTML) against the Python baseline, measured in this run on this trace; 1 MiB = 2^20 bytes."

exit $status
