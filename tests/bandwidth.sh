#!/usr/bin/env bash
# tests/bandwidth.sh: bandwidth or capacity. Series of
# nvidia-smi CSV and gpustat readings are generated for each verdict
# (capacity-bound by memory near full, capacity-bound by an OOM in a job
# log, starved, fine, unknown, and the edges of each threshold); an oracle
# written here from docs/bandwidth.md's rules computes each GPU's verdict
# and figures from the series it wrote, and bandwidth_or_capacity[] must
# say the same. Then: the spec (memory type, peak bandwidth) matched on the
# real device names of tests/data/realdata (nvidia-smi captures, traces),
# against a table of datasheet figures kept here; a generated Kineto trace
# and a real one, whose copies' achieved throughput Python computes from
# the trace itself; the report's section, escaped.
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"

REAL=$VR_SRCDIR/tests/data/realdata
cd "$TMP"
need python3 || true
need sqlite3 || true

cat >gen.py <<'PYEOF'
"""Writes the scenarios: NAME.csv (nvidia-smi --query-gpu CSV) and
NAME.gpustat (gpustat --watch text) of the same readings, and
expect.json: per scenario, per GPU index, the verdict and figures that
docs/bandwidth.md's rules give."""
import json

MIB = 1 << 20
TOTAL = 81920  # MiB: an A100-SXM4-80GB
NAME = "NVIDIA A100-SXM4-80GB"


def full(n):      # 95% of the GPU
    return [(78000, 95)] * n


def series(*parts):
    out = []
    for p in parts:
        out += p
    return out


idle = [(3, 0)]  # before the job: a few MiB, 0%: not the job's
scenarios = {
    # Memory near full in 18 of 20 readings, utilisation high.
    "capacity-full": {0: series([(30000, 90)] * 2, full(18))},
    # Exactly a tenth full (2 of 20): capacity-bound (>= 10%).
    "edge-tenth": {0: series([(50000, 95)] * 18, full(2))},
    # One of 11 full (9.1%): not; utilisation high: fine.
    "edge-under-tenth": {0: series([(50000, 95)] * 10, full(1))},
    # Exactly 90% used (73728 of 81920 MiB) is full.
    "edge-ninety": {0: series([(73728, 95)] * 5, [(73727, 95)] * 5)},
    # Low utilisation with room: starved (median 20).
    "starved": {0: [(30000, u) for u in (0, 10, 95, 5, 60, 0, 30, 100, 20, 40, 20)]},
    # Median exactly 70: fine (starved is under 70).
    "edge-seventy": {0: [(30000, u) for u in (50, 60, 70, 80, 90)]},
    # Median 69.5 (an even count): starved.
    "edge-under-seventy": {0: [(30000, u) for u in (50, 69, 70, 90)]},
    # High utilisation, room; idle readings before the job (which alone
    # would make the median 0) are not the job's.
    "fine": {0: series(idle * 7, [(60000, u) for u in (88, 92, 97, 100, 95, 99)])},
    # Two GPUs, both fine by their readings; the job log's OOM names GPU 1.
    "oom": {0: [(40000, 97)] * 6, 1: [(40000, 96)] * 6},
}
ooms = {"oom": {1: 1}}


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def judge(readings, n_ooms):
    floor = min(1024, TOTAL // 10)  # MiB: 1 GiB, or a tenth of the GPU
    job = [(u, p) for u, p in readings if u >= floor]
    full_n = sum(1 for u, _ in job if u * 10 >= TOTAL * 9)
    share = full_n / len(job) if job else None
    utils = [p for _, p in job if p is not None]
    med = median(utils) if utils else None
    if n_ooms or (share is not None and share >= 0.10):
        verdict = "capacity-bound"
    elif med is None:
        verdict = "unknown"
    elif med < 70:
        verdict = "starved"
    else:
        verdict = "fine"
    return {"verdict": verdict, "readings": len(job), "full": full_n,
            "share": round(share, 4) if share is not None else None,
            "median": float(med) if med is not None else None, "ooms": n_ooms}


def write_csv(name, gpus, util=True):
    with open(name + ".csv", "w") as f:
        cols = "timestamp, name, index, memory.total [MiB], memory.used [MiB]"
        f.write(cols + (", utilization.gpu [%]" if util else "") + "\n")
        n = max(len(s) for s in gpus.values())
        for i in range(n):
            for idx, s in sorted(gpus.items()):
                if i < len(s):
                    u, p = s[i]
                    row = "2026/11/30 09:%02d:%02d.000, %s, %d, %d MiB, %d MiB" % (
                        15 + i // 60, i % 60, NAME, idx, TOTAL, u)
                    f.write(row + (", %d %%" % p if util else "") + "\n")


def write_gpustat(name, gpus):
    with open(name + ".gpustat", "w") as f:
        n = max(len(s) for s in gpus.values())
        for i in range(n):
            f.write("dgx-a100-03              Mon Nov 30 09:%02d:%02d 2026  535.104.05\n"
                    % (15 + i // 60, i % 60))
            for idx, s in sorted(gpus.items()):
                if i < len(s):
                    u, p = s[i]
                    f.write("[%d] %s | 40\u00b0C, %3d %% | %5d / %d MB | bob:python/12345(%dM)\n"
                            % (idx, NAME, p, u, TOTAL, u))


expect = {}
for name, gpus in scenarios.items():
    write_csv(name, gpus)
    write_gpustat(name, gpus)
    expect[name] = {str(i): judge(s, ooms.get(name, {}).get(i, 0)) for i, s in gpus.items()}
# No utilisation column, memory at half: unknown.
write_csv("unknown", {0: [(40000, None)] * 5}, util=False)
expect["unknown"] = {"0": {"verdict": "unknown", "readings": 5, "full": 0, "share": 0.0,
                           "median": None, "ooms": 0}}
with open("oom.log", "w") as f:
    f.write("epoch 3 step 120\n"
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a "
            "total capacity of 79.15 GiB of which 1.02 GiB is free. Including non-PyTorch memory, "
            "this process has 78.12 GiB memory in use. Of the allocated memory 75.00 GiB is "
            "allocated by PyTorch, and 1.50 GiB is reserved by PyTorch but unallocated.\n")
json.dump(expect, open("expect.json", "w"), sort_keys=True)
PYEOF
"$PYTHON" gen.py

# bandwidth_or_capacity[] of a report, per GPU index, in the oracle's shape.
cat >got.py <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
out = {}
for b in d["bandwidth_or_capacity"]:
    if b["gpu"] is None:
        continue
    share = b["memory_full_share"]
    out[b["gpu"].split()[1]] = {
        "verdict": b["verdict"], "readings": b["readings"], "full": b["memory_full_readings"],
        "share": round(float(share), 4) if share is not None else None,
        "median": float(b["util_median_pct"]) if b["util_median_pct"] is not None else None,
        "ooms": b["ooms"]}
print(json.dumps(out, sort_keys=True))
PYEOF

want_of() {
    "$PYTHON" -c 'import json, sys; print(json.dumps(json.load(open("expect.json"))[sys.argv[1]], sort_keys=True))' "$1"
}

#-- every verdict, from nvidia-smi and from gpustat ---------------------------------------

for name in capacity-full edge-tenth edge-under-tenth edge-ninety starved edge-seventy \
    edge-under-seventy fine oom unknown; do
    want=$(want_of "$name")
    for fmt in csv gpustat; do
        [ -f "$name.$fmt" ] || continue
        extra=
        [ "$name" = oom ] && extra=oom.log
        rm -f "$name-$fmt.db"
        vr_run "imp-$name-$fmt" import "$name.$fmt" $extra --db "$name-$fmt.db" -q
        vr_run "rep-$name-$fmt" report --db "$name-$fmt.db" --format json -o "$name-$fmt.json" -q
        if [ "$rc" != 0 ]; then
            fail "$name.$fmt: reported" "$(cat "imp-$name-$fmt.err" "rep-$name-$fmt.err")"
            continue
        fi
        got=$("$PYTHON" got.py "$name-$fmt.json")
        [ "$got" = "$want" ] && pass "$name.$fmt: $(echo "$want" | "$PYTHON" -c 'import json,sys; print(", ".join("GPU %s %s" % (k, v["verdict"]) for k, v in sorted(json.load(sys.stdin).items())))')" ||
            fail "$name.$fmt: verdict and figures" "got  $got" "want $want"
    done
done

# Every GPU of these files is an A100-SXM4-80GB: HBM2e, 2039 GB/s.
got=$(json_get oom-gpustat.json '[(b["spec"], b["memory_type"], b["bandwidth_bytes_per_s"], b["name"]) for b in d["bandwidth_or_capacity"]]')
want="[('A100-80GB', 'HBM2e', 2039000000000, 'NVIDIA A100-SXM4-80GB'), ('A100-80GB', 'HBM2e', 2039000000000, 'NVIDIA A100-SXM4-80GB')]"
[ "$got" = "$want" ] && pass "gpustat's A100-SXM4-80GB is the table's A100-80GB, HBM2e, 2.039 TB/s" ||
    fail "A100-SXM4-80GB's spec" "got  $got" "want $want"
got=$(json_get oom-csv.json '[b["reason"] for b in d["bandwidth_or_capacity"]]')
case $got in
*"1 out-of-memory error"*"median utilisation 97%"*) fail "oom: the reasons" "$got" ;;
*"median utilisation 97%"*"1 out-of-memory error"*) pass "oom: GPU 0's reason cites its median, GPU 1's the error" ;;
*) fail "oom: the reasons" "$got" ;;
esac

# An OOM a day after the readings is not theirs (the minute's window).
sed 's/^torch/2026-12-01 09:15:30 torch/; s/GPU 1 has/GPU 0 has/' oom.log >late.log
vr_run late import oom.csv late.log --db late.db -q
vr_run late-rep report --db late.db --format json -o late.json -q
got=$(sqlite3 late.db "SELECT count(*) FROM oom_event WHERE ts_ns IS NOT NULL"):$(json_get late.json '[b["ooms"] for b in d["bandwidth_or_capacity"]]')
[ "$got" = "1:[0, 0]" ] && pass "an OOM a day after the readings counts for no GPU" ||
    fail "a late OOM" "got $got (timed OOMs:ooms per GPU)"

#-- the spec on real device names ---------------------------------------------------------

# The datasheets' figures, kept here apart from src/estimate/estimate.c.
cat >specs.py <<'PYEOF'
SPECS = {  # reported name -> (entry, memory type, bytes/s)
    "NVIDIA H100 80GB HBM3": ("H100-80GB", "HBM3", 3350 * 10**9),
    "NVIDIA A100-SXM4-80GB": ("A100-80GB", "HBM2e", 2039 * 10**9),
    "Tesla T4": ("T4", "GDDR6", 320 * 10**9),
    "NVIDIA GeForce RTX 3090": ("RTX-3090", "GDDR6X", 936 * 10**9),
    "Tesla V100-SXM2-32GB": ("V100-32GB", "HBM2", 900 * 10**9),
    "Tesla V100-DGXS-32GB": ("V100-32GB", "HBM2", 900 * 10**9),
}
PYEOF
for f in nvsmi/exporter-capture-h100-80gb.txt nvsmi/telegraf-a100-sxm4-v12.xml \
    nvsmi/telegraf-tesla-t4.xml nvsmi/telegraf-rtx-3090-v12.xml nvsmi/exporter-capture-rtx4080s.txt \
    nvsmi/telegraf-dual_a5000-v13.xml kineto/hta-v100x2-rank1-2022.pt.trace.json.gz \
    kineto/tbplugin-v100-resnet50-2021.pt.trace.json.gz; do
    b=${f##*/}
    rm -f "real-$b.db"
    vr_run "real-$b" import "$REAL/$f" --db "real-$b.db" -q
    vr_run "real-rep-$b" report --db "real-$b.db" --format json -o "real-$b.json" -q
    got=$(json_get "real-$b.json" 'sorted(set((b["name"], b["spec"], b["memory_type"], b["bandwidth_bytes_per_s"]) for b in d["bandwidth_or_capacity"]))')
    # The names as the file has them, read by Python; their spec from specs.py.
    want=$("$PYTHON" - "$REAL/$f" <<'PYEOF'
import gzip, json, re, sys
from specs import SPECS
path = sys.argv[1]
if path.endswith(".gz"):
    names = [p["name"] for p in json.load(gzip.open(path))["deviceProperties"]][:1]
    if "hta-v100x2" in path:  # rank 1's events are on device 1 (both are the same model)
        names = [json.load(gzip.open(path))["deviceProperties"][1]["name"]]
else:
    text = open(path, encoding="utf-8", errors="replace").read()
    names = re.findall(r"<product_name>([^<]+)</product_name>", text) or \
        re.findall(r"^\s*Product Name\s*:\s*(.+?)\s*$", text, re.M)
print(sorted(set((n,) + (SPECS.get(n) or (None, None, None)) for n in names)))
PYEOF
)
    [ -n "$got" ] && [ "$got" = "$want" ] && pass "$b: $got" || fail "$b: the spec" "got  $got" "want $want"
done

#-- a generated trace: copies and memsets against the peak --------------------------------

cat >gentrace.py <<'PYEOF'
"""A trace of an A100-SXM4-80GB with memcpy/memset on two streams, some
overlapping, host transfers, a copy of another device, and a copy without
bytes."""
import json
ev = [{"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 10, "tid": 10,
       "ts": 100, "args": {"Total Reserved": 2097152, "Total Allocated": 4096, "Bytes": 4096,
                           "Addr": 140000000000000, "Device Id": 0, "Device Type": 1}}]
def op(cat, name, ts, dur, nbytes, stream=7, device=0):
    args = {"device": device, "stream": stream}
    if nbytes is not None:
        args["bytes"] = nbytes
    ev.append({"ph": "X", "cat": cat, "name": name, "pid": 0, "tid": stream, "ts": ts,
               "dur": dur, "args": args})
op("gpu_memcpy", "Memcpy DtoD (Device -> Device)", 1000, 100, 150 * 10**6)
op("gpu_memcpy", "Memcpy DtoD (Device -> Device)", 1050, 100, 120 * 10**6, stream=8)  # overlaps
op("gpu_memset", "Memset (Device)", 1300, 20.5, 30 * 10**6)
op("gpu_memset", "Memset (Device)", 1400, 2, 4 * 10**6)  # 2 us: too short to be the best
op("gpu_memcpy", "Memcpy HtoD (Pinned -> Device)", 2000, 400, 10 * 10**6)
op("gpu_memcpy", "Memcpy DtoH (Device -> Pageable)", 2500, 300, 5 * 10**6)
op("gpu_memcpy", "Memcpy DtoD (Device -> Device)", 3000, 50, None)  # no bytes
op("gpu_memcpy", "Memcpy DtoD (Device -> Device)", 3100, 50, 10**9, device=3)  # no such device here
json.dump({"schemaVersion": 1,
           "deviceProperties": [{"id": 0, "name": "NVIDIA A100-SXM4-80GB",
                                 "totalGlobalMem": 85899345920}],
           "traceEvents": ev}, open("copies.json", "w"))
PYEOF
"$PYTHON" gentrace.py

# Throughput from a trace, computed independently: the device's
# copies/memsets with bytes, the union of their intervals, the fastest of
# those lasting 10 us or more. Times in ns as the trace's microseconds
# rounded.
cat >copies.py <<'PYEOF'
import gzip, json, sys
path, device, peak = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
d = json.load(gzip.open(path) if path.endswith(".gz") else open(path))
groups = {True: [], False: []}
for e in d["traceEvents"]:
    a = e.get("args", {})
    if e.get("cat") not in ("gpu_memcpy", "gpu_memset") or a.get("device") != device:
        continue
    b, ts, dur = a.get("bytes", 0), round(e["ts"] * 1000), round(e["dur"] * 1000)
    if b > 0 and dur > 0:
        host = any(k in e["name"] for k in ("HtoD", "DtoH", "HtoH"))
        groups[host].append((ts, dur, b, e["name"]))
def busy(ops):
    total, end, start = 0, None, None
    for ts, dur, _, _ in sorted(ops):
        if end is None or ts > end:
            if end is not None:
                total += end - start
            start, end = ts, ts + dur
        else:
            end = max(end, ts + dur)
    return total + (end - start if end is not None else 0)
on = groups[False]
nbytes, t = sum(o[2] for o in on), busy(on)
rate = nbytes * 1e9 / t
long = [o for o in on if o[1] >= 10000]
best = max(long, key=lambda o: o[2] / o[1]) if long else None
hb, ht = sum(o[2] for o in groups[True]), busy(groups[True])
print(json.dumps({"ops": len(on), "bytes": nbytes, "busy": t, "rate": round(rate),
                  "share": round(rate / peak, 4),
                  "best": [best[3], best[2], best[1], round(best[2] * 1e9 / best[1]),
                           round(best[2] * 1e9 / best[1] / peak, 4)] if best else None,
                  "host": [len(groups[True]), hb, ht, round(hb * 1e9 / ht)]
                          if groups[True] else [0, None, None, None]},
                 sort_keys=True))
PYEOF
cat >gotcopies.py <<'PYEOF'
import json, sys
b = [x for x in json.load(open(sys.argv[1]))["bandwidth_or_capacity"] if x["copy_ops"]][0]
print(json.dumps({"ops": b["copy_ops"], "bytes": b["copy_bytes"], "busy": b["copy_busy_ns"],
                  "rate": b["achieved_copy_bytes_per_s"], "share": b["achieved_copy_share"],
                  "best": [b["best_copy_name"], b["best_copy_bytes"], b["best_copy_ns"],
                           b["best_copy_bytes_per_s"], b["best_copy_share"]]
                          if b["best_copy_name"] else None,
                  "host": [b["host_copy_ops"], b["host_copy_bytes"], b["host_copy_busy_ns"],
                           b["host_copy_bytes_per_s"]]}, sort_keys=True))
PYEOF
vr_run copies import copies.json --db copies.db -q
vr_run copies-rep report --db copies.db --format json -o copies-report.json -q
want=$("$PYTHON" copies.py copies.json 0 2039000000000)
got=$("$PYTHON" gotcopies.py copies-report.json)
[ "$got" = "$want" ] && pass "generated trace: copy throughput as computed from the trace $got" ||
    fail "generated trace: copy throughput" "got  $got" "want $want"

# Twelve devices in one trace, their copies interleaved in time: each
# device's figures are its own.
"$PYTHON" - <<'PYEOF'
import json
ev, props = [], []
for dev in range(12):
    props.append({"id": dev, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85520809984})
    ev.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 10,
               "tid": 10, "ts": 100, "args": {"Total Reserved": 2097152, "Total Allocated": 4096,
                                             "Bytes": 4096, "Addr": 1 + dev, "Device Id": dev,
                                             "Device Type": 1}})
for k in range(3):
    for dev in range(12):
        for host in (0, 1):
            ev.append({"ph": "X", "cat": "gpu_memcpy", "pid": 0, "tid": 7 + k % 2,
                       "name": "Memcpy HtoD (Pinned -> Device)" if host else "Memcpy DtoD (Device -> Device)",
                       "ts": 1000 + 30 * k + dev + 500 * host, "dur": 40 + dev,
                       "args": {"device": dev, "stream": 7 + k % 2, "bytes": (dev + 1) * 10**6}})
json.dump({"schemaVersion": 1, "deviceProperties": props, "traceEvents": ev}, open("many.json", "w"))
PYEOF
vr_run many import many.json --db many.db -q
vr_run many-rep report --db many.db --format json -o many-report.json -q
got=$("$PYTHON" - <<'PYEOF'
import json
d = json.load(open("many-report.json"))
print(sorted((b["device"], b["copy_bytes"], b["copy_busy_ns"], b["host_copy_bytes"], b["host_copy_busy_ns"])
             for b in d["bandwidth_or_capacity"]))
PYEOF
)
want=$(for dev in 0 1 2 3 4 5 6 7 8 9 10 11; do
    "$PYTHON" copies.py many.json "$dev" 3350000000000 | "$PYTHON" -c 'import json, sys
d = json.load(sys.stdin); print("%s|%d|%d|%d|%d" % (sys.argv[1], d["bytes"], d["busy"], d["host"][1], d["host"][2]))' "$dev"
done | "$PYTHON" -c 'import sys
rows = [l.split("|") for l in sys.stdin.read().split()]
print(sorted(("cuda:%s" % r[0], int(r[1]), int(r[2]), int(r[3]), int(r[4])) for r in rows))')
[ "$got" = "$want" ] && pass "twelve devices' copies, interleaved: each device's bytes and busy time its own" ||
    fail "twelve devices' copies" "got  $got" "want $want"

# A real trace: rank 1 of two V100s (its copies are on device 1).
want=$("$PYTHON" copies.py "$REAL/kineto/hta-v100x2-rank1-2022.pt.trace.json.gz" 1 900000000000)
got=$("$PYTHON" gotcopies.py real-hta-v100x2-rank1-2022.pt.trace.json.gz.json)
[ "$got" = "$want" ] && pass "hta-v100x2 rank 1: copy throughput as computed from the trace" ||
    fail "hta-v100x2: copy throughput" "got  $got" "want $want"

#-- the report's section ------------------------------------------------------------------

# A GPU name with Markdown and HTML in it is shown as text.
sed 's/NVIDIA A100-SXM4-80GB/<img src=x onerror=alert(1)> *A100* | [x](javascript:y)/' starved.csv >evil.csv
vr_run evil import evil.csv --db evil.db -q
vr_run evil-md report --db evil.db -o evil.md -q
vr_run evil-html report --db evil.db --format html -o evil.html -q
grep -q '^## Bandwidth or capacity' evil.md && grep -q '\*\*starved\*\*' evil.md &&
    pass "report: a section 'Bandwidth or capacity' with the verdict" ||
    fail "report: the section" "$(sed -n '/Bandwidth/,$p' evil.md | head -20)"
row=$(grep -c '^| GPU 0 of evil.csv' evil.md || true)
! grep -q '<img' evil.html && ! grep -q 'href="javascript' evil.html && [ "$row" = 1 ] &&
    pass "report: the name's markup is escaped (HTML and the table row intact)" ||
    fail "report: escaping" "$(grep -n 'img\|javascript' evil.html | head -5)" "$(grep 'GPU 0 of' evil.md)"
cells=$("$PYTHON" - <<'PYEOF'
import re
h = open("evil.html", encoding="utf-8").read()
seg = h[h.find("Bandwidth or capacity</h2>"):]
rows = re.findall(r"<tr>(.*?)</tr>", seg[:seg.find("</table>")], re.S)
print([len(re.findall(r"<t[dh][ >]", r)) for r in rows])
PYEOF
)
[ "$cells" = "[9, 9]" ] && pass "report: the name's pipe does not split the HTML row (cells $cells)" ||
    fail "report: the table's cells" "$cells"
grep -q 'not in the table' evil.md && pass "report: an unknown GPU says it is not in the table" ||
    fail "report: unknown GPU" "$(grep 'GPU 0 of' evil.md)"
vr_run copies-md report --db copies.db -o copies.md -q
rate=$("$PYTHON" -c 'import json; print(json.load(open("copies-report.json"))["bandwidth_or_capacity"][0]["achieved_copy_share"])')
pct=$("$PYTHON" -c "print('%.1f%%' % ($rate * 100))")
grep -q "of the peak" copies.md && grep -q "($pct of the peak)" copies.md &&
    pass "report: the copies' throughput and its share of the peak ($pct)" ||
    fail "report: copies" "$(grep -n 'peak' copies.md)"

finish
