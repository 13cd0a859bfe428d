#!/usr/bin/env bash
# tests/kv-cache.sh: the KV cache an inference server or a generate()
# loop keeps is a category of its own, kv_cache, and the servers' own
# start-up lines are read as grounds for what they reserved:
#   - a snapshot whose allocations carry the frames vLLM, SGLang and Hugging
#     Face transformers allocate their caches under: its peak's kv_cache
#     bytes, each allocation's category, the Markdown row and the HTML band
#     agree with what tests/py/kv-cache/snap.py reads from the stacks on
#     its own; --category-rules takes kv_cache, and a wrong name is one line
#     listing it;
#   - real vLLM and SGLang log lines (tests/data/kv-cache, PROVENANCE.md):
#     the server_memory rows are the figures tests/py/kv-cache/logs.py
#     reads from each line with its own expressions;
#   - a real trace of generate() (tests/py/kv-cache/trace.py): each decoder
#     layer's key and value are the peak's kv_cache, sized from the
#     trace's own shapes; real encoder and vision traces keep none;
#   - bad input: a server line with an impossible figure is not read, said
#     in one line naming the file and line, and the rest of the log is.
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
PY=$VR_SRCDIR/tests/py/kv-cache
DATA=$VR_SRCDIR/tests/data/kv-cache

cd "$TMP"
need python3 || true

"$PYTHON" "$PY/snap.py" "$VRAMREPORT" >snap.tap 2>&1 || true
tap_lines snap.tap
"$PYTHON" "$PY/logs.py" "$VRAMREPORT" "$DATA" >logs.tap 2>&1 || true
tap_lines logs.tap
"$PYTHON" "$PY/trace.py" "$VRAMREPORT" "$VR_SRCDIR/tests/data/realdata" >trace.tap 2>&1 || true
tap_lines trace.tap

# A figure no GPU holds (over 1 PiB) on a server line: that line's figure
# is left out, counted as malformed, warned about once; the other lines
# are read.
{
    cat "$DATA/vllm-0.8-2025-04.log"
    echo "(VllmWorkerProcess pid=9) INFO 04-12 08:21:19 [worker.py:267] model weights take 2000000.00TiB; non_torch_memory takes 0.20GiB"
} >bad.log
vr_run bad import bad.log --db bad.db
check "an impossible server figure: the log still imports" test "$rc" -eq 0
grep -q "bad.log: line 7: an inference server's memory line gives a size over 1 PiB" bad.err &&
    pass "the impossible figure is named by file and line" ||
    fail "the impossible figure is named by file and line" "$(cat bad.err)"
check "one warning line" test "$(grep -c 'inference server' bad.err)" -eq 1
check "that line's other figure is read, the impossible one is not" test \
    "$("$PYTHON" -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT group_concat(figure) FROM server_memory WHERE line = 7").fetchone()[0])' bad.db)" = non_torch
check "the rows of the six good lines are there (11)" test \
    "$("$PYTHON" -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM server_memory WHERE line < 7").fetchone()[0])' bad.db)" -eq 11

# A log of only no-figure server chatter is no job log: refused in one line.
printf '%s\n' "[2025-10-16 09:06:10 TP5] Load weight begin. avail mem=137.29 GB" \
    "Loading weights took 24.84 seconds" >chatter.log
vr_run chatter import chatter.log --db chatter.db
check "server chatter without a figure: not a recognised input (a non-zero exit)" test "$rc" -ne 0
check "said in one line" test "$(wc -l <chatter.err)" -eq 1
finish
