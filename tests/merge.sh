#!/usr/bin/env bash
# tests/merge.sh: `vramreport merge DB... --db job.db` (docs/scale.md).
#   - 4 generated ranks (tests/gen-scenarios.py's training loop, each rank
#     scaled apart: tests/py/merge/gen_ranks.py), each imported into its
#     own database: the merged job's JSON report gives each rank's device
#     every figure of that rank's own `report --db rankN.db` (peaks and
#     their times, breakdown, steps, live allocations, sites, OOMs,
#     findings; rank 1's OOM error from its job log; the oracle
#     tests/py/merge/compare.py), and the figures of
#     one run over all four files, the rank-imbalance finding and
#     ranks_summary included; the oracle fails on a rank's figure changed;
#   - 4 ranks of tests/bench/gen_trace (13,000 memory events): the same,
#     and the job database holds far fewer memory events than the ranks',
#     the merge's peak resident size under 128 MiB;
#   - the real 2-GPU trace (hta-v100x2-rank1-2022, rank 1) and a rank 0
#     made of it (as tests/ranks.sh): merged, each rank its own report's;
#   - three real allocator snapshots (no rank: each device keyed by its
#     source; their stacks, segments, blocks from before the record and
#     top sites): merged, each device its own report's;
#   - a database that is not vramreport's, of a newer schema, not SQLite,
#     missing, a rank given twice, a trace of no rank given twice, an
#     existing job.db: one line naming the
#     file, exit 1, no job.db left (an existing one unchanged);
#   - a job database is not imported into, nor analysed again.
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
PY=$VR_SRCDIR/tests/py/merge
cd "$TMP"
need python3 || true
need gzip || true

# rank databases of the traces $2... (each a file, or a rank's files
# joined by commas: a.json,a.log), each its own report; one run over all;
# the merge of the databases into $1.db and its report
merge_case() {
    job=$1
    shift
    owns=()
    dbs=()
    every=()
    for t in "$@"; do
        IFS=, read -r -a files <<<"$t"
        every+=("${files[@]}")
        b=${files[0]%.*}
        vr_run "imp-$b" import "${files[@]}" --db "$b.db" -q
        [ "$rc" -eq 0 ] || fail "$b: imported" "$(cat "imp-$b.err")"
        vr_run "own-$b" report --db "$b.db" -o "$b.own.json" -q
        [ "$rc" -eq 0 ] || fail "$b: its own report" "$(cat "own-$b.err")"
        owns+=("$b.own.json")
        dbs+=("$b.db")
    done
    vr_run "all-$job" "${every[@]}" -o "$job.all.json" -q
    [ "$rc" -eq 0 ] || fail "$job: one run over all" "$(cat "all-$job.err")"
    vr_run "merge-$job" merge "${dbs[@]}" --db "$job.db"
    [ "$rc" -eq 0 ] && pass "$job: merge of ${#dbs[@]} databases exits 0" ||
        fail "$job: merge exits 0" "exit $rc: $(cat "merge-$job.err")"
    for fmt in json md html; do
        vr_run "rep-$job-$fmt" report --db "$job.db" -o "$job.$fmt"
        [ "$rc" -eq 0 ] && [ ! -s "rep-$job-$fmt.err" ] && pass "$job: $fmt report of the job, no notice" ||
            fail "$job: $fmt report of the job" "exit $rc: $(cat "rep-$job-$fmt.err")"
    done
    "$PYTHON" "$PY/compare.py" "$job.json" "${owns[@]}" --all "$job.all.json" \
        >"cmp-$job.out" 2>&1 || true
    sed -e 's/^ok /PASS	'"$job"': /' -e 's/^FAIL /FAIL	'"$job"': /' "cmp-$job.out" >"cmp-$job.tap"
    tap_lines "cmp-$job.tap"
}

events() { # memory events of database $1, kept per merged_rank
    "$PYTHON" -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
print(c.execute("SELECT count(*) FROM mem_event").fetchone()[0])' "$1"
}

# --- 4 generated ranks
"$PYTHON" "$VR_SRCDIR/tests/gen-scenarios.py" training base.json truth.json
"$PYTHON" "$PY/gen_ranks.py" base.json . 4
# rank 1's job log has its OOM error ([rank1]: prefixes)
sed 's/^/[rank1]: /' "$VR_SRCDIR/tests/data/logs/oom-01.log" >rank1.log
merge_case job rank0.json rank1.json,rank1.log rank2.json rank3.json
ooms=$(json_get job.json '[(x["rank"], x["out_of_memory_count"]) for x in d["devices"]]')
[ "$ooms" = "[(0, 0), (1, 1), (2, 0), (3, 0)]" ] && pass "job: rank 1 has its OOM error, the others none" ||
    fail "job: rank 1 has its OOM error, the others none" "got $ooms"
n=$(json_get job.json 'len(d["ranks"])')
[ "$n" = 4 ] && pass "job: ranks[] has the 4 ranks" || fail "job: ranks[] has the 4 ranks" "got $n"
grep -q '^## Ranks' job.md && pass "job: the Markdown has its Ranks section" ||
    fail "job: the Markdown has its Ranks section"

# the oracle can fail: rank 2's own peak changed by one byte
"$PYTHON" -c 'import json, sys
d = json.load(open("rank2.own.json"))
d["devices"][0]["peak_allocated_bytes"] += 1
json.dump(d, open("rank2.bad.json", "w"))'
if "$PYTHON" "$PY/compare.py" job.json rank2.bad.json >cmp-bad.out 2>&1; then
    fail "the oracle fails on a rank's peak changed by one byte" "$(cat cmp-bad.out)"
else
    grep -q 'FAIL rank 2 cuda:0: every figure' cmp-bad.out &&
        pass "the oracle fails on a rank's peak changed by one byte" ||
        fail "the oracle fails on a rank's peak changed by one byte" "$(cat cmp-bad.out)"
fi

# --- 4 ranks of gen_trace: far fewer memory events in the job
GEN=$VR_BUILDDIR/tests/bench/gen_trace
if [ -x "$GEN" ]; then
    mkdir big && cd big
    for r in 0 1 2 3; do
        "$GEN" --seed $((r + 1)) --size-mb 3 2>/dev/null |
            sed "s/\"rank\": 0, \"world_size\": 2/\"rank\": $r, \"world_size\": 4/" >"big$r.json"
    done
    merge_case big big0.json big1.json big2.json big3.json
    sum=0
    for r in 0 1 2 3; do sum=$((sum + $(events "big$r.db"))); done
    kept=$(events big.db)
    [ "$sum" -gt 10000 ] && [ $((kept * 2)) -lt "$sum" ] &&
        pass "big: the job holds $kept of the ranks' $sum memory events" ||
        fail "big: the job holds under half the ranks' memory events" "$kept of $sum"
    # its peak resident size (tests/bench/rusage: a Python parent's would
    # be the floor; a sanitizer's quarantine kept small)
    ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=1 \
        "$VR_BUILDDIR/tests/bench/rusage" "$VRAMREPORT" merge big0.db big1.db big2.db big3.db \
        --db rss.db -q >/dev/null 2>rss.err || true
    line=$(grep '^wall_s=' rss.err | tail -n 1)
    kib=$(echo "$line" | tr ' ' '\n' | sed -n 's/^maxrss_kb=//p')
    [ -s rss.db ] && [ "${kib:-0}" -gt 0 ] && [ "$kib" -le $((128 * 1024)) ] &&
        pass "big: the merge's peak resident size is under 128 MiB (${kib} KiB)" ||
        fail "big: the merge's peak resident size is under 128 MiB" "$(cat rss.err)"
    cd ..
else
    fail "gen_trace is built" "$GEN is missing: make tests/bench/gen_trace (make check builds it)"
fi

# --- real data: rank 1 of a 2-GPU job and a rank 0 made of it
gzip -dc "$VR_SRCDIR/tests/data/realdata/kineto/hta-v100x2-rank1-2022.pt.trace.json.gz" >real1.json
"$PYTHON" "$VR_SRCDIR/tests/py/ranks/ranks.py" variant real1.json real0.json 0 0.17
merge_case real real0.json real1.json

# --- real snapshots, of no rank
for s in cs336-magma27-training cs336-silmont-forward-bf16 cs336-silmont-segments; do
    cp "$VR_SRCDIR/tests/data/realdata/snapshot/$s.pickle" .
done
merge_case snaps cs336-magma27-training.pickle cs336-silmont-forward-bf16.pickle \
    cs336-silmont-segments.pickle
sites=$(json_get snaps.json 'sum(len(x["top_sites"]) for x in d["devices"])')
[ "$sites" -gt 0 ] 2>/dev/null && pass "snaps: the job's devices have their top sites ($sites)" ||
    fail "snaps: the job's devices have their top sites" "got $sites"

# --- errors: one line naming the file, exit 1, no job.db
"$PYTHON" -c 'import sqlite3; sqlite3.connect("foreign.db").execute("CREATE TABLE x (a)")'
cp rank2.db newer.db
"$PYTHON" -c 'import sqlite3; sqlite3.connect("newer.db").execute("PRAGMA user_version = 99")'
head -c 3000 base.json >junk.db
cp rank1.db again.db
for bad in foreign.db:"not a vramreport one" newer.db:"newer vramreport (schema 99" \
    junk.db:"not a database" missing.db:"cannot open" again.db:"rank 1 is merged already (from rank1.db)"; do
    f=${bad%%:*} why=${bad#*:}
    vr_run "bad-$f" merge rank0.db rank1.db "$f" --db bad.db
    lines=$(wc -l <"bad-$f.err")
    left=$(ls bad.db* 2>/dev/null | wc -l)
    [ "$rc" -eq 1 ] && [ "$lines" -eq 1 ] && grep -q "^vramreport: $f: .*$why" "bad-$f.err" &&
        [ "$left" -eq 0 ] && pass "$f: refused in one line naming it, no job.db left" ||
        fail "$f: refused in one line naming it, no job.db left" "exit $rc, $left file(s) left: $(cat "bad-$f.err")"
done
cp cs336-silmont-segments.db seg-again.db
vr_run seg-again merge cs336-silmont-segments.db seg-again.db --db bad.db
[ "$rc" -eq 1 ] && [ "$(wc -l <seg-again.err)" -eq 1 ] &&
    grep -q "^vramreport: seg-again.db: its trace cs336-silmont-segments.pickle is merged already" seg-again.err &&
    [ ! -e bad.db ] && pass "a trace of no rank given twice: refused in one line, no job.db" ||
    fail "a trace of no rank given twice: refused" "exit $rc: $(cat seg-again.err)"
cp job.db job.before
vr_run exists merge rank0.db --db job.db
[ "$rc" -eq 1 ] && grep -q "job.db: exists" exists.err && cmp -s job.db job.before &&
    pass "an existing job.db: refused, unchanged" || fail "an existing job.db: refused, unchanged" "exit $rc: $(cat exists.err)"
vr_run help merge --help
[ "$rc" -eq 0 ] && grep -q "^Usage: vramreport merge DB... --db JOB.db" help.out &&
    pass "merge --help: its usage, exit 0" || fail "merge --help: its usage, exit 0" "exit $rc: $(cat help.out help.err)"
vr_run usage merge rank0.db
[ "$rc" -eq 2 ] && grep -q "needs --db" usage.err && pass "no --db: a usage error" ||
    fail "no --db: a usage error" "exit $rc: $(cat usage.err)"

# --- the job database is the ranks' analysis: not imported into, not analysed again
vr_run into import rank0.json --db job.db
[ "$rc" -eq 1 ] && grep -q "made by merge" into.err && cmp -s job.db job.before &&
    pass "import into a job database: refused, unchanged" || fail "import into a job database: refused" "exit $rc: $(cat into.err)"
vr_run cap report --db job.db --capacity 80GiB -o cap.json
[ "$rc" -eq 1 ] && grep -q "made by merge" cap.err && pass "report --capacity of a job database: refused, said why" ||
    fail "report --capacity of a job database: refused" "exit $rc: $(cat cap.err)"
finish
