#!/usr/bin/env bash
# tests/where.sh: where the memory went, by module and by line.
# A Kineto trace written here as PyTorch's python tracer writes one
# (with_stack=True: python_function events "file(line): function",
# "nn.Module: Class_N", "<built-in ...>", with Python id / parent id), with
# memory events under known frames and modules, on the main thread and on
# autograd's (no frames there). The oracle places each allocation by
# walking the Python parent ids up from the innermost event (the analysis
# nests by time: another method), and groups what is live at the peak.
# A trace without frames is grouped by operator with the profiler flags
# said; a real allocator snapshot's allocations get their stacks' frames.
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
PY=$VR_SRCDIR/tests/py/where

cd "$TMP"
need python3 || true
need sqlite3 || true

"$PYTHON" "$PY/gen.py" stack.pt.trace.json
vr_run imp import stack.pt.trace.json --db stack.db -q
[ "$rc" = 0 ] && pass "a with_stack trace is imported" || fail "a with_stack trace is imported" "exit $rc: $(cat imp.err)"
vr_run rep report --db stack.db --format json -o stack.json
[ "$rc" = 0 ] && pass "its JSON report" || fail "its JSON report" "exit $rc: $(cat rep.err)"
vr_run md report --db stack.db -o stack.md
[ "$rc" = 0 ] && pass "its Markdown report" || fail "its Markdown report" "exit $rc: $(cat md.err)"

#-- each allocation's frame and module in the database -----------------------------------

"$PYTHON" "$PY/oracle.py" places stack.pt.trace.json >places.want
sqlite3 -separator '	' stack.db "
SELECT a.addr, coalesce(fn.text || ':' || f.line || ' in ' || nn.text, '-'),
       coalesce(a.module, '-')
  FROM allocation a LEFT JOIN frame f ON f.id = a.frame_id
  LEFT JOIN name fn ON fn.id = f.filename_id LEFT JOIN name nn ON nn.id = f.function_id
 ORDER BY a.addr" >places.got
"$PYTHON" "$PY/places.py" places.want places.got >places.tap
tap_lines places.tap

# The oracle's places include the cases that matter; say so, so a
# generator change cannot empty the test.
n=$(grep -c -e 'Net_0.Sequential_0.Linear_0' -e 'train.py:60 in make_buffer' -e 'My\*Block_0' \
         -e 'None, None' -e 'my (copy).py:7 in run' places.tap || true)
[ "$n" -ge 5 ] && pass "the cases are covered: nested modules, outside modules, a markup name, no frame, a file with parentheses under an installed package's" \
    || fail "the cases are covered" "$(cat places.tap)"

# Recent PyTorch says where each call was made ("CallFrom"): the line of
# the call in the user's frame, not the line its function begins on.
"$PYTHON" "$PY/gen.py" callfrom.pt.trace.json callfrom
vr_run cf callfrom.pt.trace.json --db callfrom.db --format json -o callfrom.json
[ "$rc" = 0 ] && pass "a trace with CallFrom" || fail "a trace with CallFrom" "exit $rc: $(cat cf.err)"
"$PYTHON" "$PY/oracle.py" places callfrom.pt.trace.json >cf.want
sqlite3 -separator '	' callfrom.db "
SELECT a.addr, coalesce(fn.text || ':' || f.line || ' in ' || nn.text, '-'),
       coalesce(a.module, '-')
  FROM allocation a LEFT JOIN frame f ON f.id = a.frame_id
  LEFT JOIN name fn ON fn.id = f.filename_id LEFT JOIN name nn ON nn.id = f.function_id
 ORDER BY a.addr" >cf.got
"$PYTHON" "$PY/cf.py" cf.want cf.got places.want >cf.tap
tap_lines cf.tap

# Frames are interned: one row per (file, line, function).
n=$(sqlite3 stack.db "SELECT count(*) - count(DISTINCT filename_id || ':' || line || ':' || function_id) FROM frame")
[ "$n" = 0 ] && pass "frame rows are unique" || fail "frame rows are unique" "$n duplicates"

#-- the report's groups ------------------------------------------------------------------

"$PYTHON" "$PY/oracle.py" line stack.pt.trace.json >groups.want
"$PYTHON" "$PY/groups.py" groups.want stack.json >groups.tap
tap_lines groups.tap

grep -q '^### What was live at the peak, by category, module and line' stack.md \
    && pass "the Markdown section" || fail "the Markdown section" "$(grep '^###' stack.md)"
grep -q -F '  - Net\_0.Sequential\_0.My\*Block\_0: 16.0 MiB (allocations: 1)' stack.md \
    && pass "a module path, escaped, with its size and count" \
    || fail "a module path, escaped" "$(grep -F 'Block' stack.md)"
grep -q -F '    - blocks.py:12 in forward: 16.0 MiB (allocations: 1)' stack.md \
    && pass "its line" || fail "its line" "$(sed -n '/What was live/,$p' stack.md)"
grep -q -F '| 64.0 MiB | (no enclosing op) | train.py:1 in \<module\> |' stack.md \
    && pass "the Where column" || fail "the Where column" "$(grep -F '64.0 MiB' stack.md)"
grep -q 'records no Python frames' stack.md \
    && fail "no flags sentence when frames are recorded" || pass "no flags sentence when frames are recorded"

#-- more than five modules: the rest summed ----------------------------------------------

"$PYTHON" "$PY/gen_many.py" stack.pt.trace.json many.pt.trace.json
vr_run many many.pt.trace.json --format json -o many.json
"$PYTHON" "$PY/oracle.py" line many.pt.trace.json >many.want
"$PYTHON" "$PY/many.py" many.want many.json >many.tap
tap_lines many.tap
vr_run manymd many.pt.trace.json -o many.md
grep -q -E '^  - … [0-9]+ more modules: ' many.md && pass "the Markdown says how many more" \
    || fail "the Markdown says how many more" "$(sed -n '/What was live/,$p' many.md)"

#-- modules nested deeper than the path keeps ---------------------------------------------

"$PYTHON" "$PY/gen_deep.py" deep.pt.trace.json
vr_run deep deep.pt.trace.json --db deep.db --format json -o deep.json
m=$(sqlite3 deep.db "SELECT module FROM allocation")
case $m in
DeepBlock_0.DeepBlock_1.DeepBlock_2.*.…) pass "a path nested past the cap ends with .…" ;;
*) fail "a path nested past the cap ends with .…" "$m" ;;
esac
n=$(printf '%s' "$m" | wc -c)
[ "$n" -le 1028 ] && [ "$n" -ge 1000 ] && pass "and is kept to 1 KiB ($n bytes)" || fail "and is kept to 1 KiB" "$n bytes"

#-- a trace without Python frames: by operator, and the flags ----------------------------

cp "$VR_SRCDIR/tests/cli/data/tiny.pt.trace.json" .
vr_run tiny tiny.pt.trace.json --format json -o tiny.json
vr_run tinymd tiny.pt.trace.json -o tiny.md
"$PYTHON" "$PY/oracle.py" operator tiny.pt.trace.json >tiny.want
"$PYTHON" "$PY/tiny.py" tiny.want tiny.json >tiny.tap
tap_lines tiny.tap
grep -q -F 'profile_memory=True,' tiny.md && grep -q -F 'with_stack=True, with_modules=True' tiny.md \
    && pass "the report names the profiler flags that would record more" \
    || fail "the report names the profiler flags" "$(sed -n '/What was live/,/^- /p' tiny.md)"
grep -q '^### What was live at the peak, by category and operator' tiny.md \
    && pass "the operator section" || fail "the operator section" "$(grep '^###' tiny.md)"

#-- an allocator snapshot: its stacks' first frames outside torch ------------------------

SNAP=$VR_SRCDIR/tests/data/realdata/snapshot/cs336-silmont-forward-bf16.pickle
"$PYTHON" "$PY/snap_want.py" "$SNAP" >snap.want
vr_run snap import "$SNAP" --db snap.db -q
sqlite3 -separator '	' snap.db "
SELECT coalesce(fn.text || ':' || f.line || ' in ' || nn.text, '-'), count(*)
  FROM allocation a LEFT JOIN frame f ON f.id = a.frame_id
  LEFT JOIN name fn ON fn.id = f.filename_id LEFT JOIN name nn ON nn.id = f.function_id
 GROUP BY 1" >snap.got
"$PYTHON" "$PY/snap.py" snap.want snap.got >snap.tap
tap_lines snap.tap
vr_run snaprep report --db snap.db --format json -o snap.json
got=$(json_get snap.json 'd["devices"][0]["live_at_peak_by"] + " " + str(d["devices"][0]["live_at_peak_grouped_bytes"] == sum(c["bytes"] for c in d["devices"][0]["live_at_peak_groups"]))')
[ "$got" = "module_and_line True" ] && pass "the snapshot's peak is grouped by line" || fail "the snapshot's peak is grouped by line" "$got"

#-- analysing again changes nothing -------------------------------------------------------

sqlite3 stack.db "SELECT id, frame_id, module FROM allocation ORDER BY id" >once.txt
"$PYTHON" "$PY/gen.py" again.pt.trace.json
sed -i 's/"with_stack": 1/"with_stack": 1, "again": 1/' again.pt.trace.json
vr_run again import again.pt.trace.json --db stack.db -q
sqlite3 stack.db "SELECT id, frame_id, module FROM allocation WHERE source_id = 1 ORDER BY id" >twice.txt
cmp -s once.txt twice.txt && pass "a second analysis places the first file's allocations the same" \
    || fail "a second analysis places them the same" "$(diff once.txt twice.txt | head)"

finish
