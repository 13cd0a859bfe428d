#!/usr/bin/env bash
# tests/categories.sh: what each byte live at the peak was:
# the phases and categories the analysis infers from a trace. Four
# synthetic loops of known composition (tests/gen-scenarios.py: training
# with Adam, inference, activation checkpointing, gradient accumulation)
# are imported; the bytes of each category live at the peak, the peak of
# each phase of each step and the phases themselves are checked against
# the generator's ground truth, computed here in Python. Then
# --category-rules (a custom rule decides; a bad file is one line naming
# file:line; a kept database is analysed again when the rules change), and
# every real trace in tests/data/realdata/kineto/ gets a category and a
# phase on every allocation.
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
PY=$VR_SRCDIR/tests/py/categories

GEN=$VR_SRCDIR/tests/gen-scenarios.py
REAL=$VR_SRCDIR/tests/data/realdata/kineto
RULES=$VR_SRCDIR/schemas/categories.rules
cd "$TMP"
need python3 || true
need sqlite3 || true

# oracle.py TRUTH DB REPORT.json: the truth's composition at its peak and
# phase peaks against the database's; one PASS/FAIL line per check.

for s in training inference checkpointing accumulation; do
    "$PYTHON" "$GEN" "$s" "$s.json" "$s.truth.json"
    vr_run "import-$s" import "$s.json" --db "$s.db" -q
    if [ "$rc" -ne 0 ]; then
        fail "$s: imported" "exit $rc: $(head -n 3 "import-$s.err")"
        continue
    fi
    vr_run "report-$s" report --db "$s.db" -f json -o "$s.report.json" -q
    "$PYTHON" "$PY/oracle.py" "$s" "$s.truth.json" "$s.db" "$s.report.json" >"$s.tap"
    tap_lines "$s.tap"
done

# What makes the scenarios differ, said plainly.
q() { sqlite3 "$1" "$2"; }
none_of() { # DB CATEGORY...: no allocation of these categories
    db=$1
    shift
    n=0
    for c in "$@"; do n=$((n + $(q "$db" "SELECT count(*) FROM allocation WHERE category = '$c'"))); done
    [ "$n" -eq 0 ]
}
check "inference (no_grad): no gradient, optimizer state or activation" \
    none_of inference.db gradient optimizer_state activation
check "training: Adam's state comes from the first optimizer step and outlives it" \
    test "$(q training.db "SELECT count(*) FROM allocation WHERE category = 'optimizer_state'
        AND alloc_phase = 'optimizer' AND free_phase IS NULL")" -eq 6
check "training: gradients are freed by zero_grad" \
    test "$(q training.db "SELECT count(DISTINCT free_phase) || free_phase FROM allocation
        WHERE category = 'gradient' AND free_phase IS NOT NULL")" = 1zero_grad
check "checkpointing keeps fewer activations than training" \
    test "$(q checkpointing.db "SELECT sum(bytes) FROM allocation WHERE category = 'activation'")" \
    -lt "$(q training.db "SELECT sum(bytes) FROM allocation WHERE category = 'activation'")"
check "accumulation: three forward and three backward phases in each step" \
    test "$(q accumulation.db "SELECT group_concat(n) FROM (SELECT count(*) AS n FROM phase
        WHERE kind IN ('forward', 'backward') GROUP BY step)")" = 6,6,6,6
check "the Markdown report has the peak per phase, a row per step" \
    sh -c "'$VRAMREPORT' report --db training.db -q -o training.md && grep -q '^### Peak per phase' training.md &&
           [ \$(grep -c '^| [1-4] | [0-9.]* MiB | [0-9.]* MiB | [0-9.]* MiB | [0-9.]* MiB |\$' training.md) -eq 4 ]"

# --category-rules: a rule of one's own decides; the built-in ones return.
{
    echo '# mine: Adam state counted as parameters'
    echo 'adam-as-parameter  alloc=optimizer free=never  -> parameter'
    cat "$RULES"
} >mine.rules
vr_run custom report --db training.db --category-rules mine.rules -f json -o custom.json
check "--category-rules on a kept database: analysed again (said once), exit 0" \
    sh -c "[ $rc -eq 0 ] && grep -c 'analysing now' custom.err | grep -qx 1"
check "--category-rules: the custom rule decides, by name" \
    test "$(q training.db "SELECT count(*) || category FROM allocation
        WHERE category_rule = 'adam-as-parameter' GROUP BY category")" = 6parameter
check "--category-rules: no optimizer state left" none_of training.db optimizer_state
vr_run custom-again report --db training.db --category-rules mine.rules -f json -o custom.json
check "the same rules again: the analysis is current" \
    sh -c "[ $rc -eq 0 ] && ! grep -q 'analysing now' custom-again.err"
vr_run builtin report --db training.db -f json -o builtin.json
check "without --category-rules: analysed again with the built-in rules" \
    sh -c "[ $rc -eq 0 ] && grep -q 'analysing now' builtin.err &&
           [ \$(sqlite3 training.db \"SELECT count(*) FROM allocation
                WHERE category = 'optimizer_state'\") -eq 6 ]"

bad_rules() { # NAME TEXT EXPECTED-SUBSTRING: one line, file:line, exit 2
    printf '%s' "$2" >"$1.rules"
    vr_run "bad-$1" report --db training.db --category-rules "$1.rules" -o out.md
    if [ "$rc" -eq 2 ] && [ "$(wc -l <"bad-$1.err")" -eq 1 ] && grep -qF "$3" "bad-$1.err" &&
        ! crashed "$rc" "bad-$1.err"; then
        pass "a bad rules file ($1): one line, exit 2: $(cat "bad-$1.err")"
    else
        fail "a bad rules file ($1): one line, exit 2" "exit $rc" "$(cat "bad-$1.err")"
    fi
}
bad_rules phase '# ok
good -> unknown
x alloc=forward free=bogus -> temporary
' "phase.rules:3: expected a phase"
bad_rules category 'x alloc=forward -> weights
' "category.rules:1: expected a category"
bad_rules arrow 'x alloc=forward temporary
' "arrow.rules:1: expected a condition"
bad_rules key 'x colour=red -> temporary
' "key.rules:1: expected a condition alloc="
bad_rules empty '# nothing
' "empty.rules:1: expected at least one rule"
bad_rules undeclared-role 'role fwd frame=forward
x role=forward -> activation
' "undeclared-role.rules:2: expected a role declared by a 'role' line above, got 'forward'"
bad_rules role-condition 'role fwd alloc=forward
' "role-condition.rules:1: expected a condition frame= or file= of a role, got 'alloc=forward'"
bad_rules role-bare 'role fwd
' "role-bare.rules:1: expected a condition frame= or file= of a role, got 'fwd'"
# A rules file from before roles: a rule may be named "role".
printf 'role alloc=optimizer free=never -> parameter\nrest -> unknown\n' >named-role.rules
vr_run named-role report --db training.db --category-rules named-role.rules -f json -o named.json
check "a rule named 'role' is still a rule (rules files from before roles)" \
    test "$rc-$(q training.db "SELECT count(*) FROM allocation WHERE category_rule = 'role'")" = 0-6
vr_run missing report --db training.db --category-rules no-such.rules -o out.md
check "a missing rules file: one line naming it, exit 2" \
    sh -c "[ $rc -eq 2 ] && grep -q 'no-such.rules: cannot read' missing.err"
vr_run bad-import import training.json --db fresh.db --category-rules phase.rules
check "a bad rules file is refused before any import" \
    sh -c "[ $rc -eq 2 ] && [ ! -e fresh.db ]"
check "the built-in rules are left as they were" \
    test "$(q training.db "SELECT count(*) FROM allocation WHERE category IS NULL")" -eq 0

# Every real trace: each allocation gets a phase and a category.
for f in "$REAL"/*; do
    b=$(basename "$f")
    vr_run "real-$b" import "$f" --db "$b.db" -q
    if [ "$rc" -ne 0 ]; then
        fail "$b: imported" "exit $rc"
        continue
    fi
    n=$(q "$b.db" "SELECT count(*) FROM allocation")
    bad=$(q "$b.db" "SELECT count(*) FROM allocation WHERE category IS NULL OR alloc_phase IS NULL
        OR category NOT IN ('parameter', 'optimizer_state', 'input', 'temporary', 'activation', 'kv_cache',
                            'gradient', 'autograd_detail', 'unknown')
        OR (free_ts_ns IS NULL) <> (free_phase IS NULL)")
    check "$b: every allocation ($n) has a phase and a category" test "$bad" -eq 0
    set -- $("$PYTHON" "$PY/real.py" "$f")
    check "$b: one optimizer phase per Optimizer.step# annotation ($1)" \
        test "$(q "$b.db" "SELECT count(*) FROM phase WHERE kind = 'optimizer'")" -eq "$1"
    if [ "$2" -gt 0 ]; then
        check "$b: backward phases run on the autograd threads ($3)" \
            test "$(q "$b.db" "SELECT group_concat(DISTINCT tid) FROM phase WHERE kind = 'backward'")" = "$3"
    fi
done

# A snapshot: the stack decides. Adam's state of a real training
# snapshot (blocks still in use whose stack passes through torch/optim/,
# read by Python) is what the frame rule calls optimizer_state.
SNAP=$VR_SRCDIR/tests/data/realdata/snapshot/cs336-bcrafton.pickle
vr_run snap import "$SNAP" --db snap.db -q
set -- $("$PYTHON" "$PY/optim.py" "$SNAP")
set -- "$1" "$2" $(q snap.db "SELECT count(*), coalesce(sum(bytes), 0) FROM allocation
    WHERE category = 'optimizer_state' AND category_rule = 'snapshot-optimizer-state'
      AND free_ts_ns IS NULL" | tr '|' ' ')
check "snapshot: the optimizer's live blocks are optimizer_state by their frames ($1 blocks, $2 bytes)" \
    "$PYTHON" -c "import sys; a, b, c, d = map(int, sys.argv[1:]); sys.exit(not (a == c and abs(b - d) <= b // 100))" "$@"

finish
