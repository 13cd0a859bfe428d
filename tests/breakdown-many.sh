#!/usr/bin/env bash
# tests/breakdown-many.sh: where the memory went, on many devices. The
# breakdown pass holds the points of 64 devices at most and reads a job
# of more a group at a time; its figures must be those of each device
# alone, and its memory must not grow with the devices.
#   - a training loop whose categories are known (gen-scenarios.py), its
#     memory events copied onto 150 devices (three groups: 64, 64, 22):
#     every device's peak_category and category_sample rows are those of
#     the loop traced on one device;
#   - 3,000 devices of four events each: the import's peak resident size
#     stays under 128 MiB (it held 74 KiB a device: 250 MiB).
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
PY=$VR_SRCDIR/tests/py/breakdown-many
cd "$TMP"
need python3 || true

check "the training loop is written" "$PYTHON" "$VR_SRCDIR/tests/gen-scenarios.py" training one.json truth.json

"$PYTHON" "$PY/gen_many.py" one.json many.json 150

vr_run one import one.json --db one.db -q
[ "$rc" -eq 0 ] && pass "one device: imported" || fail "one device: imported" "$(cat one.err)"
vr_run many import many.json --db many.db -q
[ "$rc" -eq 0 ] && pass "150 devices: imported" || fail "150 devices: imported" "$(cat many.err)"

"$PYTHON" "$PY/same.py" one.db many.db 150 >same.tap 2>&1 || true
tap_lines same.tap

# 3,000 devices, each allocating three times and freeing once.
"$PYTHON" "$PY/gen_devices.py" >devices.json
# A sanitizer's quarantine keeps what is freed (256 MiB by default):
# kept small, the peak measures what is held.
peak=$(ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=1 "$PYTHON" -c '
import resource, subprocess, sys
r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=open("devices.err", "w")).returncode
print(r, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)' \
    "$VRAMREPORT" import devices.json --db devices.db -q 2>&1)
rc=${peak%% *}
mib=${peak#* }
if [ "$rc" != 0 ] || crashed "$rc" devices.err; then
    fail "3,000 devices: imported" "exit $rc: $(head -c 300 devices.err)"
else
    pass "3,000 devices: imported"
    n=$("$PYTHON" -c 'import sqlite3; print(sqlite3.connect("devices.db").execute(
        "SELECT count(DISTINCT device_id) FROM peak_category").fetchone()[0])')
    [ "$n" = 3000 ] && pass "3,000 devices: each has its breakdown at the peak" \
        || fail "3,000 devices: each has its breakdown at the peak" "$n devices"
    [ "$mib" -lt 128 ] && pass "3,000 devices: peak memory ${mib} MiB" \
        || fail "3,000 devices: peak memory under 128 MiB" "$mib MiB"
fi

finish
