#!/usr/bin/env bash
# tests/scale.sh: the Slurm recipe of docs/scale.md without Slurm. The
# job array's script (share/slurm/vramreport-array.sbatch) is run as its
# tasks would be, SLURM_ARRAY_TASK_ID set by a loop (in a shuffled order,
# as an array's tasks start), on 6 generated rank traces, then its merge
# step: job.db, job.html and job.json are there, the JSON has the 6 ranks,
# each at its own report's peak; a task whose rank has no file fails
# saying so and leaves no database; a task run again replaces its own.
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
SCRIPT=$VR_SRCDIR/share/slurm/vramreport-array.sbatch
cd "$TMP"
need python3 || true

mkdir traces
"$PYTHON" "$VR_SRCDIR/tests/gen-scenarios.py" training base.json truth.json
"$PYTHON" "$VR_SRCDIR/tests/py/merge/gen_ranks.py" base.json traces 6
bad=0
for i in 3 0 5 1 4 2 3; do
    SLURM_ARRAY_TASK_ID=$i bash "$SCRIPT" traces out >"task$i.out" 2>"task$i.err" || bad=$((bad + 1))
done
[ "$bad" -eq 0 ] && pass "6 array tasks (one run twice) exit 0" || fail "6 array tasks exit 0" "$(cat task*.err)"
n=$(ls out/rank*.db | wc -l)
parts=$(ls out/*.part 2>/dev/null | wc -l)
[ "$n" -eq 6 ] && [ "$parts" -eq 0 ] && pass "out/ holds rank0.db .. rank5.db, no part file" ||
    fail "out/ holds the 6 rank databases" "$(ls out)"

rc=0
SLURM_ARRAY_TASK_ID=9 bash "$SCRIPT" traces out >task9.out 2>task9.err || rc=$?
[ "$rc" -ne 0 ] && grep -q "rank 9: no file matches" task9.err && [ ! -e out/rank9.db ] &&
    pass "a task whose rank has no file fails, saying so" || fail "a task whose rank has no file fails" "exit $rc: $(cat task9.err)"
rc=0
bash "$SCRIPT" traces out >nottask.out 2>nottask.err || rc=$?
[ "$rc" -ne 0 ] && grep -q "not an array task" nottask.err &&
    pass "run outside an array (no SLURM_ARRAY_TASK_ID): refused" || fail "outside an array: refused" "exit $rc: $(cat nottask.err)"

rc=0
bash "$SCRIPT" --merge out >merge.out 2>merge.err || rc=$?
[ "$rc" -eq 0 ] && [ -s out/job.db ] && [ -s out/job.html ] && [ -s out/job.json ] &&
    pass "the merge step writes job.db, job.html, job.json" || fail "the merge step" "exit $rc: $(cat merge.err)"

for i in 0 1 2 3 4 5; do
    "$VRAMREPORT" report --db "out/rank$i.db" -o "own$i.json" -q
done
"$PYTHON" "$VR_SRCDIR/tests/py/merge/own_peaks.py" out/job.json own*.json >cmp.tap
tap_lines cmp.tap
finish
