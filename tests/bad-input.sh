#!/usr/bin/env bash
# tests/bad-input.sh: inputs that cannot be used give exit status 1 and one
# clear line on stderr, never a crash; a database is never damaged by a
# failed run; usage errors give 2; and the small faults real traces carry
# (invalid UTF-8, raw control characters, huge integers, unknown keys,
# unescaped quotes, markup in names) are tolerated, counted and escaped.
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
PY=$VR_SRCDIR/tests/py/bad-input

K=$VR_SRCDIR/tests/data/realdata/kineto
GOOD=$K/tracelens-h100-bert-small.json.gz
cd "$TMP"

need python3 || true
check "python3 runs, with json" "$PYTHON" -c 'import json, random'
need gzip || true


no_crash() { # DESC NAME
    if crashed "$rc" "$2.err"; then
        fail "$1: no crash" "exit $rc; stderr: $(head -c 2000 "$2.err")"
    else
        pass "$1: no crash"
    fi
}

# expect_data_error DESC FILE: the one-shot form must fail cleanly.
expect_data_error() {
    vr_desc=$1
    vr_file=$2
    rm -f report.md report.md.tmp*
    vr_run bad "$vr_file" -o report.md
    no_crash "$vr_desc" bad
    [ "$rc" -eq 1 ] && pass "$vr_desc: exit status 1" || fail "$vr_desc: exit status 1" "exit $rc"
    lines=$(wc -l <bad.err | tr -d ' ')
    first=$(head -n 1 bad.err)
    if [ "$lines" = 1 ]; then
        pass "$vr_desc: exactly one line on stderr"
    else
        fail "$vr_desc: exactly one line on stderr" "$lines lines: $(head -c 1000 bad.err)"
    fi
    case $first in
    "vramreport: "*"$vr_file"*) pass "$vr_desc: the message starts \"vramreport: \" and names the file" ;;
    *) fail "$vr_desc: the message starts \"vramreport: \" and names the file" "stderr: $first" ;;
    esac
    if ls report.md report.md.tmp* >/dev/null 2>&1; then
        fail "$vr_desc: no report file is left behind" "$(ls report.md*)"
    else
        pass "$vr_desc: no report file is left behind"
    fi
}

#-- inputs that are not traces --------------------------------------------------

: >empty.json
expect_data_error "empty file" empty.json

printf 'hello world\n' >hello.txt
expect_data_error "plain text" hello.txt

printf '{"a": 1}\n' >object.json
expect_data_error "JSON object without traceEvents" object.json

printf '[1,2' >array.json
expect_data_error "cut JSON array of numbers" array.json

printf '\037\213\010\000\000\000\000\000\000\003garbage that is not deflate data at all\n' >corrupt.json.gz
expect_data_error "corrupt gzip" corrupt.json.gz

mkdir adir
expect_data_error "a directory" adir

expect_data_error "a missing file" missing.json

gzip -dc "$GOOD" | head -c 2000 >head2000.json
expect_data_error "trace cut before traceEvents begins" head2000.json

"$PYTHON" -c '
import random, sys
random.seed(1)
sys.stdout.buffer.write(bytes(random.getrandbits(8) for _ in range(4096)))' >random.bin \
    || fail "python3 wrote random.bin"
expect_data_error "random binary" random.bin

#-- hostile shapes: exit 0 or 1, never a crash ------------------------------------

"$PYTHON" -c '
n = 100000
open("deep.json", "w").write("{\"traceEvents\": [" + "[" * n + "]" * n + "]}")
open("deep-open.json", "w").write("{\"traceEvents\": [" + "[" * n)
open("deep-object.json", "w").write("{\"traceEvents\": [{\"name\": " + "{\"a\": " * n + "1" + "}" * n + "}]}")
s = "x" * (50 * 1024 * 1024)
open("bigstring.json", "w").write(
    "{\"schemaVersion\": 1, \"traceEvents\": [\n"
    " {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"" + s + "\", \"pid\": 1, \"tid\": 1, \"ts\": 100, \"dur\": 20},\n"
    " {\"ph\": \"i\", \"s\": \"t\", \"name\": \"[memory]\", \"pid\": 1, \"tid\": 1, \"ts\": 105, \"args\": {\"Total Reserved\": 2097152, \"Total Allocated\": 512, \"Bytes\": 512, \"Addr\": 1, \"Device Id\": 0, \"Device Type\": 1}}\n"
    "]}\n")
' || fail "python3 wrote the hostile inputs"
for f in deep.json deep-open.json deep-object.json bigstring.json; do
    vr_run hostile "$f" -o hostile.md -q
    no_crash "$f" hostile
    case $rc in
    0 | 1) pass "$f: exit status 0 or 1" ;;
    *) fail "$f: exit status 0 or 1" "exit $rc: $(head -c 1000 hostile.err)" ;;
    esac
done
rm -f bigstring.json deep.json deep-open.json deep-object.json

#-- the database ---------------------------------------------------------------------

printf 'this is not an SQLite database, it is a text file\n' >notdb.db
before=$(sha256sum notdb.db | cut -d' ' -f1)
vr_run notdb import "$GOOD" --db notdb.db
no_crash "--db naming a text file" notdb
[ "$rc" -eq 1 ] && pass "--db naming a text file: exit status 1" || fail "--db naming a text file: exit status 1" "exit $rc"
grep -q '^vramreport: .*notdb\.db' notdb.err && pass "--db naming a text file: says so" \
    || fail "--db naming a text file: says so" "stderr: $(cat notdb.err)"
after=$(sha256sum notdb.db | cut -d' ' -f1)
[ "$before" = "$after" ] && pass "--db naming a text file: the file is unchanged" \
    || fail "--db naming a text file: the file is unchanged" "sha256 $before -> $after"
vr_run notdb2 report --db notdb.db -o -
[ "$rc" -eq 1 ] && pass "report --db on a text file: exit status 1" || fail "report --db on a text file: exit status 1" "exit $rc"
after=$(sha256sum notdb.db | cut -d' ' -f1)
[ "$before" = "$after" ] && pass "report --db on a text file: the file is unchanged" \
    || fail "report --db on a text file: the file is unchanged"

vr_run good import "$GOOD" --db good.db -q
[ "$rc" -eq 0 ] && pass "import into a new db: exit 0" || fail "import into a new db: exit 0" "exit $rc: $(cat good.err)"
cp good.db good.before
if command -v sqlite3 >/dev/null 2>&1; then
    sqlite3 good.db .dump >dump.before 2>&1 || true
fi
vr_run failed import corrupt.json.gz --db good.db
[ "$rc" -eq 1 ] && pass "failed import into a good db: exit status 1" || fail "failed import into a good db: exit status 1" "exit $rc"
if cmp -s good.db good.before; then
    pass "failed import into a good db: the db file is unchanged"
else
    fail "failed import into a good db: the db file is unchanged"
fi
if command -v sqlite3 >/dev/null 2>&1; then
    sqlite3 good.db .dump >dump.after 2>&1 || true
    cmp -s dump.before dump.after && pass "failed import into a good db: same .dump" \
        || fail "failed import into a good db: same .dump" "$(diff dump.before dump.after | head -n 10)"
fi
vr_run after report --db good.db --format json -o after.json
[ "$rc" -eq 0 ] && pass "the db still reports after a failed import" || fail "the db still reports after a failed import" "exit $rc: $(cat after.err)"

#-- usage errors: exit status 2 ---------------------------------------------------------

usage() { # DESC ARGS...
    vr_desc=$1
    shift
    vr_run usage "$@"
    no_crash "$vr_desc" usage
    [ "$rc" -eq 2 ] && pass "$vr_desc: exit status 2" || fail "$vr_desc: exit status 2" "exit $rc: $(cat usage.err)"
    grep -q '^vramreport: ' usage.err && pass "$vr_desc: says why on stderr" || fail "$vr_desc: says why on stderr" "stderr: $(cat usage.err)"
}
usage "no arguments"
usage "--format pdf" --format pdf "$GOOD"
usage "report without --db" report
usage "import without --db" import "$GOOD"
usage "unknown option" --no-such-option "$GOOD"
usage "-o without its argument" "$GOOD" -o

#-- tolerated faults ---------------------------------------------------------------------

# One realistic small trace, with one fault spliced in.
"$PYTHON" "$PY/mk.py" || fail "python3 wrote the fault traces"

# Exact counts where the unit is clear: each fault occurs once (the control
# character case holds two raw bytes, a tab and \x01).
for kind in invalid_utf8 control_char int_overflow unknown_key repaired_quote; do
    f=fault-$kind.json
    vr_run tol "$f" --format json -o "$f.report.json"
    no_crash "$f" tol
    [ "$rc" -eq 0 ] && pass "$f: exit 0" || fail "$f: exit 0" "exit $rc: $(cat tol.err)"
    case $kind in
    control_char) want=2 ;;
    invalid_utf8) want=any ;; # per string or per byte: either is a fair unit
    *) want=1 ;;
    esac
    got=$("$PYTHON" -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(d["sources"][0]["tolerated"].get(sys.argv[2], 0))' "$f.report.json" "$kind" 2>&1 || true)
    if [ "$want" = any ]; then
        [ "$got" -ge 1 ] 2>/dev/null && pass "$f: tolerated.$kind counted ($got)" \
            || fail "$f: tolerated.$kind counted" "got $got"
    else
        [ "$got" = "$want" ] && pass "$f: tolerated.$kind == $want" \
            || fail "$f: tolerated.$kind == $want" "got $got (the fault occurs $want time(s) in the file)"
    fi
    peak=$("$PYTHON" -c '
import json, sys
d = json.load(open(sys.argv[1]))
print([(x["id"], x["peak_allocated_bytes"]) for x in d["devices"]])' "$f.report.json" 2>&1 || true)
    [ "$peak" = "[('cuda:0', 4096)]" ] && pass "$f: the memory events are still read" \
        || fail "$f: the memory events are still read" "devices: $peak"
done

# Markup in operator names.
vr_run mh markup.json -o markup.html -q
[ "$rc" -eq 0 ] && pass "markup names: HTML exit 0" || fail "markup names: HTML exit 0" "exit $rc: $(cat mh.err)"
vr_run mm markup.json -o markup.md -q
[ "$rc" -eq 0 ] && pass "markup names: Markdown exit 0" || fail "markup names: Markdown exit 0" "exit $rc: $(cat mm.err)"
if grep -q -i '<script>alert' markup.html; then
    fail "markup names: no live <script> in the HTML" "$(grep -i -m 3 '<script>alert' markup.html)"
else
    pass "markup names: no live <script> in the HTML"
fi
grep -q -F '&lt;script&gt;alert(1)&lt;/script&gt;' markup.html && pass "markup names: the name shows escaped in the HTML" \
    || fail "markup names: the name shows escaped in the HTML"
grep -q -F '<strong>bold</strong>' markup.html && fail "markup names: **bold** is not turned into <strong>" \
    || pass "markup names: **bold** is not turned into <strong>"
grep -q -F '**bold**' markup.html && pass "markup names: **bold** shows literally in the HTML" \
    || fail "markup names: **bold** shows literally in the HTML"
grep -q -F '| pipes |' markup.html && pass "markup names: \"| pipes |\" shows literally in the HTML" \
    || fail "markup names: \"| pipes |\" shows literally in the HTML"
for n in '<script>alert(1)</script>' '| pipes |' '**bold**'; do
    c=$(grep -c -F "<td>$(printf '%s' "$n" | sed 's/&/\&amp;/g; s/</\&lt;/g; s/>/\&gt;/g')</td>" markup.html || true)
    [ "$c" -ge 2 ] && pass "markup names: \"$n\" is a whole table cell in the HTML" \
        || fail "markup names: \"$n\" is a whole table cell in the HTML" "found in $c cells"
done
# Every Markdown table keeps its column count: unescaped pipes per row.
"$PYTHON" "$PY/tables.py" markup.md >tables.tap || echo "FAIL	Markdown table check ran" >>tables.tap
tap_lines tables.tap

#-- report safety ---

# Traces whose operator names own live allocations, so the names reach
# every table of the report.
"$PYTHON" "$PY/mksafe.py" || fail "python3 wrote the report-safety traces"
head -c "$(($(wc -c <malformed.json) - 20))" malformed.json >malformed-cut.json

# safe_check FILE KIND...: the output's bytes, checked by kind (see below).
safe_check() { # FILE KIND...
    "$PYTHON" "$PY/safe.py" "$@" >safe.tap 2>&1 || echo "FAIL	$1: checks ran	$(tail -n 3 safe.tap | tr '\n' ' ')" >>safe.tap
    tap_lines safe.tap
}

# (2) One huge name: every format finishes, small, the name cut; the
# database keeps it whole. The trace is imported once and each format
# reported from that database (the one-shot form on a huge name is
# bigstring.json's, above): importing 20 MiB four times cost 6 s of CPU.
vr_run hugedb import hugename.json --db huge.db -q
no_crash "20 MiB name: import --db" hugedb
[ "$rc" -eq 0 ] && pass "20 MiB name: import --db exit 0" || fail "20 MiB name: import --db exit 0" "exit $rc: $(head -c 500 hugedb.err)"
full=$("$PYTHON" -c '
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
print(c.execute("SELECT count(*) FROM name WHERE text = ?", ("HEAD-" + "\u00e9" * (10 << 20) + "-TAIL",)).fetchone()[0])' huge.db 2>&1 || true)
[ "$full" = 1 ] && pass "20 MiB name: the database holds the whole name" \
    || fail "20 MiB name: the database holds the whole name" "$full"
for fmt in md html json; do
    vr_run huge report --db huge.db -o "huge-report.$fmt" -q
    no_crash "20 MiB name, $fmt" huge
    [ "$rc" -eq 0 ] && pass "20 MiB name, $fmt: exit 0" || fail "20 MiB name, $fmt: exit 0" "exit $rc: $(head -c 500 huge.err)"
    safe_check "huge-report.$fmt" small cut
done
rm -f hugename.json huge.db

# (7) Controls and bidi characters in names: visible escapes in Markdown
# (stdout too) and HTML, JSON escapes in JSON.
for out in ctl-report.md ctl-report.html ctl-report.json; do
    vr_run ctl controls.json -o "$out" -q
    [ "$rc" -eq 0 ] && pass "control names, $out: exit 0" || fail "control names, $out: exit 0" "exit $rc: $(cat ctl.err)"
done
vr_run ctl controls.json -o - -q
cp ctl.out ctl-stdout.md
safe_check ctl-report.md nocontrols visible
safe_check ctl-stdout.md nocontrols visible
safe_check ctl-report.html nocontrols visible
safe_check ctl-report.json nocontrols json-controls

# (9b) A file name that is not UTF-8: every format stays valid UTF-8.
badname=$(printf 'bad\377name.json')
cp clean.json "$badname"
vr_run bn "$badname" --format json -o badname-report.json -q
[ "$rc" -eq 0 ] && pass "non-UTF-8 file name: JSON exit 0" || fail "non-UTF-8 file name: JSON exit 0" "exit $rc: $(cat bn.err)"
safe_check badname-report.json json-path
vr_run bn "$badname" -o badname-report.md -q
safe_check badname-report.md md-path
vr_run bn "$badname" -o badname-report.html -q
safe_check badname-report.html html-path

# (8) Data dropped: the Inputs table does not say "complete", a note says what.
# (fault-*.json are the traces of the tolerated-faults section above.)
inputs_row() { # REPORT FILE: the Inputs table's row for FILE
    grep -F "| $2 |" "$1" | head -n 1
}
expect_notes() { # DESC FILE CELL NOTE: the row's Notes cell and the note
    vr_run notes "$2" -o "$2.md" -q
    [ "$rc" -eq 0 ] && pass "$1: exit 0" || fail "$1: exit 0" "exit $rc: $(cat notes.err)"
    shown=$(printf '%s' "$2" | sed 's/_/\\_/g') # as the Markdown escapes it
    row=$(inputs_row "$2.md" "$shown")
    case $row in
    *"| $3 |") pass "$1: the Notes cell says \"$3\"" ;;
    *) fail "$1: the Notes cell says \"$3\"" "row: $row" ;;
    esac
    if [ -n "$4" ]; then
        grep -F "> **Note:** $shown: " "$2.md" | grep -q -F "$4" \
            && pass "$1: a note says \"$4\"" \
            || fail "$1: a note says \"$4\"" "$(grep -F 'Note' "$2.md" || echo 'no note')"
    elif grep -q -F "> **Note:**" "$2.md"; then
        fail "$1: no note" "$(grep -F 'Note' "$2.md")"
    else
        pass "$1: no note"
    fi
}
expect_notes "clean trace" clean.json "complete" ""
expect_notes "one malformed record" malformed.json "some data skipped (see notes)" "malformed"
vr_run mcut malformed-cut.json --format json -o mcut.json -q
cut_at=$("$PYTHON" -c 'import json,sys; print(json.load(open(sys.argv[1]))["sources"][0]["truncated_at_byte"])' mcut.json 2>&1 || true)
expect_notes "cut, with a malformed record" malformed-cut.json \
    "**cut short** at byte $cut_at, some data skipped (see notes)" "malformed"
expect_notes "a clamped integer" fault-int_overflow.json "some data skipped (see notes)" "64 bits"
expect_notes "invalid UTF-8 repaired" fault-invalid_utf8.json "complete" "UTF-8"
vr_run mj malformed.json --format json -o malformed.out.json -q
shape=$("$PYTHON" -c '
import json, sys
s = json.load(open(sys.argv[1]))["sources"][0]
print(s["tolerated"].get("malformed_event"), "notes" in s, "complete" in s)' malformed.out.json 2>&1 || true)
[ "$shape" = "1 False False" ] && pass "malformed record: the JSON counts it, its shape unchanged" \
    || fail "malformed record: the JSON counts it, its shape unchanged" "$shape"

finish
