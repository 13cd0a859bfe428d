#!/usr/bin/env bash
# tests/memstats.sh: allocator statistics. torch.cuda.memory_stats()
# JSON and memory_summary() text are read into allocator_stat under
# memory_stats()'s keys. The oracle is Python: it reads the real boxes in
# tests/data/realdata/summary/ cell by cell with its own unit table, and
# writes boxes from a JSON fixture the way PyTorch's memory_summary() does
# (current KiB/MiB layout and the old KB/MB one), so text and JSON of the
# same numbers must give the same rows. Partial copies (no top, a log's
# prefix, a re-wrapped row, a cut row), malformed numbers, several dumps,
# nested JSON, and the report (Markdown and allocator_stats[]) are checked.
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
PY=$VR_SRCDIR/tests/py/memstats

cd "$TMP"
need python3 || true

"$PYTHON" "$PY/check.py" && tap_lines results.txt || fail "check.py ran" "$(tail -5 results.txt 2>/dev/null)"

# Neither format without figures is taken for one.
printf '| Allocated memory      |\n|       from large pool |\n' >empty.txt
vr_run empty empty.txt -o empty.md
if [ "$rc" -ne 0 ] && [ "$(wc -l <empty.err)" -eq 1 ] && grep -q 'empty.txt: no memory_summary() figures' empty.err; then
    pass "a summary without figures fails in one line"
else
    fail "a summary without figures fails in one line" "rc=$rc $(cat empty.err)"
fi
printf '{"allocated_bytes.all.current": "x", "reserved_bytes.all.peak": null}' >empty.json
vr_run emptyjson empty.json -o empty.md
if [ "$rc" -ne 0 ] && grep -q 'no integer memory_stats() figures' emptyjson.err; then
    pass "a memory_stats JSON without integers fails in one line"
else
    fail "a memory_stats JSON without integers fails in one line" "rc=$rc $(cat emptyjson.err)"
fi
finish
