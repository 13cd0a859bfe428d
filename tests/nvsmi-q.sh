#!/usr/bin/env bash
# tests/nvsmi-q.sh: nvidia-smi -q text and -q -x XML. Every real
# XML log in tests/data/realdata/nvsmi/ is imported and its GPUs, readings,
# MIG devices and processes are checked against Python's own reading of the
# file (xml.etree); the -q text sections of the real multi-section captures
# are cut out here, at test time, and checked against an independent
# reading with regular expressions. Then repeated logs (-l), cut, malformed
# and hostile XML, unknown elements, and malformed -q values.
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
PY=$VR_SRCDIR/tests/py/nvsmi-q

REAL=$VR_SRCDIR/tests/data/realdata/nvsmi
cd "$TMP"
need python3 || true

# What the database holds for one source, as JSON: GPUs (with their
# readings and processes) keyed by "uuid|bus id|mig".

# The comparison: PASS/FAIL lines for tap_lines.

# The independent reading of -q -x: ElementTree, which never fetches the DTD.

# The independent reading of -q text: regular expressions over each GPU's
# block (a line "GPU <bus id>" to the next), the FB section's four lines.

# Cuts the `nvidia-smi -q` sections out of a capture: the lines between the
# banner under "# <phase> :: query (-q)" and the next banner.

# import_check NAME FILE ORACLE: imports FILE alone and compares.
import_check() {
    rm -f "$1.db"
    vr_run imp import "$2" --db "$1.db" -q
    if [ "$rc" != 0 ]; then
        fail "$1: imported" "exit $rc: $(cat imp.err)"
        return
    fi
    pass "$1: imported"
    "$PYTHON" "$PY/$3" "$2" >"$1.want" 2>oracle.err || { fail "$1: the oracle reads it" "$(cat oracle.err)"; return; }
    "$PYTHON" "$PY/stored.py" "$1.db" >"$1.got" 2>stored.err || { fail "$1: stored rows read" "$(cat stored.err)"; return; }
    "$PYTHON" "$PY/compare.py" "$1.want" "$1.got" "$1" >"$1.tap" 2>&1 || echo "FAIL	$1: compared" >>"$1.tap"
    tap_lines "$1.tap"
}

#-- every real XML log ------------------------------------------------------------------

n=0
for f in "$REAL"/*.xml; do
    import_check "${f##*/}" "$f" oracle_xml.py
    n=$((n + 1))
done
[ "$n" -ge 6 ] && pass "six or more real XML logs read ($n)" || fail "six or more real XML logs read" "$n"

# What the oracle must have found for the checks above to mean something.
"$PYTHON" "$PY/real.py" "$REAL" >real.tap
tap_lines real.tap

# An XML-only input gives a report.
vr_run rep "$REAL/telegraf-a100-sxm4-v12.xml" -o r.md -q
[ "$rc" = 0 ] && [ -s r.md ] && pass "an XML log alone gives a report" || fail "an XML log alone gives a report" "exit $rc: $(cat rep.err)"
grep -q 'nvsmi\\_xml' r.md && pass "the report lists the XML log's format" || fail "the report lists the XML log's format"

#-- the -q text sections of the real captures -----------------------------------------------

for f in "$REAL"/exporter-capture-*.txt; do
    base=${f##*/}
    base=${base%.txt}
    got=$("$PYTHON" "$PY/cut_q.py" "$f" "$base" 2>&1)
    [ "$got" = 2 ] && pass "$base: two -q sections cut (idle, load)" || fail "$base: two -q sections cut" "$got"
    for s in "$base".*.txt; do
        import_check "$s" "$s" oracle_q.py
    done
done
# The load sections list processes; the oracle must see them too.
got=$("$PYTHON" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(sum(len(s["processes"]) for g in d["gpus"].values() for s in g["samples"]))' exporter-capture-h100-80gb.1.txt.want)
[ "$got" -ge 3 ] && pass "the H100 under load lists its processes ($got)" || fail "the H100 under load lists its processes" "$got"

#-- repeated readings (-l) ----------------------------------------------------------------

# Two -q blocks, two time stamps: two readings of the one GPU.
cat exporter-capture-h100-80gb.0.txt exporter-capture-h100-80gb.1.txt >h100-twice.log
import_check "repeated -q log" h100-twice.log oracle_q.py
got=$("$PYTHON" -c 'import json,sys; d=json.load(open(sys.argv[1])); g=list(d["gpus"].values()); print(len(g), len(g[0]["samples"]), len({s["ts"] for s in g[0]["samples"]}))' "repeated -q log.got" 2>&1)
[ "$got" = "1 2 2" ] && pass "repeated -q log: one GPU, two readings, two times" || fail "repeated -q log: one GPU, two readings, two times" "$got"

# Two XML documents, the second a second later, with a blank line between.
"$PYTHON" "$PY/gen_two_docs.py" "$REAL/telegraf-dual_a5000-v13.xml"
import_check "repeated XML documents" a5000-twice.xml oracle_xml.py
got=$("$PYTHON" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(len(d["gpus"]), sorted({len(g["samples"]) for g in d["gpus"].values()}))' "repeated XML documents.got" 2>&1)
[ "$got" = "2 [2]" ] && pass "repeated XML documents: two GPUs, two readings each" || fail "repeated XML documents: two GPUs, two readings each" "$got"

#-- cut, malformed and hostile XML ---------------------------------------------------------

# Cut inside the second GPU: the first is kept, the import says truncated.
"$PYTHON" "$PY/gen_cut_xml.py" "$REAL/telegraf-dual_a5000-v13.xml"
rm -f cut.db
vr_run cut import a5000-cut.xml --db cut.db
[ "$rc" = 0 ] && pass "cut XML: imported" || fail "cut XML: imported" "exit $rc: $(cat cut.err)"
grep -q 'truncated at byte' cut.err && pass "cut XML: said truncated" || fail "cut XML: said truncated" "$(cat cut.err)"
"$PYTHON" "$PY/stored.py" cut.db >cut.got
got=$("$PYTHON" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(sorted(k.split("|")[1] for k in d["gpus"]), [len(g["samples"][0]["processes"]) for g in d["gpus"].values()])' cut.got 2>&1)
[ "$got" = "['00000000:81:00.0'] [1]" ] && pass "cut XML: the complete GPU kept, the cut one not" || fail "cut XML: the complete GPU kept, the cut one not" "$got"
rm -f cut2.db
vr_run cut2 import a5000-cut2.xml --db cut2.db
"$PYTHON" "$PY/stored.py" cut2.db >cut2.got 2>&1 || true
got=$("$PYTHON" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(sorted(len(g["samples"]) for g in d["gpus"].values()))' cut2.got 2>&1)
[ "$rc" = 0 ] && [ "$got" = "[1, 2]" ] && grep -q truncated cut2.err \
    && pass "cut in a second document: the first whole, the second's first GPU" \
    || fail "cut in a second document: the first whole, the second's first GPU" "exit $rc, readings $got: $(cat cut2.err)"

# Malformed: one line naming the file, the line and the byte; nothing stored.
sed '100s#</total>#</totl>#' "$REAL/telegraf-tesla-t4.xml" >t4-bad.xml
# Where Python's expat binding puts the error: line, column (from 0), byte.
want_at=$("$PYTHON" -c '
import xml.parsers.expat as X
p = X.ParserCreate()
try:
    p.Parse(open("t4-bad.xml", "rb").read(), True)
except X.ExpatError as e:
    print("line %d, byte %d: not well-formed XML: %s (column %d)" % (e.lineno, p.ErrorByteIndex, X.ErrorString(e.code), e.offset + 1))')
rm -f bad.db
vr_run bad import t4-bad.xml --db bad.db
if crashed "$rc" bad.err; then
    fail "malformed XML: no crash" "$(cat bad.err)"
else
    [ "$rc" != 0 ] && [ "$(wc -l <bad.err)" = 1 ] && grep -q -F "t4-bad.xml: $want_at" bad.err \
        && pass "malformed XML: one line with the line and byte ($(cat bad.err))" \
        || fail "malformed XML: one line with where expat says ($want_at)" "exit $rc: $(cat bad.err)"
fi
# A failed import leaves no database it created.
[ ! -e bad.db ] && pass "malformed XML: nothing half-written (no database left)" \
    || fail "malformed XML: nothing half-written (no database left)" "$(ls -l bad.db*)"

# Billion laughs: refused at the first entity declaration, in bounded time
# and memory (the expansion would be 4 GB; the peak resident size is
# measured, not limited, so a sanitizer's shadow memory does not count).
cat >laughs.xml <<'EOF'
<?xml version="1.0"?>
<!DOCTYPE nvidia_smi_log [
 <!ENTITY a "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa">
 <!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">
 <!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">
 <!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;">
 <!ENTITY e "&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;">
 <!ENTITY f "&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;">
 <!ENTITY g "&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;">
]>
<nvidia_smi_log><gpu id="00000000:01:00.0"><uuid>GPU-1</uuid><product_name>&g;</product_name></gpu></nvidia_smi_log>
EOF
rm -f laughs.db
rc=0
peak=$("$PYTHON" -c '
import resource, subprocess, sys
try:
    r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=open("laughs.err", "w"), timeout=20).returncode
except subprocess.TimeoutExpired:
    r = 124
print(r, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)' "$VRAMREPORT" import laughs.xml --db laughs.db 2>&1)
rc=${peak%% *}
mib=${peak#* }
if crashed "$rc" laughs.err || [ "$rc" = 124 ]; then
    fail "entity expansion: refused, bounded" "exit $rc: $(head -c 300 laughs.err)"
else
    [ "$rc" != 0 ] && grep -q 'laughs.xml: line 3, byte [0-9]*: an entity declaration, refused' laughs.err \
        && pass "entity expansion: refused at the first declaration" \
        || fail "entity expansion: refused at the first declaration" "exit $rc: $(cat laughs.err)"
    [ "$mib" -lt 256 ] && pass "entity expansion: peak memory ${mib} MiB" || fail "entity expansion: peak memory under 256 MiB" "$mib MiB"
fi

# An external entity is never read either.
printf '<?xml version="1.0"?>\n<!DOCTYPE nvidia_smi_log [ <!ENTITY x SYSTEM "file:///etc/hostname"> ]>\n<nvidia_smi_log><gpu id="0000:01:00.0"><product_name>&x;</product_name></gpu></nvidia_smi_log>\n' >external.xml
rm -f external.db
vr_run ext import external.xml --db external.db
[ "$rc" != 0 ] && grep -q 'an entity declaration, refused' ext.err && pass "external entity: refused" \
    || fail "external entity: refused" "exit $rc: $(cat ext.err)"

# Unknown elements are ignored, including a memory section in a place
# nvidia-smi never puts one (after the GPU's own, so it would win).
"$PYTHON" "$PY/gen_unknown.py" "$REAL/telegraf-tesla-t4.xml"
import_check "unknown elements" t4-unknown.xml oracle_xml.py

# A process in a MIG instance belongs to that instance's row.
"$PYTHON" "$PY/gen_mig_process.py" "$REAL/telegraf-a100-sxm4-v12.xml"
import_check "MIG process" a100-mig-process.xml oracle_xml.py
got=$("$PYTHON" -c '
import json,sys
d = json.load(open(sys.argv[1]))["gpus"]
print(sorted((k.split("|")[2], [p[0] for p in g["samples"][0]["processes"]]) for k, g in d.items() if g["samples"][0]["processes"]))' "MIG process.got" 2>&1)
[ "$got" = "[('', [77]), ('GI 4 / CI 0', [4242])]" ] && pass "MIG process: in its instance, the other on the GPU" \
    || fail "MIG process: in its instance, the other on the GPU" "$got"

# Values with spaces around them, as some drivers write them.
sed -e 's#<used>1032 MiB</used>#<used> 1032 MiB </used>#' -e 's#<gpu_util>0 %</gpu_util>#<gpu_util> 0 % </gpu_util>#' \
    "$REAL/telegraf-tesla-t4.xml" >t4-spaces.xml
import_check "values with spaces" t4-spaces.xml oracle_xml.py

# A value that starts like a figure and is not one: skipped, counted, its
# line said; the rest of the GPU is read.
sed 's#<used>1032 MiB</used>#<used>10x32 MiB</used>#' "$REAL/telegraf-tesla-t4.xml" >t4-value.xml
bad_line=$(grep -n '10x32 MiB' t4-value.xml | cut -d: -f1)
rm -f value.db
vr_run value import t4-value.xml --db value.db
"$PYTHON" "$PY/stored.py" value.db >value.got 2>&1 || true
got=$("$PYTHON" -c '
import json,sys
d = json.load(open(sys.argv[1])); s = list(d["gpus"].values())[0]["samples"][0]
print(s["used"], s["total"] >> 20, len(s["processes"]), d["tally"].get("malformed_event"))' value.got 2>&1)
[ "$rc" = 0 ] && [ "$got" = "None 15360 2 1" ] && grep -q "t4-value.xml: 1 malformed value(s) of nvidia-smi -q -x skipped, the first at line $bad_line" value.err \
    && pass "malformed XML value: skipped, counted, line $bad_line said, the rest read" \
    || fail "malformed XML value: skipped, counted, line $bad_line said, the rest read" "exit $rc, got $got: $(cat value.err)"

# More MIG devices than any GPU has (20; the reader keeps 16): the rest
# are skipped and counted, and their memory never becomes the GPU's.
"$PYTHON" "$PY/gen_many_mig.py" "$REAL/telegraf-tesla-t4.xml"
rm -f manymig.db
vr_run manymig import t4-many-mig.xml --db manymig.db
"$PYTHON" "$PY/stored.py" manymig.db >manymig.got 2>&1 || true
got=$("$PYTHON" -c '
import json,sys
d = json.load(open(sys.argv[1]))["gpus"]
print(sum(1 for k in d if not k.endswith("|")), [g["samples"][0]["used"] >> 20 for k, g in d.items() if k.endswith("|")])' manymig.got 2>&1)
[ "$rc" = 0 ] && [ "$got" = "16 [1032]" ] && grep -q "4 malformed value(s)" manymig.err \
    && pass "20 MIG devices: 16 kept, 4 counted, the GPU's memory its own" \
    || fail "20 MIG devices: 16 kept, 4 counted, the GPU's memory its own" "exit $rc, got $got: $(cat manymig.err)"

# Garbage after a complete document is a syntax error, not a silent drop.
{ cat "$REAL/telegraf-gtx-1070-ti.xml"; echo 'user@host:~$ '; } >gtx-trailing.xml
vr_run trail import gtx-trailing.xml --db trail.db
[ "$rc" != 0 ] && grep -q 'gtx-trailing.xml: line 48, byte' trail.err && pass "garbage after a document: a one-line error" \
    || fail "garbage after a document: a one-line error" "exit $rc: $(cat trail.err)"

#-- -q text: malformed values, MIG devices --------------------------------------------------

# A figure that is not one is skipped and counted; the rest is read.
sed -e 's/^\(        Used  *: \)19818 MiB$/\11x9818 MiB/' -e 's/^\(        Process ID  *: \)11328$/\1eleven/' \
    exporter-capture-h100-80gb.1.txt >h100-bad.txt
bad_line=$(grep -n '1x9818 MiB' h100-bad.txt | cut -d: -f1)
rm -f qbad.db
vr_run qbad import h100-bad.txt --db qbad.db
[ "$rc" = 0 ] && grep -q "h100-bad.txt: 2 malformed value(s) of nvidia-smi -q skipped, the first at line $bad_line" qbad.err \
    && pass "malformed -q values: skipped, counted, the first line said" \
    || fail "malformed -q values: skipped, counted, the first line said ($bad_line)" "exit $rc: $(cat qbad.err)"
"$PYTHON" "$PY/stored.py" qbad.db >qbad.got
got=$("$PYTHON" -c '
import json,sys
d = json.load(open(sys.argv[1])); g = list(d["gpus"].values())[0]["samples"][0]
print(g["used"], g["total"], sorted(p[0] for p in g["processes"]), d["tally"].get("malformed_event"))' qbad.got 2>&1)
want=$("$PYTHON" -c '
import json,sys
g = list(json.load(open(sys.argv[1]))["gpus"].values())[0]["samples"][0]
print(None, g["total"], sorted(p[0] for p in g["processes"] if p[0] != 11328), 2)' exporter-capture-h100-80gb.1.txt.want 2>&1)
[ "$got" = "$want" ] && pass "malformed -q values: the rest of the GPU read" || fail "malformed -q values: the rest of the GPU read" "got $got, want $want"

# MIG devices in -q text, each with its own FB memory and a process in
# one of them, beside BAR1 sections that have a Used too.
cat >mig-q.txt <<'EOF'

==============NVSMI LOG==============

Timestamp                                 : Fri Aug  4 11:44:30 2023
Driver Version                            : 535.54.03
CUDA Version                              : 12.2

Attached GPUs                             : 1
GPU 00000000:01:00.0
    Product Name                          : NVIDIA A100-SXM4-80GB
    MIG Mode
        Current                           : Enabled
        Pending                           : Enabled
    MIG Devices
        MIG Device
            Index                         : 0
            GPU Instance ID               : 3
            Compute Instance ID           : 0
            FB Memory Usage
                Total                     : 19968 MiB
                Reserved                  : 0 MiB
                Used                      : 4012 MiB
                Free                      : 15955 MiB
            BAR1 Memory Usage
                Total                     : 32767 MiB
                Used                      : 1 MiB
                Free                      : 32766 MiB
        MIG Device
            Index                         : 1
            GPU Instance ID               : 4
            Compute Instance ID           : 0
            FB Memory Usage
                Total                     : 19968 MiB
                Reserved                  : 0 MiB
                Used                      : 12 MiB
                Free                      : 19955 MiB
    GPU UUID                              : GPU-513536b6-7d19-9063-b049-1e69664bb298
    PCI
        Bus Id                            : 00000000:01:00.0
    FB Memory Usage
        Total                             : 81920 MiB
        Reserved                          : 869 MiB
        Used                              : 4050 MiB
        Free                              : 77000 MiB
    BAR1 Memory Usage
        Total                             : 131072 MiB
        Used                              : 3 MiB
        Free                              : 131069 MiB
    Utilization
        GPU                               : N/A
        Memory                            : N/A
    Processes
        GPU instance ID                   : 3
        Compute instance ID               : 0
        Process ID                        : 4242
            Type                          : C
            Name                          : python train.py
            Used GPU Memory               : 4000 MiB
EOF
rm -f mig.db
vr_run mig import mig-q.txt --db mig.db
"$PYTHON" "$PY/stored.py" mig.db >mig.got 2>&1 || true
got=$("$PYTHON" -c '
import json,sys
d = json.load(open(sys.argv[1]))["gpus"]; M = 1 << 20
print(sorted((k.split("|")[2], g["samples"][0]["used"] // M, g["samples"][0]["total"] // M,
              [p[0] for p in g["samples"][0]["processes"]]) for k, g in d.items()))' mig.got 2>&1)
want="[('', 4050, 81920, []), ('GI 3 / CI 0', 4012, 19968, [4242]), ('GI 4 / CI 0', 12, 19968, [])]"
[ "$rc" = 0 ] && [ "$got" = "$want" ] && pass "-q MIG devices: rows of their own, the process in its instance" \
    || fail "-q MIG devices: rows of their own, the process in its instance" "exit $rc, got $got, want $want: $(cat mig.err)"

# `nvidia-smi -q -d PIDS`: processes only, no figure: the GPU and its
# processes are stored, without a reading.
cat >pids-q.txt <<'EOF'
==============NVSMI LOG==============

Timestamp                                 : Wed Jul  5 20:15:54 2023
Driver Version                            : 530.30.02
CUDA Version                              : 12.1

Attached GPUs                             : 1
GPU 00000000:01:00.0
    Processes
        GPU instance ID                   : N/A
        Compute instance ID               : N/A
        Process ID                        : 5122
            Type                          : G
            Name                          : /usr/bin/gnome-shell
            Used GPU Memory               : 1 MiB
        GPU instance ID                   : N/A
        Compute instance ID               : N/A
        Process ID                        : 3141
            Type                          : C
            Name                          : C:\tools\run: a, b.exe
            Used GPU Memory               : Not available
EOF
rm -f pids.db
vr_run pids import pids-q.txt --db pids.db
got=$("$PYTHON" -c '
import sqlite3,sys
c = sqlite3.connect(sys.argv[1])
rows = c.execute("SELECT pid, process_name, used_bytes, ts_ns IS NOT NULL, sample_id FROM process_sample ORDER BY id").fetchall()
print(c.execute("SELECT count(*) FROM gpu").fetchone()[0], c.execute("SELECT count(*) FROM gpu_sample").fetchone()[0], rows)' pids.db 2>&1)
want="1 0 [(5122, '/usr/bin/gnome-shell', 1048576, 1, None), (3141, 'C:\\\\tools\\\\run: a, b.exe', None, 1, None)]"
[ "$rc" = 0 ] && [ "$got" = "$want" ] && pass "-q -d PIDS: the GPU and its processes, no reading" \
    || fail "-q -d PIDS: the GPU and its processes, no reading" "exit $rc: got $got, want $want $(cat pids.err)"

finish
