#!/usr/bin/env bash
# One clock: sources of one job whose times are written
# differently land on one axis. A profiler trace is placed by its
# baseTimeNanoseconds (UTC); a job log and an nvidia-smi log write
# wall-clock stamps, most without a zone, which --tz places (default UTC,
# said in the report); a stamp that names its zone needs no --tz.
#
# The trace is tests/cli/data/tiny.pt.trace.json: rank 0, an
# [OutOfMemory] on cuda:1 at 1600 us after its base of 1700000000 s
# (2023-11-14 22:13:20 UTC), so at 22:13:20.0016 UTC, 00:13:20.0016 in a
# zone two hours ahead. The log below says its error at 00:13:20,001
# local time; nvidia-smi sampled cuda:1 around it, local time too.
set -e
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
cd "$TMP"
need python3 || true

TRACE=$VR_SRCDIR/tests/cli/data/tiny.pt.trace.json
TRACE_OOM_NS=1700000000001600000

# A training log, Python logging's stamp (local time, no zone).
cat >train.log <<'LOGEOF'
2023-11-15 00:13:19,412 - INFO - step 41 loss 2.31
2023-11-15 00:13:20,001 - ERROR - Traceback (most recent call last):
  File "train.py", line 88, in <module>
    loss = model(batch).sum()
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 32.00 GiB. GPU 1 has a total capacity of 40.00 GiB of which 1.50 GiB is free. Including non-PyTorch memory, this process has 38.50 GiB memory in use. Of the allocated memory 18.00 GiB is allocated by PyTorch, and 2.00 GiB is reserved by PyTorch but unallocated.
LOGEOF
# The same log, its stamps in ISO 8601 with the zone.
sed -e 's/^2023-11-15 \(..:..:..\),\(...\) -/2023-11-15T\1.\2+02:00/' train.log >zoned.log

# nvidia-smi --query-gpu every half second around the error, local time.
{
    echo "timestamp, index, pci.bus_id, memory.used [MiB], memory.total [MiB]"
    for s in 18.5 19.0 19.5 20.0 20.5; do
        echo "2023/11/15 00:13:$s, 1, 00000000:18:00.0, 39000 MiB, 40960 MiB"
    done
} >smi.csv

# ts_ns of the job log's error in a report's JSON.
log_oom_ns() {
    json_get "$1" '[e["ts_ns"] for e in d["oom_events"] if e["source"].endswith(".log")][0]'
}

vr_run utc "$TRACE" train.log --format json -o utc.json -q
[ "$rc" = 0 ] && pass "trace and log: exit 0" || fail "trace and log: exit 0" "exit $rc: $(cat utc.err)"
got=$(log_oom_ns utc.json)
[ "$got" = $((TRACE_OOM_NS - 1600000 + 1000000 + 7200000000000)) ] &&
    pass "without --tz the log's stamps are read as UTC: two hours after the trace's error" ||
    fail "without --tz the log's stamps are read as UTC" "got $got"
got=$(json_get utc.json '[s["clock"] for s in d["sources"] if s["path"].endswith(".log")][0]')
[ "$got" = "wall clock (--tz UTC)" ] && pass "the report says the log was placed as UTC" ||
    fail "the report says the log was placed as UTC" "got $got"

vr_run tz "$TRACE" train.log --tz +02:00 --format json -o tz.json -q
got=$(log_oom_ns tz.json)
want=$(json_get tz.json '[e["ts_ns"] for e in d["oom_events"] if not e["source"].endswith(".log")][0]')
[ "$want" = "$TRACE_OOM_NS" ] && pass "the trace's [OutOfMemory] is at base + 1600 us" ||
    fail "the trace's [OutOfMemory] is at base + 1600 us" "got $want"
# The log's stamp has milliseconds: it lands within them of the trace's.
[ -n "$got" ] && [ $((want - got)) -ge 0 ] && [ $((want - got)) -lt 1000000 ] &&
    pass "--tz +02:00: the log's OOM line lands at the trace's [OutOfMemory] time (within the stamp's ms)" ||
    fail "--tz +02:00: the log's OOM line lands at the trace's [OutOfMemory] time" "log $got, trace $want"
got=$(json_get tz.json '[s["clock"] for s in d["sources"] if s["path"].endswith(".log")][0]')
[ "$got" = "wall clock (--tz +02:00)" ] && pass "the report says --tz placed the log" ||
    fail "the report says --tz placed the log" "got $got"

vr_run zoned "$TRACE" zoned.log --format json -o zoned.json -q
got=$(log_oom_ns zoned.json)
[ "$got" = "$(log_oom_ns tz.json)" ] &&
    pass "a stamp that names its zone lands there without --tz" ||
    fail "a stamp that names its zone lands there without --tz" "got $got"
vr_run zoned2 "$TRACE" zoned.log --tz -05:00 --format json -o zoned2.json -q
[ "$(log_oom_ns zoned2.json)" = "$(log_oom_ns tz.json)" ] &&
    pass "--tz does not move stamps that name their zone" ||
    fail "--tz does not move stamps that name their zone" "got $(log_oom_ns zoned2.json)"

# nvidia-smi beside the trace: matched to cuda:1 by its index, and its
# readings drawn on the device's chart only when they are on its clock.
vr_run smi "$TRACE" smi.csv --tz +02:00 -o smi.html -q
vr_run smij "$TRACE" smi.csv --tz +02:00 --format json -o smi.json -q
got=$(json_get smi.json '[(x["id"], x["smi_samples"], x["smi_match"], x["smi_max_used_bytes"]) for x in d["devices"] if x["smi_samples"]]')
[ "$got" = "[('cuda:1', 5, 'index', $((39000 << 20)))]" ] &&
    pass "nvidia-smi's GPU 1 is the trace's cuda:1 (by index), its 5 readings and most used" ||
    fail "nvidia-smi's GPU 1 is the trace's cuda:1 (by index)" "got $got"
[ "$(count_str 'nvidia-smi used' smi.html)" -ge 1 ] &&
    pass "--tz +02:00: the device chart shows nvidia-smi's used memory" ||
    fail "--tz +02:00: the device chart shows nvidia-smi's used memory"
vr_run smim "$TRACE" smi.csv --tz +02:00 -o smi.md -q
grep -q -F '| cuda:1, rank 0 (by index) |' smi.md &&
    pass "the nvidia-smi table says which device the GPU is, and by which rule" ||
    fail "the nvidia-smi table says which device the GPU is, and by which rule" "$(grep -A4 'Bus id' smi.md)"
vr_run smiu "$TRACE" smi.csv -o smiu.html -q
[ "$(count_str 'nvidia-smi used' smiu.html)" = 0 ] &&
    pass "read as UTC the readings are two hours off the trace: not drawn on its chart" ||
    fail "read as UTC the readings are two hours off the trace: not drawn on its chart"

finish
