#!/usr/bin/env bash
# tests/inputs.sh: inputs of every kind. The real files of the
# formats vramreport recognises but does not read yet are named for what
# they are, alone and in a folder; a folder mixing real traces of two
# ranks, a truncated trace, unrelated files and a broken one gives a
# report of what could be read, lists the rest, and exits 3.
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
PY=$VR_SRCDIR/tests/py/inputs

REAL=$VR_SRCDIR/tests/data/realdata
cd "$TMP"
need python3 || true

# (Every format the registry recognises is read; each real
# file alone is imported by its reader's test: memstats.sh, nvsmi.sh,
# nvsmi-q.sh, joblog.sh, snapshots*.sh, realdata.sh.)

#-- a job's folder ---------------------------------------------------------------------

mkdir -p run/rank1 run/snapshots run/nvsmi run/misc
cp "$REAL"/kineto/hta-v100x2-rank1-2022.pt.trace.json.gz run/rank1/trace.json.gz
cp "$REAL"/kineto/tracelens-h100-bert-small.json.gz run/single.json.gz
gzip -dc "$REAL"/kineto/tracelens-mi300x-bert-small.json.gz | head -c 400000 >run/cut.json
cp "$REAL"/snapshot/cs336-silmont-segments.pickle run/snapshots/
cp "$REAL"/nvsmi/telegraf-tesla-t4.xml run/nvsmi/
printf '{"lr": 0.001}\n' >run/misc/config.json
printf 'PK\003\004checkpoint\n' >run/misc/model.pt
printf '\037\213\010\000\000\000\000\000\000\003not deflate data\n' >run/rank1/broken.json.gz

vr_run folder run --format json -o folder.json
[ "$rc" = 3 ] && pass "folder with a broken file: exit 3 (report written, an input failed)" \
    || fail "folder with a broken file: exit 3 (report written, an input failed)" "exit $rc: $(cat folder.err)"
grep -q '^vramreport: run/rank1/broken.json.gz: corrupt gzip data' folder.err \
    && pass "folder: the broken file is said on stderr" || fail "folder: the broken file is said on stderr" "$(cat folder.err)"
for skipped in "run/misc/config.json: skipped: JSON, but not a format vramreport reads" \
    "run/misc/model.pt: skipped: a zip archive (a torch.save checkpoint?)"; do
    grep -q -F "vramreport: $skipped" folder.err && pass "folder: said \"$skipped\"" \
        || fail "folder: said \"$skipped\"" "$(cat folder.err)"
done
grep -q '^vramreport: warning: run/cut.json: truncated at byte' folder.err \
    && pass "folder: the cut trace is imported with a warning" || fail "folder: the cut trace is imported with a warning" "$(cat folder.err)"
got=$(json_get folder.json 'sorted(s["path"] for s in d["sources"])')
[ "$got" = "['run/cut.json', 'run/nvsmi/telegraf-tesla-t4.xml', 'run/rank1/trace.json.gz', 'run/single.json.gz', 'run/snapshots/cs336-silmont-segments.pickle']" ] \
    && pass "folder: the three traces, the snapshot and the nvidia-smi log are the sources" \
    || fail "folder: the three traces, the snapshot and the nvidia-smi log are the sources" "$got"
got=$(json_get folder.json '[(u["path"], u["outcome"]) for u in d["unused_inputs"]]')
want="[('run/misc/config.json', 'skipped'), ('run/misc/model.pt', 'skipped'), ('run/rank1/broken.json.gz', 'failed')]"
[ "$got" = "$want" ] && pass "folder: every input not used is listed, in name order" \
    || fail "folder: every input not used is listed, in name order" "got $got"

# Each trace's peak is what it is alone (computed independently from the
# file: the largest Total Allocated of its GPU memory events).
"$PYTHON" "$PY/rank1_peak.py" "$REAL/kineto/hta-v100x2-rank1-2022.pt.trace.json.gz" >rank1.peak || true
got=$(json_get folder.json '[x["peak_allocated_bytes"] for x in d["devices"] if x.get("rank") == 1]')
[ "$got" = "[$(cat rank1.peak)]" ] && pass "folder: rank 1's peak is its trace's largest Total Allocated ($(cat rank1.peak))" \
    || fail "folder: rank 1's peak is its trace's largest Total Allocated" "got $got, want $(cat rank1.peak)"

# The same inputs named one by one give the same sources and peaks.
vr_run files run/rank1/trace.json.gz run/single.json.gz run/cut.json \
    run/snapshots/cs336-silmont-segments.pickle --format json -o files.json
[ "$rc" = 0 ] && pass "the traces named one by one: exit 0" || fail "the traces named one by one: exit 0" "exit $rc: $(cat files.err)"
a=$(json_get folder.json 'sorted((x["id"], x.get("rank"), x["peak_allocated_bytes"]) for x in d["devices"])')
b=$(json_get files.json 'sorted((x["id"], x.get("rank"), x["peak_allocated_bytes"]) for x in d["devices"])')
[ "$a" = "$b" ] && pass "folder and files: the same devices and peaks" || fail "folder and files: the same devices and peaks" "$a vs $b"

# Markdown lists what was not used.
vr_run md run -o folder.md -q
grep -q -F '| run/misc/model.pt | skipped: a zip archive (a torch.save checkpoint?) |' folder.md \
    && pass "the Markdown report lists a skipped file" || fail "the Markdown report lists a skipped file" "$(grep -A8 'Not used' folder.md)"
grep -q -F '| run/rank1/broken.json.gz | failed: corrupt gzip data' folder.md \
    && pass "the Markdown report lists the failed file" || fail "the Markdown report lists the failed file"

# `import` of the same folder: the failure leaves no trace in the database.
vr_run imp import run --db run.db -q
[ "$rc" = 3 ] && pass "import of the folder: exit 3" || fail "import of the folder: exit 3" "exit $rc"
n=$("$PYTHON" -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("select count(*) from input_issue").fetchone()[0])' run.db 2>&1 || true)
[ "$n" = 0 ] && pass "import: no input_issue rows (the database is as the imports left it)" \
    || fail "import: no input_issue rows" "$n"

finish
