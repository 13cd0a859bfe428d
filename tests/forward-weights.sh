#!/usr/bin/env bash
# tests/forward-weights.sh: the weights one forward pass reads, from a
# trace recorded with record_shapes=True. The import keeps, for each op
# that reads weights (aten::linear, aten::conv*, aten::embedding,
# aten::layer_norm, aten::batch_norm, ...), the bytes of its weight
# operands (op_weight); the forward_weights pass counts each weight once
# (per nn.Module instance, or in one window for ops outside modules).
# The oracle (tests/py/forward-weights/oracle.py) reads the trace's JSON
# itself; a generated trace's figures are also known from its making.
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
PY=$VR_SRCDIR/tests/py/forward-weights
REAL=$VR_SRCDIR/tests/data/realdata/kineto

cd "$TMP"
need python3 || true
need sqlite3 || true

COLS="'buffer_bytes=' || buffer_bytes || ' bytes=' || bytes || ' how=' || how || ' modules=' || modules || ' ops=' || ops || ' reads=' || reads || ' tensors=' || tensors || ' tied_candidate_bytes=' || tied_candidate_bytes || ' uncounted=' || uncounted"

# q DB SQL: sqlite3, whose failure (an old schema) is a figure that fails the check.
q() { sqlite3 "$@" 2>&1 || true; }

# analysed NAME FILE: imports and analyses FILE into NAME.db.
analysed() {
    rm -f "$1.db"
    vr_run "$1" "$2" --db "$1.db" --format json -o "$1.report.json" -q
    [ "$rc" = 0 ] && pass "$1: imported and analysed" || fail "$1: imported and analysed" "exit $rc: $(cat "$1.err")"
}

# The oracle's "how" is module, window or module+window: a window is the
# first forward phase or the first step, which hold the same ops here.
figures() {
    q "$1.db" "SELECT $COLS FROM forward_weights" |
        sed -e 's/how=module+[a-z_]*/how=module+window/' -e 's/how=forward_phase/how=window/' \
            -e 's/how=step/how=window/' -e 's/how=source/how=window/'
}

#-- real traces (record_shapes, with_modules: HF inference) --------------------------------
for f in tracelens-h100-bert-small tracelens-mi300x-bert-small tracelens-h100-qwen1.5-0.5b \
    tracelens-h100-owlv2-large; do
    analysed "$f" "$REAL/$f.json.gz"
    want=$("$PYTHON" "$PY/oracle.py" forward "$REAL/$f.json.gz")
    got=$(figures "$f")
    [ -n "$want" ] && [ "$got" = "$want" ] && pass "$f: one forward's weights: $got" \
        || fail "$f: one forward's weights" "want $want" "got  $got"
    "$PYTHON" "$PY/oracle.py" ops "$REAL/$f.json.gz" >"$f.ops.want"
    q -separator '	' "$f.db" "
SELECT n.text, o.ts_ns, w.bytes, w.tensors, w.buffer_bytes, w.uncounted
  FROM op_weight w JOIN op o ON o.id = w.op_id JOIN name n ON n.id = o.name_id
 ORDER BY o.ts_ns, n.text" >"$f.ops.got"
    if [ -s "$f.ops.want" ] && cmp -s "$f.ops.want" "$f.ops.got"; then
        pass "$f: each weight op's bytes ($(wc -l <"$f.ops.got") ops)"
    else
        fail "$f: each weight op's bytes" "$(diff "$f.ops.want" "$f.ops.got" | head -n 8)"
    fi
    dev=$(q "$f.db" "SELECT d.label FROM forward_weights f JOIN device d ON d.id = f.device_id")
    [ "$dev" = cuda:0 ] && pass "$f: on the trace's GPU (cuda:0)" || fail "$f: on the trace's GPU" "got '$dev'"
done

# The figures a reader checks against the model cards: bert-small's 28.8M
# parameters once its LM head is taken as the word embedding's matrix,
# Qwen1.5-0.5B's 464M (the trace runs Qwen2Model: no head) less its 49
# RMSNorm weights of 1024 (HF's Qwen2RMSNorm multiplies by its weight in
# Python: an aten::mul, no op that names a weight), OWLv2-large's 438M;
# all bf16. And what was allocated before each trace began.
params() { q "$1.db" "SELECT (bytes - tied_candidate_bytes) / 2 FROM forward_weights"; }
p=$(params tracelens-h100-bert-small)
[ "$p" = 28795194 ] && pass "bert-small: 28,795,194 parameters if the head is tied" || fail "bert-small: parameters" "got $p"
t=$(q tracelens-h100-bert-small.db "SELECT tied_candidate_bytes FROM forward_weights")
[ "$t" = $((30522 * 512 * 2)) ] && pass "bert-small: the tied candidate is the 30522x512 word embedding" \
    || fail "bert-small: the tied candidate" "got $t"
p=$(params tracelens-h100-qwen1.5-0.5b)
[ "$p" = $((463987712 - 49 * 1024)) ] && pass "Qwen1.5-0.5B: 463,937,536 parameters read (no head, nothing tied, no RMSNorm weight)" || fail "Qwen1.5-0.5B: parameters" "got $p"
p=$(params tracelens-h100-owlv2-large)
[ "$p" = 437609735 ] && pass "OWLv2-large: 437,609,735 parameters, its 5 forwards counted once" || fail "OWLv2-large: parameters" "got $p"
b=$("$PYTHON" "$PY/oracle.py" before "$REAL/tracelens-mi300x-bert-small.json.gz")
w=$(q tracelens-mi300x-bert-small.db "SELECT bytes - tied_candidate_bytes FROM forward_weights")
[ "$w" -le "$b" ] 2>/dev/null && [ $((b - w)) -lt $((b / 100)) ] \
    && pass "MI300X bert-small: the weights ($w B) are within 1 % of what was allocated before the trace ($b B)" \
    || fail "MI300X bert-small: the weights against what was allocated before" "weights $w, before $b"

# A trace without shapes: nothing.
analysed hta "$REAL/hta-v100x2-rank1-2022.pt.trace.json.gz"
n=$(q hta.db "SELECT (SELECT count(*) FROM op_weight) || ' ' || (SELECT count(*) FROM forward_weights)")
[ "$n" = "0 0" ] && pass "a trace without shapes: no op_weight, no forward_weights" || fail "a trace without shapes" "got $n"

#-- a generated trace with known weights -----------------------------------------------------
for mode in modules plain; do
    known=$("$PYTHON" "$PY/gen.py" "gen-$mode.json" "$mode")
    analysed "gen-$mode" "gen-$mode.json"
    want=$("$PYTHON" "$PY/oracle.py" forward "gen-$mode.json")
    got=$(figures "gen-$mode")
    [ "$got" = "$want" ] && pass "generated ($mode): the oracle's figures: $got" \
        || fail "generated ($mode): the oracle's figures" "want $want" "got  $got"
    ok=1
    for kv in $known; do
        case " $got " in *" $kv "*) ;; *) ok=0 ;; esac
    done
    [ "$ok" = 1 ] && pass "generated ($mode): the figures it was made with: $known" \
        || fail "generated ($mode): the figures it was made with" "known $known" "got   $got"
done
how=$(q gen-modules.db "SELECT how || ' ' || modules || ' ' || reads FROM forward_weights")
[ "$how" = "module+forward_phase 11 26" ] \
    && pass "modules: 11 instances, the op outside them in the first forward phase, 26 reads in 2 steps" \
    || fail "modules: how it was counted" "got $how"
how=$(q gen-plain.db "SELECT how FROM forward_weights")
[ "$how" = forward_phase ] && pass "no module events: the first forward phase" || fail "no module events: the window" "got $how"
nested=$(q gen-modules.db "SELECT count(*) FROM op_weight w JOIN op o ON o.id = w.op_id JOIN name n ON n.id = o.name_id WHERE n.text LIKE 'aten::%conv%'")
[ "$nested" = 6 ] && pass "conv2d, convolution and _convolution all stored (6 in 2 steps), only the outermost counted" \
    || fail "nested conv ops stored" "got $nested"
u=$(q gen-modules.db "SELECT count FROM source_tally WHERE kind = 'weight_operand_unknown_dtype'")
[ "$u" = 2 ] && pass "a dtype of unknown size: tallied (2)" || fail "a dtype of unknown size: tallied" "got '$u'"

# Three traces in one database: each source its own figures, on its own device.
rm -f three.db
vr_run three import "$REAL/tracelens-h100-bert-small.json.gz" "$REAL/tracelens-mi300x-bert-small.json.gz" \
    gen-modules.json --db three.db -q
got=$(q three.db "SELECT group_concat(f.bytes || '@' || d.label, ' ') FROM (SELECT * FROM forward_weights ORDER BY source_id) f JOIN device d ON d.id = f.device_id")
want="$(q tracelens-h100-bert-small.db 'SELECT bytes FROM forward_weights')@cuda:0 $(q tracelens-mi300x-bert-small.db 'SELECT bytes FROM forward_weights')@cuda:0 $(q gen-modules.db 'SELECT bytes FROM forward_weights')@cuda:0"
[ "$rc" = 0 ] && [ "$got" = "$want" ] && pass "three traces in one database: each source's figures as alone ($got)" \
    || fail "three traces in one database" "exit $rc: $(cat three.err)" "want $want" "got  $got"

#-- bad input -------------------------------------------------------------------------------
"$PYTHON" "$PY/gen.py" bad.json bad >/dev/null
analysed bad bad.json
crashed "$rc" bad.err && fail "bad shapes: no crash" "$(cat bad.err)" || pass "bad shapes: no crash"
got=$(figures bad)
want=$("$PYTHON" "$PY/oracle.py" forward bad.json)
[ "$got" = "$want" ] && pass "bad shapes after the steps change nothing of the first forward" \
    || fail "bad shapes: the forward" "want $want" "got  $got"
"$PYTHON" "$PY/oracle.py" ops bad.json >bad.ops.want
q -separator '	' bad.db "
SELECT n.text, o.ts_ns, w.bytes, w.tensors, w.buffer_bytes, w.uncounted
  FROM op_weight w JOIN op o ON o.id = w.op_id JOIN name n ON n.id = o.name_id
 ORDER BY o.ts_ns, n.text" >bad.ops.got
n=$(q bad.db "SELECT count(DISTINCT w.op_id) FROM op_weight w JOIN op o ON o.id = w.op_id WHERE o.ts_ns = (SELECT max(ts_ns) FROM op WHERE cat = 'cpu_op')")
[ "$n" = 2 ] && pass "an event written twice: two rows, one per op" || fail "an event written twice: two rows" "got $n"
cmp -s bad.ops.want bad.ops.got && pass "bad shapes: each op's row as the oracle reads it (saturated, uncounted)" \
    || fail "bad shapes: each op's row" "$(diff bad.ops.want bad.ops.got | head -n 8)"
t=$(q bad.db "SELECT group_concat(kind || '=' || count, ' ') FROM (SELECT * FROM source_tally WHERE kind LIKE 'weight%' ORDER BY kind)")
[ "$t" = "weight_bytes_saturated=2 weight_operand_unknown_dtype=2 weight_operand_unreadable=6" ] \
    && pass "bad shapes tallied: $t" || fail "bad shapes tallied" "got $t"
grep -q 'weight operand(s) of traced ops not read' bad.err && pass "and said on stderr" \
    || fail "bad shapes said on stderr" "$(cat bad.err)"

"$PYTHON" "$PY/gen.py" huge.json huge >/dev/null
analysed huge huge.json
got=$(q huge.db "SELECT bytes || ' ' || how FROM forward_weights")
[ "$got" = "9223372036854775807 source" ] && pass "weights past 2^63 bytes: the sum saturates (no steps: the whole trace)" \
    || fail "weights past 2^63 bytes: saturated" "got $got"

finish
