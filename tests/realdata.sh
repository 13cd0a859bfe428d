#!/usr/bin/env bash
# tests/realdata.sh: every real trace in tests/data/realdata/kineto is
# imported and reported; the figures in the JSON report are checked against
# figures this script computes on its own from the original file (python3's
# json and gzip modules), and the HTML and Markdown renderings of the same
# database are checked for the basics. Then: truncated inputs (cut at
# several offsets, and a gzip stream cut short), the same content as plain,
# gzip, zstd and standard input, and importing one file twice.
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
PY=$VR_SRCDIR/tests/py/realdata

K=$VR_SRCDIR/tests/data/realdata/kineto
cd "$TMP"

need python3 || true
check "python3 runs, with json, gzip, zlib and decimal" "$PYTHON" -c 'import json, gzip, zlib, decimal'
need zstd || true
need gzip || true

# rd.py: the independent side of every check below.

# py OUT CMD...: run rd.py, results into OUT; a crash is one failure.
py() {
    vr_out=$1
    shift
    if ! "$PYTHON" "$PY/rd.py" "$@" >"$vr_out" 2>"$TMP/py.err"; then
        printf 'FAIL\trd.py %s %s failed\t%s\n' "$1" "${2##*/}" "$(tail -n 3 "$TMP/py.err" | tr '\n\t' '  ')" >>"$vr_out"
    fi
}

#-- every real file: figures, HTML and Markdown -------------------------------

files=$(ls "$K")
[ -n "$files" ] && pass "real traces found in $K" || fail "real traces found in $K"
for f in $files; do
    src=$K/$f
    db=$TMP/$f.db
    vr_run imp import "$src" --db "$db" -q
    if [ "$rc" -ne 0 ]; then
        fail "$f: import exits 0" "exit $rc: $(cat imp.err)"
        continue
    fi
    pass "$f: import exits 0"
    vr_run rep report --db "$db" --format json -o "$TMP/$f.json"
    [ "$rc" -eq 0 ] && pass "$f: JSON report exits 0" || fail "$f: JSON report exits 0" "exit $rc: $(cat rep.err)"
    py "$TMP/$f.expect" expect "$src" "$TMP/$f.ends"
    py "$TMP/cmp.tap" compare "$f" "$TMP/$f.expect" "$TMP/$f.json"
    tap_lines "$TMP/cmp.tap"

    vr_run html report --db "$db" -o "$TMP/r.html"
    [ "$rc" -eq 0 ] && pass "$f: HTML report exits 0" || fail "$f: HTML report exits 0" "exit $rc: $(cat html.err)"
    vr_run md report --db "$db" -o "$TMP/r.md"
    [ "$rc" -eq 0 ] && pass "$f: Markdown report exits 0" || fail "$f: Markdown report exits 0" "exit $rc: $(cat md.err)"
    py "$TMP/rend.tap" renders "$f" "$TMP/$f.expect" "$TMP/r.html" "$TMP/r.md"
    tap_lines "$TMP/rend.tap"

    rm -f "$db" "$TMP/r.html" "$TMP/r.md"
done

# The one-shot form (import, analyse and render in one run) on the
# smallest and the largest real trace: it runs the same stages as import
# then report, which the loop above checked on every file (running it on
# every file again cost a third of this test's time).
for f in $(ls -S "$K" | tail -n 1) $(ls -S "$K" | head -n 1); do
    rm -f "$TMP/one.html"
    vr_run one "$K/$f" -o "$TMP/one.html" -q
    if [ "$rc" -eq 0 ] && [ -s "$TMP/one.html" ] && grep -q '<svg' "$TMP/one.html"; then
        pass "$f: one-shot to HTML works"
    else
        fail "$f: one-shot to HTML works" "exit $rc: $(cat one.err)"
    fi
done
rm -f "$TMP/one.html"

#-- truncated inputs ----------------------------------------------------------

for f in hta-v100x2-rank1-2022.pt.trace.json.gz tracelens-h100-qwen1.5-0.5b.json.gz; do
    gzip -dc "$K/$f" >"$TMP/full.json"
    py "$TMP/cuts.tap" cuts "$TMP/full.json" "$TMP/$f.ends" "$TMP/cuts.json" 0.10 0.33 0.50 0.77 0.99
    tap_lines "$TMP/cuts.tap"
    i=0
    for frac in 10 33 50 77 99; do
        len=$("$PYTHON" "$PY/rd.py" field "$TMP/cuts.json" "$i" length 2>/dev/null || echo 0)
        head -c "$len" "$TMP/full.json" >"$TMP/cut.json"
        vr_run cut "$TMP/cut.json" --format json -o "$TMP/cut.report.json"
        tag="$f cut at $frac%"
        [ "$rc" -eq 0 ] && pass "$tag: exits 0" || fail "$tag: exits 0" "exit $rc: $(cat cut.err)"
        if grep -q 'truncated at byte' cut.err; then
            pass "$tag: warns \"truncated at byte\""
        else
            fail "$tag: warns \"truncated at byte\"" "stderr: $(cat cut.err)"
        fi
        py "$TMP/cut.tap" check-cut "$tag" "$TMP/cuts.json" "$TMP/cut.report.json" "$i"
        tap_lines "$TMP/cut.tap"
        i=$((i + 1))
    done
    rm -f "$TMP/full.json" "$TMP/cut.json"
done

# A gzip stream cut in the middle of its compressed bytes.
f=tracelens-h100-qwen1.5-0.5b.json.gz
size=$(wc -c <"$K/$f")
head -c $((size / 2)) "$K/$f" >"$TMP/half.json.gz"
vr_run gzcut "$TMP/half.json.gz" --format json -o "$TMP/half.report.json"
[ "$rc" -eq 0 ] && pass "$f cut in its gzip stream: exits 0" || fail "$f cut in its gzip stream: exits 0" "exit $rc: $(cat gzcut.err)"
if grep -q 'truncated at byte' gzcut.err; then
    pass "$f cut in its gzip stream: warns \"truncated at byte\""
else
    fail "$f cut in its gzip stream: warns \"truncated at byte\"" "stderr: $(cat gzcut.err)"
fi
py "$TMP/gz.tap" gzcut "$TMP/half.json.gz" "$TMP/gzcut.json"
tap_lines "$TMP/gz.tap"
py "$TMP/gz.tap" check-cut "$f cut in its gzip stream" "$TMP/gzcut.json" "$TMP/half.report.json"
tap_lines "$TMP/gz.tap"

#-- one content, every container ------------------------------------------------

f=tracelens-h100-qwen1.5-0.5b.json.gz
gzip -dc "$K/$f" >"$TMP/plain.json"
cp "$K/$f" "$TMP/packed.json.gz"
if command -v zstd >/dev/null 2>&1; then
    zstd -q -f -3 "$TMP/plain.json" -o "$TMP/packed.json.zst"
fi
vr_run c1 "$TMP/packed.json.gz" --format json -o "$TMP/c.gz.json" -q
[ "$rc" -eq 0 ] && pass "gzip input: exits 0" || fail "gzip input: exits 0" "exit $rc: $(cat c1.err)"
vr_run c2 "$TMP/plain.json" --format json -o "$TMP/c.plain.json" -q
[ "$rc" -eq 0 ] && pass "plain input: exits 0" || fail "plain input: exits 0" "exit $rc: $(cat c2.err)"
py "$TMP/same.tap" same-devices "plain vs gzip" "$TMP/c.gz.json" "$TMP/c.plain.json"
tap_lines "$TMP/same.tap"
if [ -f "$TMP/packed.json.zst" ]; then
    vr_run c3 "$TMP/packed.json.zst" --format json -o "$TMP/c.zst.json" -q
    [ "$rc" -eq 0 ] && pass "zstd input: exits 0" || fail "zstd input: exits 0" "exit $rc: $(cat c3.err)"
    py "$TMP/same.tap" same-devices "zstd vs gzip" "$TMP/c.gz.json" "$TMP/c.zst.json"
    tap_lines "$TMP/same.tap"
    comp=$("$PYTHON" "$PY/rd.py" field "$TMP/c.zst.json" sources 0 compression 2>/dev/null || true)
    [ "$comp" = '"zstd"' ] && pass "zstd input: compression is \"zstd\"" || fail "zstd input: compression is \"zstd\"" "got $comp"
else
    fail "zstd input: exits 0" "zstd CLI missing: cannot make the .zst input (CI installs zstd)"
fi
# A pipe, not a file: the reader cannot seek or stat it.
rc=0
cat "$K/$f" | "$VRAMREPORT" - --format json -o "$TMP/c.stdin.json" -q 2>stdin.err || rc=$?
[ "$rc" -eq 0 ] && pass "gzip on standard input: exits 0" || fail "gzip on standard input: exits 0" "exit $rc: $(cat stdin.err)"
py "$TMP/same.tap" same-devices "stdin vs file" "$TMP/c.gz.json" "$TMP/c.stdin.json"
tap_lines "$TMP/same.tap"
rc=0
cat "$TMP/plain.json" | "$VRAMREPORT" - --format json -o "$TMP/c.stdin2.json" -q 2>stdin.err || rc=$?
[ "$rc" -eq 0 ] && pass "plain on standard input: exits 0" || fail "plain on standard input: exits 0" "exit $rc: $(cat stdin.err)"
py "$TMP/same.tap" same-devices "plain stdin vs file" "$TMP/c.gz.json" "$TMP/c.stdin2.json"
tap_lines "$TMP/same.tap"
rm -f "$TMP/plain.json" "$TMP/packed.json.zst"

#-- importing one file twice ----------------------------------------------------

vr_run dup1 import "$K/$f" --db "$TMP/dup.db" -q
[ "$rc" -eq 0 ] && pass "first import exits 0" || fail "first import exits 0" "exit $rc: $(cat dup1.err)"
vr_run dup2 import "$K/$f" --db "$TMP/dup.db"
[ "$rc" -eq 0 ] && pass "second import of the same file exits 0" || fail "second import of the same file exits 0" "exit $rc: $(cat dup2.err)"
if grep -q 'already imported' dup2.err; then
    pass "second import says \"already imported\""
else
    fail "second import says \"already imported\"" "stderr: $(cat dup2.err)"
fi
if command -v sqlite3 >/dev/null 2>&1; then
    n=$(sqlite3 "$TMP/dup.db" 'SELECT count(*) FROM source;' 2>&1 || true)
else
    "$VRAMREPORT" report --db "$TMP/dup.db" --format json -o "$TMP/dup.json" 2>/dev/null || true
    n=$("$PYTHON" -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["sources"]))' "$TMP/dup.json" 2>&1 || true)
fi
[ "$n" = 1 ] && pass "one source after a duplicate import" || fail "one source after a duplicate import" "sources: $n"

finish
