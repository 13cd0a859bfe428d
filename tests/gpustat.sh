#!/usr/bin/env bash
# tests/gpustat.sh: gpustat's text snapshots. Every file of
# tests/data/gpustat/ (real outputs from gpustat's README, tests and
# issues; synthetic --watch, -cpu, --force-color, Windows and cut logs:
# see its PROVENANCE) is imported; the GPUs, their readings (memory used
# and total, utilisation, time), the processes and the truncation are
# checked in the database against oracle.py, an independent reading of
# the same text (regular expressions). Then: a gpustat log beside a
# profiler trace of the same H100 is that trace's device in devices[]
# (name, capacity_bytes, smi_samples, smi_max_used_bytes,
# smi_max_util_pct); colours change nothing; text that is not gpustat's
# is not claimed; garbage never crashes.
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
PY=$VR_SRCDIR/tests/py/gpustat

DATA=$VR_SRCDIR/tests/data/gpustat
cd "$TMP"
need python3 || true
need sqlite3 || true

# What the database holds, in the oracle's shape.

#-- every file against the oracle ---------------------------------------------------------

for f in "$DATA"/*.txt; do
    base=${f##*/}
    rm -f "$base.db"
    vr_run "imp-$base" import "$f" --db "$base.db" -q
    if [ "$rc" != 0 ]; then
        fail "$base: imported" "$(cat "imp-$base.err")"
        continue
    fi
    want=$("$PYTHON" "$PY/oracle.py" "$f")
    got=$("$PYTHON" "$PY/fromdb.py" "$base.db")
    [ "$got" = "$want" ] && pass "$base: GPUs, readings, times, processes as the oracle reads them" ||
        fail "$base: as the oracle reads it" "got  $got" "want $want"
    fmt=$(sqlite3 "$base.db" "SELECT group_concat(format) FROM source")
    [ "$fmt" = gpustat ] && pass "$base: read as gpustat" || fail "$base: read as gpustat" "$fmt"
    # The report's processes of each GPU, as the oracle lists them: a
    # process without a pid is one per name ("matrixMul(112M)
    # python(11696M)" is two, not one at the larger's memory).
    vr_run "rep-$base" report --db "$base.db" --format json -o "$base.json" -q
    got=$("$PYTHON" -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(json.dumps({str(g["idx"]): {"%s|%s" % (p["pid"], p["name"]): p["used_bytes"] for p in g["smi_processes"]}
                  for g in d["gpus"]}, sort_keys=True))' "$base.json")
    want=$("$PYTHON" -c '
import json, sys
d = json.loads(sys.argv[1])
print(json.dumps({i: {k: (None if v < 0 else v) for k, v in g["procs"].items()} for i, g in d["gpus"].items()}, sort_keys=True))' "$want")
    [ "$got" = "$want" ] && pass "$base: the report lists each GPU's processes as the oracle does" ||
        fail "$base: the report's processes" "got  $got" "want $want"
done

# The cut file: a one-line warning naming the file and the byte; the
# snapshots before the cut are in.
grep -q "truncated.txt: truncated at byte [0-9]* (in a gpustat GPU line)" imp-truncated.txt.err &&
    pass "truncated.txt: warned, naming the byte" || fail "truncated.txt: warned" "$(cat imp-truncated.txt.err)"
got=$(sqlite3 truncated.txt.db "SELECT count(*) FROM gpu_sample")
want=$(grep -c '^\[' "$DATA/truncated.txt")
[ "$got" = "$((want - 1))" ] && pass "truncated.txt: the $got whole GPU lines kept" ||
    fail "truncated.txt: whole GPU lines" "got $got, want $((want - 1))"

#-- colours change nothing ----------------------------------------------------------------

"$PYTHON" -c '
import re, sys
t = open(sys.argv[1], encoding="utf-8").read()
open("plain.txt", "w", encoding="utf-8").write(re.sub(r"\x1b(\[[0-?]*[ -/]*[@-~]|[()].|.)", "", t))
' "$DATA/color-watch-h100.txt"
grep -q $'\x1b' "$DATA/color-watch-h100.txt" && ! grep -q $'\x1b' plain.txt &&
    pass "color-watch-h100.txt has escapes, plain.txt none" || fail "colour fixture"
vr_run plain import plain.txt --db plain.db -q
q="SELECT group_concat(memory_used_bytes || '/' || utilization_gpu_pct || '@' || ts_ns) FROM gpu_sample"
[ "$(sqlite3 plain.db "$q")" = "$(sqlite3 color-watch-h100.txt.db "$q")" ] &&
    [ -n "$(sqlite3 plain.db "$q")" ] &&
    pass "colours stripped: the coloured log reads as its plain copy" ||
    fail "colours stripped" "$(sqlite3 plain.db "$q")" "$(sqlite3 color-watch-h100.txt.db "$q")"

#-- devices[]: a gpustat log beside a trace of the same GPU -------------------------------

trace=$VR_SRCDIR/tests/data/realdata/kineto/tracelens-h100-bert-small.json.gz
vr_run mimp import "$trace" "$DATA/color-watch-h100.txt" --db match.db -q
# The two files were not recorded together: readings far from the job's
# time are not the job's (docs/diagnosis.md), so the gpustat log's clock is
# moved to the trace's start, as if watched beside it.
sqlite3 match.db "UPDATE source SET clock_offset_ns = (SELECT start_ns + clock_offset_ns FROM source
                                                        WHERE format = 'kineto')
                                                     - (SELECT min(ts_ns) FROM gpu_sample)
                   WHERE format <> 'kineto'; UPDATE analysis_state SET complete = 0"
vr_run mrep report --db match.db --format json -o match.json -q
got=$(json_get match.json '[(x["name"], x["capacity_bytes"], x["smi_samples"], x["smi_max_used_bytes"], x["smi_max_util_pct"], x["smi_match"]) for x in d["devices"]]')
want=$("$PYTHON" "$PY/match_want.py" "$DATA/color-watch-h100.txt" "$trace")
[ "$got" = "$want" ] && pass "devices[]: the H100's gpustat readings on the trace's cuda:0 $got" ||
    fail "devices[]: gpustat matched to the trace's device" "got  $got" "want $want"
got=$(json_get match.json '[(x["smi_samples"], x["smi_max_util_pct"], x["device"]) for x in d["gpus"]]')
[ "$got" = "[(4, 99, 'cuda:0')]" ] && pass "gpus[]: smi_max_util_pct and the device" ||
    fail "gpus[]: smi_max_util_pct" "$got"

#-- not gpustat's: not claimed ------------------------------------------------------------

printf '[0] starting epoch 1 | loss 0.5\n[1] step | lr 3e-4\n' >log.txt
printf 'host  Mon Nov 30 12:00:00 2026  535.104.05\nno gpu lines here\n' >header-only.txt
for f in log.txt header-only.txt; do
    vr_run "no-$f" import "$f" --db "no-$f.db" -q
    if [ "$rc" != 0 ] && [ "$(wc -l <"no-$f.err")" = 1 ] && grep -q "not a recognised input" "no-$f.err" &&
        ! crashed "$rc" "no-$f.err"; then
        pass "$f: not claimed by gpustat; one-line error ($(cut -c1-90 "no-$f.err")...)"
    else
        fail "$f: not claimed" "rc=$rc" "$(cat "no-$f.err")"
    fi
done

# A bad GPU line mid-file is skipped and counted; the rest is read.
sed '2s/ MB / M? /' "$DATA/watch-a100-cpu.txt" >bad-mid.txt
vr_run bad import bad-mid.txt --db bad.db -q
got=$(sqlite3 bad.db "SELECT count(*) FROM gpu_sample"):$(sqlite3 bad.db "SELECT count FROM source_tally WHERE kind = 'malformed_line'"):$(sqlite3 bad.db "SELECT truncated FROM source")
want=$(($(grep -c '^\[' bad-mid.txt) - 1)):1:0
[ "$got" = "$want" ] && pass "bad GPU line mid-file: skipped and counted, the rest read ($got)" ||
    fail "bad GPU line mid-file" "got $got, want $want (samples:malformed:truncated)"

#-- garbage never crashes -----------------------------------------------------------------

for f in watch-a100-cpu.txt color-watch-h100.txt test-gpustat-cpu.txt; do
    "$PYTHON" "$PY/junk.py" "$DATA/$f" "junk-$f"
    vr_run "junk-$f" import "junk-$f" --db "junk-$f.db" -q
    ! crashed "$rc" "junk-$f.err" && [ "$(wc -l <"junk-$f.err")" -le 2 ] &&
        pass "junk-$f: no crash (rc $rc)" || fail "junk-$f: crashed or chatty" "$(head -5 "junk-$f.err")"
done

finish
