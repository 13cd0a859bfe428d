#!/usr/bin/env bash
# Several ranks of one job: the Ranks section comes before the
# devices, with a row per rank and device, the imbalance and which rank
# peaked first; the JSON has "ranks" and "ranks_summary".
# Figures checked by hand (times after the earliest record, at 1000 us):
#   rank 0, cuda:0: peak 3 GiB at 1200 us (200 us), step 5, in aten::linear;
#       reserved 4 GiB; capacity 40 GiB, so 7.5%
#   rank 1, cuda:1: peak 5 GiB + 1 byte at 1150 us (150 us), step 5, in
#       aten::conv2d; reserved 6 GiB; 12.5%
#   median of two: (3 GiB + 5 GiB + 1) / 2 rounded down = 4294967296;
#   imbalance 5368709121 / 4294967296 = 1.25; rank 1 peaked first, 50 us
#   before rank 0.
# With rank 2 (cuda:2: 4 GiB at 1150 us, as rank 1, in an operator whose
# name holds markup): three ranks, the median is the middle one, 4 GiB,
# and rank 1 and 2 tie: the lower rank is first, "at the same instant".
# With tiny.pt.trace.json (rank 0 of 2, cuda:0 15 GiB and cuda:1 18 GiB)
# instead of rank0.json: rank 0 has two rows and its peak is its higher
# device's, 18 GiB; median (18 GiB + 5 GiB + 1) / 2 = 11.5 GiB.
set -eu

# trace RANK DEVICE OP PEAK_TS TOTAL_BEFORE BYTES RESERVED
trace() {
    local before=$5 bytes=$6 peak=$(($5 + $6))
    cat <<T
{
  "schemaVersion": 1,
  "deviceProperties": [
    {"id": $2, "name": "NVIDIA A100-SXM4-40GB", "totalGlobalMem": 42949672960}
  ],
  "distributedInfo": {"backend": "nccl", "rank": $1, "world_size": 3},
  "traceEvents": [
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#5", "pid": 1, "tid": 1,
   "ts": 1000, "dur": 1000, "args": {}},
  {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 1, "tid": 1,
   "ts": 1050, "args": {"Total Reserved": $7, "Total Allocated": $before, "Bytes": $before,
   "Addr": 1000000, "Device Id": $2, "Device Type": 1}},
  {"ph": "X", "cat": "cpu_op", "name": "$3", "pid": 1, "tid": 1,
   "ts": 1100, "dur": 300, "args": {}},
  {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 1, "tid": 1,
   "ts": $4, "args": {"Total Reserved": $7, "Total Allocated": $peak, "Bytes": $bytes,
   "Addr": 2000000, "Device Id": $2, "Device Type": 1}},
  {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 1, "tid": 1,
   "ts": 1600, "args": {"Total Reserved": $7, "Total Allocated": $before, "Bytes": -$bytes,
   "Addr": 2000000, "Device Id": $2, "Device Type": 1}}
  ],
  "baseTimeNanoseconds": 1700000000000000000
}
T
}
GIB=1073741824
trace 0 0 aten::linear 1200 $((2 * GIB)) $GIB $((4 * GIB)) >rank0.json
trace 1 1 aten::conv2d 1150 $((4 * GIB)) $((GIB + 1)) $((6 * GIB)) >rank1.json
# An operator name from the input with Markdown and HTML in it: escaped.
trace 2 2 'my_op|<b>*x*</b>' 1150 $((3 * GIB)) $GIB $((6 * GIB)) >rank2.json

# The JSON's ranks, as printed: from "ranks" to the next top-level key.
ranks_json() {
    sed -n '/^	"ranks":/,/^	"findings":/p' | sed '$d'
}

echo "== two ranks: the sections in order, then the Ranks section"
"$VRAMREPORT" rank0.json rank1.json -o two.md
grep '^## ' two.md
sed -n '/^## Ranks/,/^## cuda/p' two.md
echo "== two ranks: JSON"
"$VRAMREPORT" rank0.json rank1.json --format json | ranks_json
echo "== three ranks, a tie for first"
"$VRAMREPORT" rank0.json rank1.json rank2.json | sed -n '/^## Ranks/,/^## cuda/p'
"$VRAMREPORT" rank0.json rank1.json rank2.json --format json | ranks_json | grep -A 15 '"ranks_summary"'
echo "== a rank with two devices"
cp "$CLI_DATA/tiny.pt.trace.json" .
"$VRAMREPORT" tiny.pt.trace.json rank1.json | sed -n '/^## Ranks/,/^## cuda/p'
echo "== one rank: no Ranks section, no ranks in the JSON"
"$VRAMREPORT" tiny.pt.trace.json | grep -c '^## Ranks' || true
"$VRAMREPORT" tiny.pt.trace.json --format json | grep -c '"ranks' || true
