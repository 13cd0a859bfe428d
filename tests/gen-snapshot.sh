#!/usr/bin/env bash
# tests/gen-snapshot.sh: the synthetic allocator snapshot that `make bench`
# imports (tests/bench/gen_snapshot.c) must not rot. On a small
# size, checked against Python, the oracle:
#   - Python's pickle.load (an Unpickler refusing every global) reads it,
#     and pickle.dumps(protocol=4) of what it read gives back the very same
#     bytes: the file is laid out exactly as pickle.dump lays out the dict
#     (frames, memo, BINGET of shared objects, batches of 1000);
#   - the generator's ground truth (entries per action, segments, blocks,
#     reserved, allocated, peak, frames, stacks) is what Python counts in
#     the loaded dict;
#   - vramreport imports it and its database holds the same figures.
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
PY=$VR_SRCDIR/tests/py/gen-snapshot

GEN=$VR_BUILDDIR/tests/bench/gen_snapshot
cd "$TMP"
need python3 || true
if [ ! -x "$GEN" ]; then
    fail "gen_snapshot is built" "$GEN is missing: make tests/bench/gen_snapshot (make check builds it)"
    finish
fi

# 2,100 entries crosses two APPENDS batches; 31,000 a memo past 65,535
# slots and a few segment_free entries.
for n in 2100 31000; do
    "$GEN" --seed 7 --entries $n >snap$n.pickle 2>gen$n.err ||
        fail "gen_snapshot --entries $n runs" "$(cat gen$n.err)"
    "$GEN" --seed 7 --entries $n 2>/dev/null | cmp -s - snap$n.pickle &&
        pass "gen_snapshot is deterministic ($n entries)" ||
        fail "gen_snapshot is deterministic ($n entries)"
    sed -n 's/^gen: //p' gen$n.err >truth$n.txt
    vr_run import$n import snap$n.pickle --db snap$n.db --quiet
    [ "$rc" = 0 ] && pass "vramreport imports the $n-entry snapshot" ||
        fail "vramreport imports the $n-entry snapshot" "$(cat import$n.err)"
    "$PYTHON" "$PY/check.py" snap$n.pickle truth$n.txt snap$n.db >check$n.tap 2>check$n.err || cat check$n.err
    [ -s check$n.tap ] || printf 'FAIL\tthe Python check ran\n' >check$n.tap
    tap_lines check$n.tap
done
finish
