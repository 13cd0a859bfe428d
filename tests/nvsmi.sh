#!/usr/bin/env bash
# tests/nvsmi.sh: nvidia-smi's CSV queries, default table and multi-section
# captures. Every capture in tests/data/realdata/nvsmi/
# is imported and reported; the GPUs' readings, memory used and total, the
# processes and the time span are checked against oracle.py, an
# independent reading of the same file (regular expressions and Python's
# csv module). Then variants written here from the real headers and
# values: units in the values or only in the header (nounits), any order
# and subset of fields, [N/A] / [Not Supported], repeated samples (-l), a
# header repeated mid-file, CRLF, --query-compute-apps; the table single,
# repeated, in the old 79-column layout and with MIG devices; malformed
# and cut lines (skipped and counted), a CSV without its header (refused,
# saying to keep it), and truncated files.
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
PY=$VR_SRCDIR/tests/py/nvsmi

REAL=$VR_SRCDIR/tests/data/realdata/nvsmi
cd "$TMP"
need python3 || true

#-- the oracle ----------------------------------------------------------------------------

# compare.py WANT JSON LABEL: the report's gpus[] and source against the oracle.

# check_file KIND FILE LABEL [vramreport options]: import, report, compare.
check_file() {
    kind=$1 file=$2 label=$3
    shift 3
    "$PYTHON" "$PY/oracle.py" "$kind" "$file" >"$label.want" 2>oracle.err ||
        { fail "$label: the oracle reads it" "$(cat oracle.err)"; return; }
    vr_run "$label" "$file" --format json -o "$label.json" -q "$@"
    if [ "$rc" != 0 ]; then
        fail "$label: imported and reported" "exit $rc: $(cat "$label.err")"
        return
    fi
    pass "$label: imported and reported"
    "$PYTHON" "$PY/compare.py" "$label.want" "$label.json" "$label" >"$label.tap" 2>&1 ||
        echo "FAIL	$label: compared	$(cat "$label.tap")" >>"$label.tap"
    tap_lines "$label.tap"
}

#-- every real capture ----------------------------------------------------------------------

for f in "$REAL"/exporter-capture-*.txt; do
    name=${f##*/}
    check_file capture "$f" "$name"
    got=$(json_get "$name.json" '(d["sources"][0]["format"], d["sources"][0]["tolerated"].get("malformed_line", 0))')
    [ "$got" = "('nvsmi_capture', 0)" ] && pass "$name: read as a capture, no line skipped" ||
        fail "$name: read as a capture, no line skipped" "$got"
    # The oracle's own count: at least one table and two CSV queries read.
    got=$(json_get "$name.want" 'sum(g["samples"] for g in d["gpus"].values()) >= 4 and any(g["procs"] for g in d["gpus"].values())')
    [ "$got" = True ] && pass "$name: the oracle found readings and processes" ||
        fail "$name: the oracle found readings and processes" "$got"
done

# An nvidia-smi-only input gives a report, in Markdown and HTML.
cap=$REAL/exporter-capture-h100-80gb.txt
vr_run md "$cap" -o cap.md
[ "$rc" = 0 ] && grep -q '^## nvidia-smi' cap.md && grep -q 'NVIDIA H100 80GB HBM3' cap.md &&
    grep -q 'gpu\\_burn' cap.md && pass "a capture alone: the Markdown report has the nvidia-smi section" ||
    fail "a capture alone: the Markdown report has the nvidia-smi section" "exit $rc: $(cat md.err)"
vr_run html "$cap" -o cap.html
[ "$rc" = 0 ] && grep -q 'NVIDIA H100 80GB HBM3' cap.html && pass "a capture alone: HTML report" ||
    fail "a capture alone: HTML report" "exit $rc: $(cat html.err)"
# Its two -q sections are read (their readings are in the oracle's count).
got=$(json_get "exporter-capture-h100-80gb.txt.json" 'd["sources"][0]["tolerated"].get("unread_section")')
[ "$got" = None ] && pass "the capture's -q sections are read, none left unread" ||
    fail "the capture's -q sections are read, none left unread" "$got"

#-- CSV variants, from the real header and values ------------------------------------------

"$PYTHON" "$PY/gen_csv_variants.py" || fail "python3 wrote the CSV variants"

for v in units nounits subset na restarted apps; do
    check_file csv "$v.csv" "$v.csv"
done
got=$(json_get units.csv.json 'sorted((g["idx"], g["uuid"]) for g in d["gpus"])')
[ "$got" = "[(0, 'GPU-6a5d1c2e-0000-4000-8000-000000000001'), (1, 'GPU-6a5d1c2e-0000-4000-8000-000000000002')]" ] &&
    pass "units.csv: GPUs named by index and UUID" || fail "units.csv: GPUs named by index and UUID" "$got"
# The same figures with units in the values or only in the header.
a=$(json_get units.csv.json '[(g["smi_samples"], g["smi_max_used_bytes"], g["memory_total_bytes"]) for g in d["gpus"]]')
b=$(json_get nounits.csv.json '[(g["smi_samples"], g["smi_max_used_bytes"], g["memory_total_bytes"]) for g in d["gpus"]]')
[ "$a" = "$b" ] && pass "nounits: the same figures as units in the values ($a)" || fail "nounits: the same figures" "$a vs $b"
got=$(json_get na.csv.json '[(g["idx"], g["smi_samples"], g["memory_total_bytes"]) for g in d["gpus"]]')
[ "$got" = "[(0, 3, 85520809984), (1, 3, 85520809984)]" ] &&
    pass "na.csv: rows with [N/A] / [Not Supported] kept, the figures null" || fail "na.csv: [N/A] rows" "$got"
got=$(json_get restarted.csv.json 'd["sources"][0]["events"]')
[ "$got" = 6 ] && pass "restarted.csv: a header mid-file, CRLF: all 6 readings" || fail "restarted.csv: 6 readings" "$got"

vr_run mal malformed.csv --format json -o malformed.json -q
got=$(json_get malformed.json '(d["sources"][0]["events"], d["sources"][0]["tolerated"].get("malformed_line"))')
[ "$rc" = 0 ] && [ "$got" = "(4, 2)" ] && pass "malformed.csv: 4 rows read, a bad value and a cut row skipped and counted" ||
    fail "malformed.csv: 4 rows read, 2 skipped" "exit $rc: $got $(cat mal.err)"
vr_run mal2 malformed.csv -o malformed.md
grep -q '2 malformed or cut line(s) skipped' malformed.md && pass "malformed.csv: the report notes the skipped lines" ||
    fail "malformed.csv: the report notes the skipped lines" "$(grep -i skipped malformed.md)"

vr_run nohead noheader.csv -o noheader.md
if [ "$rc" = 1 ] && [ "$(wc -l <nohead.err | tr -d ' ')" = 1 ] && grep -q 'noheader.csv: line 1: .*without a header line.*noheader' nohead.err; then
    pass "noheader.csv: refused in one line that says to keep the header"
else
    fail "noheader.csv: refused in one line that says to keep the header" "exit $rc: $(cat nohead.err)"
fi
[ ! -e noheader.md ] && pass "noheader.csv: no report" || fail "noheader.csv: no report"

got=$(json_get apps.csv.json '[(g["idx"], g["smi_samples"], [(p["pid"], p["name"], p["used_bytes"]) for p in g["smi_processes"]]) for g in d["gpus"]]')
[ "$got" = "[(None, 0, [(11345, './gpu_burn', 16462643200), (11327, '/root/tools/memhog', 2690646016)]), (None, 0, [(2201, 'python train.py, rank 1', 851443712)])]" ] &&
    pass "apps.csv: processes on their GPUs, a name with ', ' kept whole" || fail "apps.csv: processes" "$got"

#-- a script's CSV: epoch stamps, no index ---------------------------------------------------

# A common shape: a script prints `date +%s` and a noheader, nounits
# query of the only GPU under its own header; no index column. Every row
# was skipped as malformed (the stamp is no nvidia-smi date), the report
# empty. Epoch seconds (with a fraction) and milliseconds are UTC; the GPU
# is index 0, unless a uuid or bus id column names it.
printf 'timestamp,memory.used,memory.total,utilization.gpu\n1762903990,594, 24564, 0\n1762903991,12594, 24564, 87\n1762903992.5,8000, 24564, 50\n1762903993250,7000, 24564, 40\n' >scripted.csv
vr_run scr scripted.csv --db scripted.db --format json -o scripted.json -q
got=$(sqlite3 scripted.db "SELECT group_concat(s.ts_ns || ':' || s.memory_used_bytes || ':' || s.memory_total_bytes || ':' || s.utilization_gpu_pct, ' ') FROM (SELECT * FROM gpu_sample ORDER BY seq) s")
want="1762903990000000000:622854144:25757220864:0 1762903991000000000:13205766144:25757220864:87 1762903992500000000:8388608000:25757220864:50 1762903993250000000:7340032000:25757220864:40"
[ "$rc" = 0 ] && [ "$got" = "$want" ] &&
    pass "scripted.csv: epoch seconds, a fraction, milliseconds: all 4 readings, MiB as bytes" ||
    fail "scripted.csv: epoch seconds, a fraction, milliseconds: all 4 readings" "exit $rc: got $got $(cat scr.err)"
got=$(json_get scripted.json '([(g["idx"], g["smi_samples"], g["smi_max_used_bytes"], g["memory_total_bytes"]) for g in d["gpus"]], d["sources"][0]["tolerated"], d["sources"][0]["start_ts_ns"], d["sources"][0]["end_ts_ns"], d["sources"][0]["clock"])')
[ "$got" = "([(0, 4, 13205766144, 25757220864)], {}, 1762903990000000000, 1762903993250000000, 'wall clock (zone in the file)')" ] &&
    pass "scripted.csv: one GPU, index 0; its peak 12594 MiB; nothing skipped; the span in UTC" ||
    fail "scripted.csv: one GPU, index 0, peak 12594 MiB" "$got"
vr_run scrmd scripted.csv -o scripted.md
grep -q '^| scripted.csv | 0 |.* | 4 | 12.3 GiB | 24.0 GiB |' scripted.md &&
    pass "scripted.csv: the report's nvidia-smi table has GPU 0's peak (12.3 GiB of 24.0 GiB)" ||
    fail "scripted.csv: the report's peak" "$(grep -n 'scripted.csv' scripted.md)"
# With units in the header, a uuid column and no index: the GPU is the
# uuid's; a number too small to be an epoch is a malformed stamp.
printf 'timestamp, uuid, memory.used [MiB], memory.total [MiB]\n1762903990, GPU-aa, 594 MiB, 24564 MiB\n1762903991, GPU-aa, 700 MiB, 24564 MiB\n12345, GPU-aa, 800 MiB, 24564 MiB\n' >scripted-uuid.csv
vr_run scru scripted-uuid.csv --format json -o scripted-uuid.json -q
got=$(json_get scripted-uuid.json '([(g["idx"], g["uuid"], g["smi_samples"], g["smi_max_used_bytes"]) for g in d["gpus"]], d["sources"][0]["tolerated"])')
[ "$got" = "([(None, 'GPU-aa', 2, 734003200)], {'malformed_line': 1})" ] &&
    pass "scripted-uuid.csv: the GPU by its uuid; 12345 is no epoch stamp (skipped, counted)" ||
    fail "scripted-uuid.csv: the GPU by its uuid, 12345 skipped" "$got"

# Epoch-sized numbers past 2262 (a date's digits run together: seconds
# 20260000000, milliseconds 9300000000000) overflow nanoseconds: no stamp,
# a malformed row (libFuzzer found the multiplication's overflow).
printf 'timestamp,memory.used,memory.total\n1762903990,594, 24564\n20260000000,700, 24564\n9300000000000,800, 24564\n' >late-epoch.csv
vr_run late late-epoch.csv --format json -o late-epoch.json -q
got=$(json_get late-epoch.json '([(g["smi_samples"], g["smi_max_used_bytes"]) for g in d["gpus"]], d["sources"][0]["tolerated"])')
[ "$rc" = 0 ] && [ "$got" = "([(1, 622854144)], {'malformed_line': 2})" ] &&
    pass "late-epoch.csv: epoch numbers past 2262 are no stamps (skipped, counted)" ||
    fail "late-epoch.csv: epoch numbers past 2262 are no stamps" "exit $rc: $got $(cat late.err)"

# A used figure no GPU can hold (99999999999999 MiB: it saturated at
# 8 EiB and became the peak) is a malformed row: skipped and counted.
printf 'timestamp,memory.used,memory.total\n1762903990,594, 24564\n1762903991,99999999999999, 24564\n1762903992,1073741825 MiB, 24564\n' >absurd.csv
vr_run absurd absurd.csv --format json -o absurd.json
got=$(json_get absurd.json '([(g["smi_samples"], g["smi_max_used_bytes"]) for g in d["gpus"]], d["sources"][0]["tolerated"])')
[ "$got" = "([(1, 622854144)], {'malformed_line': 2})" ] && grep -q 'absurd.csv: 2 malformed or cut line(s) skipped' absurd.err &&
    pass "absurd.csv: memory.used over 1 PiB skipped as malformed, kept out of the peak, said on stderr" ||
    fail "absurd.csv: memory.used over 1 PiB skipped as malformed" "$got $(cat absurd.err)"

#-- the table -----------------------------------------------------------------------------

"$PYTHON" "$PY/gen_tables.py" "$REAL/exporter-capture-h100-80gb.txt" || fail "python3 wrote the tables"
check_file table single.txt single.txt
got=$(json_get single.txt.json '(d["sources"][0]["format"], len(d["gpus"][0]["smi_processes"]))')
[ "$got" = "('nvsmi_table', 3)" ] && pass "single.txt: a table log with its 3 processes" || fail "single.txt: table, 3 processes" "$got"
check_file table repeated.txt repeated.txt
got=$(json_get repeated.txt.json '(d["gpus"][0]["smi_samples"], d["sources"][0]["tolerated"].get("malformed_line"))')
[ "$got" = "(3, 1)" ] && pass "repeated.txt: 3 tables, the cut process row skipped and counted" ||
    fail "repeated.txt: 3 tables, 1 cut row" "$got"

# The old 79-column layout: the GPU box of driver 367.57 (three GPUs, bus
# ids with a 4-digit domain) from https://github.com/wookayin/gpustat/issues/16,
# the process box of the same era (no GI/CI columns) from
# https://github.com/wookayin/gpustat/issues/1, the header as
# docs/formats/nvidia-smi-table.md shows it; a stamp line above.
cat >old.txt <<'EOF'
Thu Aug 17 10:00:01 2017       
+-----------------------------------------------------------------------------+
| NVIDIA-SMI 367.57                 Driver Version: 367.57                    |
|-------------------------------+----------------------+----------------------+
| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |
|===============================+======================+======================|
|   0  GeForce GTX TIT...  Off  | 0000:02:00.0      On |                  N/A |
| 38%   79C    P2    97W / 250W |    569MiB / 12205MiB |     49%      Default |
+-------------------------------+----------------------+----------------------+
|   1  GeForce GTX TIT...  Off  | 0000:03:00.0     Off |                  N/A |
| 28%   68C    P8    20W / 250W |      1MiB / 12206MiB |      0%      Default |
+-------------------------------+----------------------+----------------------+
|   2  GeForce GTX TIT...  Off  | 0000:82:00.0     Off |                  N/A |
| 28%   68C    P8    19W / 250W |      1MiB / 12206MiB |      0%      Default |
+-------------------------------+----------------------+----------------------+

+-----------------------------------------------------------------------------+
| Processes:                                                       GPU Memory |
|  GPU       PID  Type  Process name                               Usage      |
|=============================================================================|
|    0     11812    C   ./juspic.x                                      96MiB |
|    0      1287    G   /usr/lib/xorg/Xorg                             471MiB |
+-----------------------------------------------------------------------------+
EOF
check_file table old.txt old.txt
got=$("$PYTHON" -c 'import sys; print(max(len(l.rstrip("\n")) for l in open(sys.argv[1]) if l.startswith(("|", "+"))))' old.txt)
[ "$got" = 79 ] && pass "old.txt is 79 columns wide" || fail "old.txt is 79 columns wide" "$got"
got=$(json_get old.txt.json '[(g["idx"], g["pci_bus_id"], g["name"]) for g in d["gpus"]]')
[ "$got" = "[(0, '0000:02:00.0', 'GeForce GTX TIT...'), (1, '0000:03:00.0', 'GeForce GTX TIT...'), (2, '0000:82:00.0', 'GeForce GTX TIT...')]" ] &&
    pass "old.txt: index, bus id and name of each GPU" || fail "old.txt: GPUs" "$got"

# MIG devices (XuehaiPan/nvitop pull request #8, an A100 in MIG mode),
# under a GPU box of the new layout: each instance a GPU of its own.
cat >mig.txt <<'EOF'
Mon Mar  6 12:00:00 2023       
+-----------------------------------------------------------------------------+
| NVIDIA-SMI 470.82.01    Driver Version: 470.82.01    CUDA Version: 11.4     |
|-------------------------------+----------------------+----------------------+
| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |
|                               |                      |               MIG M. |
|===============================+======================+======================|
|   1  NVIDIA A100-SXM...  On   | 00000000:47:00.0 Off |                    0 |
| N/A   45C    P0   120W / 400W |  24259MiB / 81251MiB |     N/A      Default |
|                               |                      |              Enabled |
+-------------------------------+----------------------+----------------------+

+-----------------------------------------------------------------------------+
| MIG devices:                                                                |
+------------------+----------------------+-----------+-----------------------+
| GPU  GI  CI  MIG |         Memory-Usage |        Vol|         Shared        |
|      ID  ID  Dev |           BAR1-Usage | SM     Unc| CE  ENC  DEC  OFA  JPG|
|                  |                      |        ECC|                       |
|==================+======================+===========+=======================|
|  1    3   0   0  |  14366MiB / 19968MiB | 28      0 |  2   0    1    0    0 |
|                  |      4MiB / 32767MiB |           |                       |
+------------------+----------------------+-----------+-----------------------+
|  1    5   0   1  |   9880MiB / 19968MiB | 28      0 |  2   0    1    0    0 |
|                  |      4MiB / 32767MiB |           |                       |
+------------------+----------------------+-----------+-----------------------+
|  1    6   0   2  |     13MiB / 19968MiB | 28      0 |  2   0    1    0    0 |
|                  |      2MiB / 32767MiB |           |                       |
+------------------+----------------------+-----------+-----------------------+

+-----------------------------------------------------------------------------+
| Processes:                                                                  |
|  GPU   GI   CI        PID   Type   Process name                  GPU Memory |
|        ID   ID                                                   Usage      |
|=============================================================================|
|    1    3    0      40211      C   python                          14353MiB |
|    1    5    0      40399      C   python                           9867MiB |
+-----------------------------------------------------------------------------+
EOF
check_file table mig.txt mig.txt
got=$(json_get mig.txt.json '[(g["mig"], g["smi_max_used_bytes"] >> 20, g["memory_total_bytes"] >> 20) for g in d["gpus"]]')
[ "$got" = "[(None, 24259, 81251), ('GI 3 / CI 0', 14366, 19968), ('GI 5 / CI 0', 9880, 19968), ('GI 6 / CI 0', 13, 19968)]" ] &&
    pass "mig.txt: the GPU and its three MIG instances, each with its own memory" || fail "mig.txt: MIG instances" "$got"

#-- truncated files -------------------------------------------------------------------------

# Cut in the middle of the second table: what came before is read, and
# the oracle reads the same cut file.
n=$(grep -n '^| N/A   59C' "$cap" | cut -d: -f1)
head -n "$((n - 1))" "$cap" >cut.txt
check_file capture cut.txt cut.txt
got=$(json_get cut.txt.json 'd["sources"][0]["tolerated"].get("malformed_line")')
[ "$got" = 1 ] && pass "cut.txt: the GPU whose memory line was cut off is counted" || fail "cut.txt: cut GPU counted" "$got"
# A gzip stream cut short: truncated, what came before is in.
gzip -c "$cap" >whole.gz
head -c "$(( $(wc -c <whole.gz) * 9 / 10 ))" whole.gz >cut.txt.gz
vr_run gz cut.txt.gz --format json -o cutgz.json
got=$(json_get cutgz.json '(d["sources"][0]["truncated"], d["sources"][0]["format"])')
[ "$rc" = 0 ] && [ "$got" = "(True, 'nvsmi_capture')" ] && pass "a cut gzip capture: truncated, imported" ||
    fail "a cut gzip capture: truncated, imported" "exit $rc: $got $(cat gz.err)"
# Windows line ends throughout.
sed 's/$/\r/' "$cap" >crlf.txt
check_file capture crlf.txt crlf.txt

# A capture written by hand the way a support script would: a noheader,
# nounits query (the fields from its command line), a table repeated by
# -l, a -q section (a Timestamp and no GPU: nothing to read), an unknown
# command and pmon (passed over).
"$PYTHON" "$PY/gen_own_capture.py" "$REAL/exporter-capture-h100-80gb.txt" || fail "python3 wrote own-capture.txt"
check_file capture own-capture.txt own-capture.txt
got=$(json_get own-capture.txt.json '(d["gpus"][0]["smi_samples"], d["sources"][0]["tolerated"])')
[ "$got" = "(5, {})" ] &&
    pass "own-capture.txt: noheader rows by their command's fields, 2 tables, an empty -q" ||
    fail "own-capture.txt: 3 CSV rows + 2 tables, an empty -q" "$got"

#-- which of the job's devices a GPU is --------------------------------------------------------

# A profiler trace of one H100 (cuda:0) and the H100's capture: matched by
# index (the only rule both sides allow); then, with the device given an
# identity, by UUID, by bus id (a 4-digit domain against nvidia-smi's 8),
# and by nothing when the UUIDs differ. The two files are of two projects,
# recorded 361 days apart: as they are, the capture cannot be the trace's
# GPU at its time, so it is listed as not matched (docs/diagnosis.md,
# "Which readings are the job's"); the identity rules are then tried with
# the capture's clock moved to the trace's start.
trace=$VR_SRCDIR/tests/data/realdata/kineto/tracelens-h100-bert-small.json.gz
vr_run mimp import "$trace" "$cap" --db match.db -q
vr_run mrep report --db match.db --format json -o match.json -q
got=$(json_get match.json '[(g["device_db_id"], g["not_matched_device"], g["not_matched_reason"]) for g in d["gpus"]]')
gap=$(sqlite3 match.db "SELECT ((SELECT min(ts_ns) FROM gpu_sample) + (SELECT clock_offset_ns FROM source WHERE format <> 'kineto')
                                - (SELECT max(end_ns + clock_offset_ns) FROM source WHERE format = 'kineto')
                                + 43200000000000) / 86400000000000")
[ "$got" = "[(None, 'cuda:0', '$gap days from the job')]" ] && [ "$gap" -gt 300 ] &&
    pass "a capture $gap days from the trace: not matched, and why" ||
    fail "a capture $gap days from the trace: not matched, and why" "got $got"
sqlite3 match.db "UPDATE source SET clock_offset_ns = (SELECT start_ns + clock_offset_ns FROM source
                                                        WHERE format = 'kineto')
                                                     - (SELECT min(ts_ns) FROM gpu_sample)
                   WHERE format <> 'kineto'; UPDATE analysis_state SET complete = 0"
match() {
    [ -z "$1" ] || sqlite3 match.db "$1; UPDATE analysis_state SET complete = 0"
    vr_run mrep report --db match.db --format json -o match.json -q
    json_get match.json '[(g["device_db_id"] == d["devices"][0]["db_id"] if g["device_db_id"] else None, g["match_rule"]) for g in d["gpus"]]'
}
for case in "|[(True, 'index')]" \
    "UPDATE device SET uuid = 'GPU-00000000-0000-0000-0000-000000000000'|[(True, 'uuid')]" \
    "UPDATE device SET uuid = NULL, pci_bus_id = '0000:00:09.0'|[(True, 'pci_bus_id')]" \
    "UPDATE device SET uuid = 'GPU-6a5d1c2e', pci_bus_id = NULL|[(None, None)]"; do
    sql=${case%%|*} want=${case#*|}
    got=$(match "$sql")
    [ "$got" = "$want" ] && pass "matched to cuda:0: ${sql:-no identity} -> $want" ||
        fail "matched to cuda:0: ${sql:-no identity}" "got $got, want $want"
done

#-- garbage never crashes -----------------------------------------------------------------

for f in units.csv single.txt "$cap"; do
    base=${f##*/}
    "$PYTHON" "$PY/junk.py" "$f" "junk-$base"
    vr_run junk "junk-$base" -o junk.md
    if crashed "$rc" junk.err; then
        fail "junk-$base: no crash" "exit $rc: $(head -c 400 junk.err)"
    else
        pass "junk-$base: no crash (exit $rc)"
    fi
done

finish
