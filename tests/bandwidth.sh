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
PY=$VR_SRCDIR/tests/py/bandwidth

REAL=$VR_SRCDIR/tests/data/realdata
cd "$TMP"
need python3 || true
need sqlite3 || true

"$PYTHON" "$PY/gen.py"

# bandwidth_or_capacity[] of a report, per GPU index, in the oracle's shape.

want_of() {
    "$PYTHON" -c 'import json, sys; print(json.dumps(json.load(open("expect.json"))[sys.argv[1]], sort_keys=True))' "$1"
}

#-- every verdict, from nvidia-smi and from gpustat ---------------------------------------

for name in capacity-full edge-tenth edge-under-tenth edge-ninety starved edge-seventy \
    edge-under-seventy edge-two-readings edge-three-readings fine oom unknown; do
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
        got=$("$PYTHON" "$PY/got.py" "$name-$fmt.json")
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
    want=$("$PYTHON" "$PY/real_names.py" "$REAL/$f")
    [ -n "$got" ] && [ "$got" = "$want" ] && pass "$b: $got" || fail "$b: the spec" "got  $got" "want $want"
done

#-- a generated trace: copies and memsets against the peak --------------------------------

"$PYTHON" "$PY/gentrace.py"

# Throughput from a trace, computed independently: the device's
# copies/memsets with bytes, the union of their intervals, the fastest of
# those lasting 10 us or more. Times in ns as the trace's microseconds
# rounded.
vr_run copies import copies.json --db copies.db -q
vr_run copies-rep report --db copies.db --format json -o copies-report.json -q
want=$("$PYTHON" "$PY/copies.py" copies.json 0 2039000000000)
got=$("$PYTHON" "$PY/gotcopies.py" copies-report.json)
[ "$got" = "$want" ] && pass "generated trace: copy throughput as computed from the trace $got" ||
    fail "generated trace: copy throughput" "got  $got" "want $want"

# Twelve devices in one trace, their copies interleaved in time: each
# device's figures are its own.
"$PYTHON" "$PY/gen_twelve.py"
vr_run many import many.json --db many.db -q
vr_run many-rep report --db many.db --format json -o many-report.json -q
got=$("$PYTHON" "$PY/got_twelve.py")
want=$(for dev in 0 1 2 3 4 5 6 7 8 9 10 11; do
    "$PYTHON" "$PY/copies.py" many.json "$dev" 3350000000000 | "$PYTHON" -c 'import json, sys
d = json.load(sys.stdin); print("%s|%d|%d|%d|%d" % (sys.argv[1], d["bytes"], d["busy"], d["host"][1], d["host"][2]))' "$dev"
done | "$PYTHON" -c 'import sys
rows = [l.split("|") for l in sys.stdin.read().split()]
print(sorted(("cuda:%s" % r[0], int(r[1]), int(r[2]), int(r[3]), int(r[4])) for r in rows))')
[ "$got" = "$want" ] && pass "twelve devices' copies, interleaved: each device's bytes and busy time its own" ||
    fail "twelve devices' copies" "got  $got" "want $want"

# A real trace: rank 1 of two V100s (its copies are on device 1).
want=$("$PYTHON" "$PY/copies.py" "$REAL/kineto/hta-v100x2-rank1-2022.pt.trace.json.gz" 1 900000000000)
got=$("$PYTHON" "$PY/gotcopies.py" real-hta-v100x2-rank1-2022.pt.trace.json.gz.json)
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
cells=$("$PYTHON" "$PY/evil_cells.py")
[ "$cells" = "[9, 9]" ] && pass "report: the name's pipe does not split the HTML row (cells $cells)" ||
    fail "report: the table's cells" "$cells"
grep -qF 'no datasheet (not in `estimate --list-gpus`)' evil.md && pass "report: an unknown GPU says it has no datasheet in the list" ||
    fail "report: unknown GPU" "$(grep 'GPU 0 of' evil.md)"
vr_run copies-md report --db copies.db -o copies.md -q
rate=$("$PYTHON" -c 'import json; print(json.load(open("copies-report.json"))["bandwidth_or_capacity"][0]["achieved_copy_share"])')
pct=$("$PYTHON" -c "print('%.1f%%' % ($rate * 100))")
grep -q "of the peak" copies.md && grep -q "($pct of the peak)" copies.md &&
    pass "report: the copies' throughput and its share of the peak ($pct)" ||
    fail "report: copies" "$(grep -n 'peak' copies.md)"

# A real one-shot capture (telegraf's nvidia-smi -q -x of two A5000s): GPU 1
# read 0% once, with memory to spare; one moment is no median.
vr_run a5000 "$REAL/nvsmi/telegraf-dual_a5000-v13.xml" -f json -o a5000.json -q
got=$(json_get a5000.json '[(b["verdict"], b["reason"].split(":")[0]) for b in d["bandwidth_or_capacity"] if b["gpu"] == "GPU 1"]')
case $got in
"[('unknown', '1 utilisation reading (0%)')]") pass "telegraf's dual A5000: one 0% reading of GPU 1 is unknown, not starved" ;;
*) fail "dual A5000 GPU 1 from one reading" "$got" ;;
esac

finish
