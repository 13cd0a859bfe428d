#!/usr/bin/env bash
# tests/ranks.sh: several ranks of one job in one report, on
# real data. The ranks' figures in the JSON report, the imbalance and
# which rank peaked first are checked against figures this script
# computes on its own from the trace files (python3's json module); the
# Markdown has the Ranks section before the devices, and the HTML one
# small chart per rank, all on one x range and one y scale.
#
# The real multi-rank trace we have is rank 1 of a 2-GPU job
# (tests/data/realdata/PROVENANCE.md: hta-v100x2-rank1-2022); rank 0 of
# that job was not published. Rank 0 here is a copy of it that says rank
# 0 and ends early, as a killed rank's trace does: cut at 17% of its bytes,
# inside its memory events, so it peaks lower and earlier than rank 1.
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
PY=$VR_SRCDIR/tests/py/ranks

K=$VR_SRCDIR/tests/data/realdata/kineto
REAL=$K/hta-v100x2-rank1-2022.pt.trace.json.gz
cd "$TMP"

need python3 || true
need gzip || true

gzip -dc "$REAL" >rank1.json
if "$PYTHON" "$PY/ranks.py" variant rank1.json rank0.json 0 0.17 2>py.err; then
    pass "rank 0: a copy of rank 1 that says rank 0 and ends at 17%"
else
    fail "rank 0: a copy of rank 1 that says rank 0 and ends at 17%" "$(cat py.err)"
fi

rc=0
"$VRAMREPORT" import rank0.json rank1.json --db ranks.db -q 2>imp.err || rc=$?
[ "$rc" -eq 0 ] && pass "import of both ranks exits 0" || fail "import of both ranks exits 0" "exit $rc: $(cat imp.err)"
for fmt in json md html; do
    rc=0
    "$VRAMREPORT" report --db ranks.db -o "ranks.$fmt" 2>rep.err || rc=$?
    [ "$rc" -eq 0 ] && pass "$fmt report exits 0" || fail "$fmt report exits 0" "exit $rc: $(cat rep.err)"
done

"$PYTHON" "$PY/ranks.py" check ranks.json ranks.md ranks.html rank0.json rank1.json \
    >check.tap 2>py.err || printf 'FAIL\tranks.py check ran\t%s\n' "$(tail -n 3 py.err | tr '\n\t' '  ')" >>check.tap
tap_lines check.tap

# One rank alone: no Ranks section, no "ranks" in the JSON.
rc=0
"$VRAMREPORT" rank1.json -o one.json -q 2>/dev/null || rc=$?
"$VRAMREPORT" rank1.json -o one.md -q 2>/dev/null || rc=$?
if [ "$rc" -eq 0 ] && ! grep -q '"ranks' one.json && ! grep -q '^## Ranks' one.md; then
    pass "one rank: no ranks in the JSON, no Ranks section"
else
    fail "one rank: no ranks in the JSON, no Ranks section" "exit $rc"
fi

finish
