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
cd "$TMP"
need python3 || true

check "the training loop is written" "$PYTHON" "$VR_SRCDIR/tests/gen-scenarios.py" training one.json truth.json

"$PYTHON" - one.json many.json 150 <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
n = int(sys.argv[3])
out = []
for e in d["traceEvents"]:
    if e.get("name") != "[memory]":
        out.append(e)
        continue
    for k in range(n):
        f = json.loads(json.dumps(e))
        f["args"]["Device Id"] = k
        if f["args"].get("Addr") is not None:
            f["args"]["Addr"] += k << 40
        out.append(f)
d["traceEvents"] = out
json.dump(d, open(sys.argv[2], "w"))
PYEOF

vr_run one import one.json --db one.db -q
[ "$rc" -eq 0 ] && pass "one device: imported" || fail "one device: imported" "$(cat one.err)"
vr_run many import many.json --db many.db -q
[ "$rc" -eq 0 ] && pass "150 devices: imported" || fail "150 devices: imported" "$(cat many.err)"

"$PYTHON" - one.db many.db 150 >same.tap 2>&1 <<'PYEOF' || true
import sqlite3, sys

def result(ok, desc, detail=""):
    print(("PASS\t" + desc) if ok else ("FAIL\t" + desc + "\t" + str(detail)[:600]))

def rows(db, label):
    dev = db.execute("SELECT id FROM device WHERE label = ?", (label,)).fetchone()
    if dev is None:
        return None, None
    peak = db.execute("SELECT category, bytes, count FROM peak_category WHERE device_id = ?"
                      " ORDER BY category", dev).fetchall()
    samples = db.execute("SELECT ts_ns, category, bytes FROM category_sample"
                         " WHERE device_id = ? ORDER BY ts_ns, category", dev).fetchall()
    return peak, samples

one, many = sqlite3.connect(sys.argv[1]), sqlite3.connect(sys.argv[2])
n = int(sys.argv[3])
want_peak, want_samples = rows(one, "cuda:0")
known = [c for c, b, _ in want_peak or [] if b > 0 and c != "unknown"]
result(len(known) >= 5, "one device: the peak is of five known categories or more", want_peak)
result(len(want_samples or []) > 400, "one device: the chart has its samples", len(want_samples or []))
bad = []
for k in range(n):
    peak, samples = rows(many, "cuda:%d" % k)
    if peak != want_peak or samples != want_samples:
        bad.append("cuda:%d: %r" % (k, (peak or [])[:3]))
result(not bad, "150 devices: each device's peak_category and category_sample rows are one device's",
       "; ".join(bad[:5]))
left = many.execute("SELECT name FROM sqlite_master WHERE type = 'index'"
                    " AND tbl_name = 'allocation'").fetchall()
result(left == one.execute("SELECT name FROM sqlite_master WHERE type = 'index'"
                           " AND tbl_name = 'allocation'").fetchall(),
       "150 devices: the pass's index of allocations by device is dropped", left)
PYEOF
tap_lines same.tap

# 3,000 devices, each allocating three times and freeing once.
"$PYTHON" - >devices.json <<'PYEOF'
import json, sys
MiB, GiB = 1 << 20, 1 << 30
ev, ts = [], 0
for d in range(3000):
    alloc = 0
    for k in range(4):
        b = (100 + (d * 37) % 900) * MiB * (1 if k < 3 else -1)
        alloc += b
        ts += 1
        ev.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]",
                   "pid": 1, "tid": 1, "ts": ts,
                   "args": {"Total Reserved": 4 * GiB, "Total Allocated": alloc, "Bytes": b,
                            "Addr": (1 << 40) + d * (1 << 32) + (k % 3) * GiB,
                            "Device Id": d, "Device Type": 1}})
json.dump({"schemaVersion": 1, "traceEvents": ev}, sys.stdout)
PYEOF
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
