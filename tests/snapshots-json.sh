#!/usr/bin/env bash
# tests/snapshots-json.sh: the JSON form of CUDA caching-allocator
# snapshots. Every real pickle in tests/data/realdata/snapshot/ is
# turned into JSON here by Python (a restricted Unpickler that refuses every
# global, then json.dump), both forms are imported into two databases, and
# their figures must be the same, by SQL on the two databases and in the
# report's JSON. Cut and broken JSON, files named for the other form, the
# legacy shapes, unknown keys and the user's annotations (stages) are
# checked on small files Python writes in both forms, with the expected
# values computed here from the data.
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
PY=$VR_SRCDIR/tests/py/snapshots-json

REAL=$VR_SRCDIR/tests/data/realdata/snapshot
cd "$TMP"
need python3 || true

# Imports FILE into DB (fresh) and finishes its analysis (report --format json).
import_both() {
    rm -f "$2" "$2.json"
    vr_run imp import "$1" --db "$2" -q
    [ "$rc" = 0 ] || { fail "$1: imported" "exit $rc: $(cat imp.err)"; return 1; }
    vr_run rep report --db "$2" --format json -o "$2.json"
    [ "$rc" = 0 ] || { fail "$1: reported" "exit $rc: $(cat rep.err)"; return 1; }
    return 0
}

#-- every real snapshot, in both forms ---------------------------------------------------

for f in "$REAL"/*.pickle; do
    name=${f##*/}
    name=${name%.pickle}
    "$PYTHON" "$PY/snapjs.py" tojson "$f" "$name.json" 2>py.err || { fail "$name: Python writes its JSON" "$(cat py.err)"; continue; }
    import_both "$f" "$name-p.db" && import_both "$name.json" "$name-j.db" || continue
    "$PYTHON" "$PY/snapjs.py" same "$name" "$name-p.db" "$name-j.db" "$f" >"$name.tap" 2>&1 \
        || echo "FAIL	$name: compared	$(tail -3 "$name.tap")" >>"$name.tap"
    tap_lines "$name.tap"
    got=$("$PYTHON" "$PY/same_figures.py" "$name-p.db.json" "$name-j.db.json" 2>&1 || true)
    [ "$got" = same ] && pass "$name: the report's device figures are the same from both forms" \
        || fail "$name: the report's device figures are the same from both forms" "$got"
    got=$(json_get "$name-j.db.json" 'd["sources"][0]["format"]')
    [ "$got" = snapshot_json ] && pass "$name: the JSON is read as snapshot_json" \
        || fail "$name: the JSON is read as snapshot_json" "$got"
done

#-- named for the other form: read by content -------------------------------------------

cp "$REAL/cs336-silmont-segments.pickle" pickle-named.json
cp cs336-silmont-segments.json json-named.pickle
for f in pickle-named.json:snapshot json-named.pickle:snapshot_json; do
    file=${f%%:*}
    want=${f#*:}
    import_both "$file" "$file.db" || continue
    got=$(sqlite3 "$file.db" 'SELECT format FROM source' 2>&1 || true)
    n=$(sqlite3 "$file.db" "SELECT count FROM source_events WHERE kind = 'segment'" 2>&1 || true)
    want_n=$(sqlite3 cs336-silmont-segments-p.db "SELECT count FROM source_events WHERE kind = 'segment'" 2>&1 || true)
    [ "$got" = "$want" ] && [ "$n" = "$want_n" ] && pass "$file: read by its content as $want ($n segments)" \
        || fail "$file: read by its content as $want" "format $got, $n segments (want $want_n)"
done

#-- cut and broken JSON -----------------------------------------------------------------

# Cut halfway through device_traces: the segments and the entries before
# the cut are in, and the import says it was cut.
"$PYTHON" "$PY/gen_cut.py" cs336-bcrafton.json >cut.info
vr_run cut import cut.json --db cut.db
[ "$rc" = 0 ] && pass "a JSON snapshot cut inside device_traces: exit 0" \
    || fail "a JSON snapshot cut inside device_traces: exit 0" "exit $rc: $(cat cut.err)"
grep -q '^vramreport: warning: cut.json: truncated at byte' cut.err && pass "a cut JSON snapshot: said on stderr" \
    || fail "a cut JSON snapshot: said on stderr" "$(cat cut.err)"
got=$(sqlite3 cut.db "SELECT (SELECT truncated FROM source),
    (SELECT count FROM source_events WHERE kind = 'segment') = (SELECT count(*) FROM segment),
    (SELECT count(*) FROM segment),
    (SELECT count(*) FROM trace_entry) > 0" 2>&1 || true)
want=$(sqlite3 cs336-bcrafton-j.db "SELECT 1, 1, (SELECT count(*) FROM segment), 1" 2>&1 || true)
full=$(sqlite3 cs336-bcrafton-j.db "SELECT count(*) FROM trace_entry" 2>&1 || true)
cutn=$(sqlite3 cut.db "SELECT count(*) FROM trace_entry" 2>&1 || true)
[ "$got" = "$want" ] && [ "$cutn" -lt "$full" ] \
    && pass "a cut JSON snapshot: every segment, and $cutn of $full trace entries, are in; truncated is set" \
    || fail "a cut JSON snapshot: segments and the entries before the cut are in" "got $got want $want; $cutn of $full entries"

# Broken structure: one line naming the file and the byte.
printf '{"segments": [{"device": 0, "total_size": 1, "blocks": []}]], "device_traces": []}' >bad.json
off=$("$PYTHON" -c 'print(open("bad.json").read().index("]]") + 1)')
vr_run bad import bad.json --db bad.db
[ "$rc" = 1 ] && [ "$(wc -l <bad.err | tr -d ' ')" = 1 ] && grep -q "^vramreport: bad.json: byte $off: expected" bad.err \
    && pass "malformed JSON: exit 1, one line with the byte offset ($off)" \
    || fail "malformed JSON: exit 1, one line with the byte offset ($off)" "exit $rc: $(cat bad.err)"
[ ! -e bad.db ] || [ "$(sqlite3 bad.db 'SELECT count(*) FROM segment' 2>/dev/null || echo 0)" = 0 ] \
    && pass "malformed JSON: nothing half-written" || fail "malformed JSON: nothing half-written"

# A broken record inside a good document is skipped and counted.
printf '{"segments": [{"device": 0, "total_size": 1048576, "blocks": [{"size": 1048576, "state": "inactive"}]}, {"device": 0, "total_size": : 5}], "device_traces": [[{"action": "alloc", "size": 1, "addr": 1, "time_us": 1}]]}' >rec.json
vr_run rec import rec.json --db rec.db -q
got=$(sqlite3 rec.db "SELECT (SELECT count(*) FROM segment), (SELECT count FROM source_tally WHERE kind = 'malformed_event'), (SELECT count(*) FROM trace_entry)" 2>&1 || true)
[ "$rc" = 0 ] && [ "$got" = "1|1|1" ] && pass "a broken record: skipped and counted, the rest read" \
    || fail "a broken record: skipped and counted, the rest read" "exit $rc, got $got: $(cat rec.err)"

#-- legacy shapes, unknown keys, stages: both forms ----------------------------------------

"$PYTHON" "$PY/snapjs.py" cases || fail "Python writes the synthetic snapshots"
for w in *.want; do
    name=${w%.want}
    for form in pickle json; do
        import_both "$name.$form" "$name-$form.db" || continue
        "$PYTHON" "$PY/snapjs.py" check "$name ($form)" "$name-$form.db" "$w" >"$name-$form.tap" 2>&1 \
            || echo "FAIL	$name ($form): checked	$(tail -3 "$name-$form.tap")" >>"$name-$form.tap"
        tap_lines "$name-$form.tap"
    done
    "$PYTHON" "$PY/snapjs.py" same "$name" "$name-pickle.db" "$name-json.db" "$name.pickle" >"$name.same" 2>&1 || true
    bad=$(grep -c '^FAIL' "$name.same" || true)
    [ "$bad" = 0 ] && pass "$name: every figure the same from both forms" \
        || fail "$name: every figure the same from both forms" "$(grep '^FAIL' "$name.same" | head -3)"
done

# The stage the peak fell in, in the report: JSON, Markdown (escaped), HTML.
want=$("$PYTHON" -c 'import json; print(json.load(open("stages.want"))["peak_stage"])')
for form in pickle json; do
    got=$(json_get "stages-$form.db.json" 'd["devices"][0].get("peak_stage")')
    [ "$got" = "$want" ] && pass "stages ($form): the report's peak_stage is '$want'" \
        || fail "stages ($form): the report's peak_stage" "got $got, want $want"
done
vr_run md report --db stages-json.db -o stages.md
grep -q '^The peak fell in the stage backward' stages.md && pass "Markdown: the stage the peak fell in" \
    || fail "Markdown: the stage the peak fell in" "exit $rc: $(grep -i stage stages.md || cat md.err)"
grep 'The peak fell in the stage' stages.md | grep -q '<b>|x' && fail "Markdown: the stage's name is escaped" "$(grep 'peak fell' stages.md)" \
    || pass "Markdown: the stage's name is escaped"
vr_run html report --db stages-json.db --format html -o stages.html
grep -q '<b>|x' stages.html && fail "HTML: the stage's name is escaped" || pass "HTML: the stage's name is escaped"
got=$(json_get noframes-json.db.json 'd["devices"][0].get("peak_stage", "absent")')
[ "$got" = absent ] && pass "no annotations: no peak_stage" || fail "no annotations: no peak_stage" "$got"

finish
