#!/usr/bin/env bash
# tests/jobs.sh: --jobs N imports several files at once and changes
# nothing a user can see (src/import/staging.h). For each set of inputs
# (real traces of several kinds, the whole real-data folder, four ranks
# with a repeat and a gzip copy, two traces of one rank, an import into a
# database that holds a source, a run of a trace, a snapshot and
# nvidia-smi of one GPU, a broken and a truncated trace among good ones)
# --jobs 3 and --jobs 1 give the same exit status, the same stderr, the
# same report bytes and the same database, every row of every table (the
# import's wall-clock time aside); the workers did read the traces
# (VRAMREPORT_TIMING says how many they staged), so the comparison is of
# two different paths. Inputs that all fail leave no --db behind, either
# way. --jobs takes 1 to 256.
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
cd "$TMP"
need python3 || true
need sqlite3 || true
need gzip || true
R=$VR_SRCDIR/tests/data/realdata

# every row of every table, in id order, the import's time masked
dump() {
    sqlite3 "$1" .dump | sed -E "s/'[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z'/'TIME'/g"
}

# same NAME STAGED ARGS...: the run with --jobs 1 and with --jobs 3 alike;
# the --jobs 3 run staged STAGED files on its workers.
same() {
    name=$1
    want_staged=$2
    shift 2
    for j in 1 3; do
        rm -f "$name-$j.db"
        vr_run "$name-$j" "$@" --jobs "$j" --db "$name-$j.db" -o "$name-$j.json"
        echo "$rc" >"$name-$j.rc"
        [ -f "$name-$j.db" ] && dump "$name-$j.db" >"$name-$j.sql"
        [ -f "$name-$j.json" ] || : >"$name-$j.json"
    done
    for what in rc err json; do
        cmp -s "$name-1.$what" "$name-3.$what" && pass "$name: the same $what with --jobs 3" ||
            fail "$name: the same $what with --jobs 3" "$(diff "$name-1.$what" "$name-3.$what" | head -5)"
    done
    if [ -f "$name-1.sql" ]; then
        [ -s "$name-1.sql" ] && cmp -s "$name-1.sql" "$name-3.sql" &&
            pass "$name: every table's rows the same with --jobs 3" ||
            fail "$name: every table's rows the same with --jobs 3" \
                "$(diff "$name-1.sql" "$name-3.sql" | head -5 | cut -c1-200)"
    fi
    VRAMREPORT_TIMING=1 "$VRAMREPORT" "$@" --jobs 3 -o "$name-t.json" 2>"$name-t.err" || true
    got=$(sed -n 's/.*import: \([0-9]*\) file(s) staged.*/\1/p' "$name-t.err")
    [ "${got:-0}" = "$want_staged" ] && pass "$name: $want_staged file(s) read on the workers" ||
        fail "$name: $want_staged file(s) read on the workers" "staged: ${got:-none}"
}

# --- real traces: Kineto of 2021, 2022 and 2024, H100 and MI300X, and a
# memory timeline export (not staged: read in its turn)
same kineto 6 "$R/kineto"
# --- the whole real-data folder: snapshots, nvidia-smi, memory_summary
# and a notes file (skipped) among the traces
same realdata 6 "$R"

# --- four ranks; rank 0 twice (already imported), rank 1 again as gzip
# (the same content found after reading)
GEN=$VR_BUILDDIR/tests/bench/gen_trace
[ -x "$GEN" ] || fail "gen_trace is built" "$GEN is missing: make tests/bench/gen_trace"
for r in 0 1 2 3; do
    "$GEN" --seed $((r + 1)) --size-mb 2 2>/dev/null |
        sed "s/\"rank\": 0, \"world_size\": 2/\"rank\": $r, \"world_size\": 4/" >"rank$r.json"
done
mkdir ranks && cp rank?.json ranks/
same ranks 4 ranks
cp rank0.json again0.json
gzip -c rank1.json >again1.json.gz
same repeats 6 rank0.json rank1.json rank2.json again0.json again1.json.gz rank3.json
grep -q "again0.json: already imported (same content as source 1)" repeats-3.err &&
    pass "repeats: a copy of rank 0 is already imported" ||
    fail "repeats: a copy of rank 0 is already imported" "$(cat repeats-3.err)"

# --- two traces of rank 2 (one device, described by both), and a
# database that holds a source already: ids go on from it
"$GEN" --seed 9 --size-mb 1 2>/dev/null |
    sed "s/\"rank\": 0, \"world_size\": 2/\"rank\": 2, \"world_size\": 4/" >rank2b.json
same same-rank 3 rank2.json rank3.json rank2b.json
for j in 1 3; do
    rm -f kept-$j.db
    vr_run "kept-first-$j" import rank0.json --db kept-$j.db -q --jobs 1
    vr_run "kept-$j" import rank1.json rank2b.json rank2.json --db kept-$j.db --jobs $j
    echo "$rc" >"kept-$j.rc"
    dump kept-$j.db >kept-$j.sql
done
cmp -s kept-1.sql kept-3.sql && cmp -s kept-1.err kept-3.err && cmp -s kept-1.rc kept-3.rc &&
    pass "kept: into a database with a source, the same rows with --jobs 3" ||
    fail "kept: into a database with a source, the same rows with --jobs 3" \
        "$(diff kept-1.sql kept-3.sql | head -5 | cut -c1-200)"

# --- one GPU's trace, snapshot and nvidia-smi, and another process's
# trace and snapshot: devices joined as one at a time joins them
"$PYTHON" "$VR_SRCDIR/tests/py/snapshot-device/gen.py" || fail "snapshot-device/gen.py writes the files"
mkdir run && cp trace-a.json snap-a.pickle trace-b.json snap-b.pickle run/ &&
    cp "$R/nvsmi/exporter-capture-h100-80gb.txt" run/
same identity 2 run
n=$(sqlite3 identity-3.db "SELECT count(*) FROM device_join")
[ "$n" = 2 ] && pass "identity: both snapshots joined their trace's device" ||
    fail "identity: both snapshots joined their trace's device" "device_join rows: $n"

# --- a broken trace and a truncated one among good ones
printf '{"schemaVersion": 1, "traceEvents": 5}' >broken.json
head -c 300000 rank2.json >cut.json
same broken 3 rank0.json broken.json cut.json rank3.json
[ "$(cat broken-3.rc)" = 3 ] && grep -q '^vramreport: broken.json: no "traceEvents" list' broken-3.err &&
    pass "broken: the broken trace fails the run (exit 3), said once" ||
    fail "broken: the broken trace fails the run (exit 3), said once" "exit $(cat broken-3.rc): $(cat broken-3.err)"
grep -q "^vramreport: warning: cut.json: truncated at byte 300000" broken-3.err &&
    pass "broken: the truncated trace's warning" ||
    fail "broken: the truncated trace's warning" "$(cat broken-3.err)"

# --- nothing usable: no database left, the same message
cp broken.json broken2.json
for j in 1 3; do
    rm -f none-$j.db
    vr_run "none-$j" import broken.json broken2.json --db "none-$j.db" --jobs $j
    echo "$rc" >"none-$j.rc"
done
[ ! -e none-3.db ] && [ ! -e none-1.db ] && pass "none: no database left with --jobs 3" ||
    fail "none: no database left with --jobs 3" "$(ls none-*.db 2>&1)"
cmp -s none-1.err none-3.err && cmp -s none-1.rc none-3.rc && [ "$(cat none-3.rc)" != 0 ] &&
    pass "none: the same error and exit status ($(cat none-3.rc))" ||
    fail "none: the same error and exit status" "$(cat none-1.rc) $(cat none-3.rc): $(diff none-1.err none-3.err)"

# --- standard input among files: read in its turn
cat rank1.json | "$VRAMREPORT" rank0.json - rank2.json --jobs 3 -o stdin-3.json 2>stdin-3.err &&
    cat rank1.json | "$VRAMREPORT" rank0.json - rank2.json --jobs 1 -o stdin-1.json 2>stdin-1.err &&
    cmp -s stdin-1.json stdin-3.json && pass "stdin: the same report with --jobs 3" ||
    fail "stdin: the same report with --jobs 3" "$(cat stdin-3.err)"

# --- killed while staging (Ctrl-C, Slurm's time limit): TERM removes the
# staging folder from $TMPDIR, and no report is left
for r in 0 1 2 3; do "$GEN" --seed $((r + 5)) --size-mb 25 >"big$r.json" 2>/dev/null; done
mkdir -p killtmp
TMPDIR=$PWD/killtmp "$VRAMREPORT" --jobs 2 big0.json big1.json big2.json big3.json -o killed.html \
    2>killed.err &
pid=$!
seen=
for _ in $(seq 200); do
    if ls killtmp | grep -q '^vramreport-jobs-'; then seen=1; break; fi
    sleep 0.05
done
kill -TERM "$pid" 2>/dev/null || true
krc=0
wait "$pid" || krc=$?
left=$(ls -A killtmp)
[ -n "$seen" ] && [ "$krc" = 143 ] && [ -z "$left" ] && [ ! -e killed.html ] &&
    pass "killed by TERM while staging: the staging folder is removed, no report" ||
    fail "killed by TERM while staging: the staging folder is removed, no report" \
        "seen=${seen:-no} exit $krc, left: $left $(ls killed.html 2>&1)"

# --- the option's values
for bad in 0 257 x 2x; do
    vr_run "bad-$bad" rank0.json --jobs "$bad" -o bad.md
    [ "$rc" = 2 ] && grep -q "^vramreport: --jobs '$bad': give a whole number from 1 to 256" "bad-$bad.err" &&
        pass "--jobs $bad: a usage error" || fail "--jobs $bad: a usage error" "exit $rc: $(cat "bad-$bad.err")"
done
finish
