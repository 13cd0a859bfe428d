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

REAL=$VR_SRCDIR/tests/data/realdata/nvsmi
cd "$TMP"
need python3 || true

#-- the oracle ----------------------------------------------------------------------------

cat >oracle.py <<'PYEOF'
"""What an nvidia-smi file holds, read independently of vramreport.

python3 oracle.py KIND FILE  ->  JSON {"gpus": {key: {...}}, "start", "end"}
KIND: capture, table or csv. A GPU's key is its bus id as numbers
("0:9:0:0"), else its UUID, else "idx:N", as vramreport's gpus[] is
compared below."""
import calendar, csv, json, re, sys, time

MIB = 1 << 20
RULE = re.compile(r"^#{20,}\s*$")
CTIME = re.compile(r"^[A-Z][a-z]{2} [A-Z][a-z]{2} +\d+ \d\d:\d\d:\d\d \d{4}$")
GPU_LINE = re.compile(r"^\|\s+(\d+)\s+(.*?)\s*\|\s+([0-9A-Fa-f]+:[0-9A-Fa-f]+:[0-9A-Fa-f]+\.[0-9A-Fa-f]+)\s")
MEM_CELL = re.compile(r"\|\s*(\d+)MiB\s*/\s*(\d+)MiB\s*\|")
MIG_ROW = re.compile(r"^\|\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+\|\s*(\d+)MiB\s*/\s*(\d+)MiB\s*\|")
PROC_ROW = re.compile(r"^\|\s+(\d+)\s+(?:(?:N/A|\d+)\s+(?:N/A|\d+)\s+)?(\d+)\s+([CGM](?:\+[CGM])*)\s+(.*?)\s+(\d+MiB|N/A)\s*\|$")
MODES = ("On", "Off", "WDDM", "TCC", "MCDM", "N/A")


def bus_key(bus):
    m = re.match(r"^([0-9a-fA-F]+):([0-9a-fA-F]+):([0-9a-fA-F]+)\.([0-9a-fA-F]+)$", bus)
    return ":".join(str(int(x, 16)) for x in m.groups()) if m else bus


def key_of(uuid=None, bus=None, idx=None, mig=None):
    k = bus_key(bus) if bus else uuid if uuid else "idx:%s" % idx
    return k + ("/" + mig if mig else "")


class Gpus:
    def __init__(self):
        self.gpus, self.stamps = {}, []

    def gpu(self, key):
        return self.gpus.setdefault(key, {"samples": 0, "max_used": None, "total": None,
                                          "names": [], "procs": {}})

    def reading(self, key, used, total, name=None):
        g = self.gpu(key)
        g["samples"] += 1
        if used is not None:
            g["max_used"] = max(g["max_used"] or 0, used)
        if g["total"] is None:
            g["total"] = total
        if name:
            g["names"].append(name)

    def process(self, key, pid, name, used):
        p = self.gpu(key)["procs"].setdefault(str(pid), {"names": [], "used": None})
        p["names"].append(name)
        if used is not None:
            p["used"] = max(p["used"] or 0, used)

    def stamp(self, ns):
        if ns is not None:
            self.stamps.append(ns)


def ctime_ns(s):
    return calendar.timegm(time.strptime(re.sub(" +", " ", s), "%a %b %d %H:%M:%S %Y")) * 10**9


def csv_ns(s):
    day, _, frac = s.partition(".")
    return calendar.timegm(time.strptime(day, "%Y/%m/%d %H:%M:%S")) * 10**9 + \
        (int((frac + "000000000")[:9]) if frac else 0)


def table(lines, out):
    stamp, pending, box, gpus = None, None, None, {}
    for raw in lines:
        s = raw.rstrip()
        if CTIME.match(s.strip()):
            stamp = ctime_ns(s.strip())
            continue
        if s.startswith("| NVIDIA-SMI "):
            box, pending, gpus, table_stamp, stamp = "head", None, {}, stamp, None
            continue
        if box is None:
            continue
        if s.startswith("| Processes:"):
            box = "procs"
        elif s.startswith("| MIG devices:"):
            box = "mig"
        elif box == "head" and GPU_LINE.match(s):
            m = GPU_LINE.match(s)
            name = m.group(2)
            for mode in MODES:
                if name.endswith(" " + mode):
                    name = name[: -len(mode)].strip()
                    break
            pending = (int(m.group(1)), m.group(3), name)
        elif box == "head" and pending and MEM_CELL.search(s):
            m = MEM_CELL.search(s)
            idx, bus, name = pending
            gpus[idx] = bus
            out.reading(key_of(bus=bus), int(m.group(1)) * MIB, int(m.group(2)) * MIB, name)
            out.stamp(table_stamp)
            pending = None
        elif box == "mig" and MIG_ROW.match(s):
            m = MIG_ROW.match(s)
            mig = "GI %s / CI %s" % (m.group(2), m.group(3))
            bus = gpus.get(int(m.group(1)))
            out.reading(key_of(bus=bus, idx=m.group(1), mig=mig), int(m.group(5)) * MIB,
                        int(m.group(6)) * MIB)
            out.stamp(table_stamp)
        elif box == "procs" and PROC_ROW.match(s):
            m = PROC_ROW.match(s)
            bus = gpus.get(int(m.group(1)))
            if bus is None:
                continue
            used = int(m.group(5)[:-3]) * MIB if m.group(5) != "N/A" else None
            out.process(key_of(bus=bus), int(m.group(2)), m.group(4), used)
            out.stamp(table_stamp)


def size(v, header_unit):
    v = v.strip()
    if not v or v == "N/A" or v.startswith("["):
        return None
    m = re.match(r"^(\d+)\s*(MiB)?$", v)
    return int(m.group(1)) * MIB


def query_csv(lines, out, fields=None):
    header = fields
    for row in csv.reader(lines, skipinitialspace=True):
        row = [c.strip() for c in row]
        if not row or row == [""]:
            continue
        if any(c.split(" [")[0] in ("memory.used", "pid", "timestamp", "index", "uuid") for c in row) \
                and all(re.match(r"^[A-Za-z][\w.]*( \[.*\])?$", c) for c in row):
            header = [c.split(" [")[0] for c in row]
            continue
        if header is not None and len(row) > len(header) and "process_name" in header:
            i, extra = header.index("process_name"), len(row) - len(header)
            row[i:i + extra + 1] = [", ".join(row[i:i + extra + 1])]
        if header is None or len(row) != len(header):
            continue
        r = dict(zip(header, row))
        na = lambda k: r.get(k) if r.get(k) not in (None, "", "N/A") and not r.get(k, "").startswith("[") else None
        try:
            ts = csv_ns(r["timestamp"]) if na("timestamp") else None
            if "pid" in header:
                bus, uuid = na("gpu_bus_id"), na("gpu_uuid")
                if not bus and not uuid:
                    continue
                out.process(key_of(uuid, bus), int(r["pid"]), r.get("process_name") or r.get("name"),
                            size(r.get("used_gpu_memory", r.get("used_memory", "")), MIB))
            else:
                key = key_of(na("uuid") or na("gpu_uuid"), na("pci.bus_id") or na("gpu_bus_id"),
                             na("index"))
                out.reading(key, size(r.get("memory.used", ""), MIB),
                            size(r.get("memory.total", ""), MIB), na("name") or na("gpu_name"))
        except (ValueError, AttributeError, KeyError):
            continue  # malformed: vramreport skips and counts it
        out.stamp(ts)


def query_text(lines, out):
    """nvidia-smi -q: a reading of each "GPU <bus id>" section of each
    NVSMI LOG block, from its "FB Memory Usage" (Used, Total) and its
    Product Name; the block's Timestamp. Processes: Process ID, Name,
    Used GPU Memory."""
    stamp, gpu, section, fields, proc = None, None, None, {}, {}

    def end_gpu():
        if gpu is not None:
            used = fields.get("Used")
            total = fields.get("Total")
            out.reading(key_of(bus=gpu), int(used.split()[0]) * MIB if used and used[0].isdigit() else None,
                        int(total.split()[0]) * MIB if total and total[0].isdigit() else None,
                        fields.get("Product Name"))
            out.stamp(stamp)

    def end_proc():
        if gpu is not None and proc.get("Process ID", "").isdigit():
            used = proc.get("Used GPU Memory", "")
            out.process(key_of(bus=gpu), int(proc["Process ID"]), proc.get("Name", ""),
                        int(used.split()[0]) * MIB if used[:1].isdigit() else None)

    for raw in lines:
        s = raw.rstrip()
        indent = len(s) - len(s.lstrip())
        m = re.match(r"^GPU ([0-9A-Fa-f]+:[0-9A-Fa-f]+:[0-9A-Fa-f]+\.[0-9A-Fa-f]+)$", s)
        if m:
            end_proc(); end_gpu()
            gpu, section, fields, proc = m.group(1), None, {}, {}
            continue
        kv = re.match(r"^\s*([^:]+?)\s*:\s*(.*)$", s)
        if indent == 0 and kv and kv.group(1) == "Timestamp":
            end_proc(); end_gpu()
            gpu = None
            stamp = ctime_ns(kv.group(2).strip())
            continue
        if gpu is None:
            continue
        if indent == 4 and not kv:
            end_proc()
            section, proc = s.strip(), {}
        elif indent == 4 and kv and section is None or (indent == 4 and kv and kv.group(1) == "Product Name"):
            fields.setdefault(kv.group(1), kv.group(2).strip())
        elif section == "FB Memory Usage" and indent == 8 and kv:
            fields[kv.group(1)] = kv.group(2).strip()
        elif section == "Processes" and kv:
            if kv.group(1) == "GPU instance ID":
                end_proc(); proc = {}
            proc[kv.group(1)] = kv.group(2).strip()
    end_proc(); end_gpu()


# What each command of a capture holds; the first that matches (-q -x
# sections are not read inside a capture: counted as unread_section).
COMMANDS = [
    (re.compile(r"-q -x|--xml-format"), "skip"),
    (re.compile(r"(^|\s)(-q|--query)(\s|$)"), "query"),
    (re.compile(r"--query-gpu="), "csv"),
    (re.compile(r"--query-compute-apps="), "csv"),
    (re.compile(r"^nvidia-smi(\s+-l\s+\d+)?\s*$"), "table"),  # alone, or repeated
]


def capture(lines, out):
    sections, head, body, cmd = [], False, [], None
    for line in lines + ["#" * 80]:
        if RULE.match(line):
            if not head:
                sections.append((cmd, body))
                cmd, body = None, []
            head = not head
        elif head:
            if line.startswith("# $ "):
                cmd = line[4:].strip()
        else:
            body.append(line)
    for cmd, body in sections:
        for pattern, kind in COMMANDS:
            if cmd and pattern.search(cmd):
                if kind == "skip":
                    break
                if kind == "table":
                    table(body, out)
                    break
                if kind == "query":
                    query_text(body, out)
                    break
                # --format=csv,noheader: the command line names the fields.
                m = re.search(r"--query-(?:gpu|compute-apps)=(\S+)", cmd)
                query_csv(body, out, m.group(1).split(",") if "noheader" in cmd else None)
                break


def main():
    kind, path = sys.argv[1], sys.argv[2]
    text = open(path, encoding="utf-8", errors="replace", newline="").read()
    lines = [l[:-1] if l.endswith("\r") else l for l in text.split("\n")]
    if lines and lines[0].startswith("\ufeff"):
        lines[0] = lines[0][1:]
    out = Gpus()
    {"capture": capture, "table": table, "csv": query_csv}[kind](lines, out)
    for g in out.gpus.values():
        whole = [n for n in g["names"] if not n.endswith("...")]
        g["name"] = max(whole or g["names"], key=len) if g["names"] else None
        del g["names"]
        for p in g["procs"].values():
            p["name"] = max(p["names"], key=len)
            del p["names"]
    print(json.dumps({"gpus": out.gpus, "start": min(out.stamps) if out.stamps else None,
                      "end": max(out.stamps) if out.stamps else None}, sort_keys=True))


main()
PYEOF

# compare.py WANT JSON LABEL: the report's gpus[] and source against the oracle.
cat >compare.py <<'PYEOF'
import json, re, sys
want = json.load(open(sys.argv[1]))
d = json.load(open(sys.argv[2]))
label = sys.argv[3]

def say(desc, got, exp):
    ok = got == exp
    print(("PASS\t%s: %s" % (label, desc)) if ok else
          ("FAIL\t%s: %s\tgot %r, want %r" % (label, desc, got, exp)))

def bus_key(bus):
    m = re.match(r"^([0-9a-fA-F]+):([0-9a-fA-F]+):([0-9a-fA-F]+)\.([0-9a-fA-F]+)$", bus)
    return ":".join(str(int(x, 16)) for x in m.groups()) if m else bus

def key(g):
    k = bus_key(g["pci_bus_id"]) if g["pci_bus_id"] else g["uuid"] if g["uuid"] else "idx:%s" % g["idx"]
    return k + ("/" + g["mig"] if g["mig"] else "")

got = {key(g): g for g in d["gpus"]}
say("the GPUs", sorted(got), sorted(want["gpus"]))
for k, w in sorted(want["gpus"].items()):
    g = got.get(k)
    if not g:
        continue
    say("GPU %s: readings" % k, g["smi_samples"], w["samples"])
    say("GPU %s: most memory used" % k, g["smi_max_used_bytes"], w["max_used"])
    say("GPU %s: memory total" % k, g["memory_total_bytes"], w["total"])
    if w["name"] is not None:
        say("GPU %s: name" % k, g["name"], w["name"])
    procs = {str(p["pid"]): {"name": p["name"], "used": p["used_bytes"]} for p in g["smi_processes"]}
    say("GPU %s: processes (pid, name, most used)" % k, procs, w["procs"])
src = d["sources"][0]
say("first and last time", (src["start_ts_ns"], src["end_ts_ns"]), (want["start"], want["end"]))
if want["start"] is not None:
    say("times read as wall clock", src["clock"].split(" (")[0], "wall clock")
PYEOF

# check_file KIND FILE LABEL [vramreport options]: import, report, compare.
check_file() {
    kind=$1 file=$2 label=$3
    shift 3
    "$PYTHON" oracle.py "$kind" "$file" >"$label.want" 2>oracle.err ||
        { fail "$label: the oracle reads it" "$(cat oracle.err)"; return; }
    vr_run "$label" "$file" --format json -o "$label.json" -q "$@"
    if [ "$rc" != 0 ]; then
        fail "$label: imported and reported" "exit $rc: $(cat "$label.err")"
        return
    fi
    pass "$label: imported and reported"
    "$PYTHON" compare.py "$label.want" "$label.json" "$label" >"$label.tap" 2>&1 ||
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

"$PYTHON" - <<'PYEOF' || fail "python3 wrote the CSV variants"
import re
# The H100 capture's header (a subset of its fields, in its order) and
# values; two GPUs, three samples a second apart (-l 1).
HEAD = ["timestamp", "name", "uuid", "pci.bus_id", "index", "memory.total [MiB]",
        "memory.reserved [MiB]", "memory.used [MiB]", "memory.free [MiB]",
        "utilization.gpu [%]", "utilization.memory [%]"]
GPUS = [("NVIDIA H100 80GB HBM3", "GPU-6a5d1c2e-0000-4000-8000-000000000001", "00000000:00:09.0", 0),
        ("NVIDIA H100 80GB HBM3", "GPU-6a5d1c2e-0000-4000-8000-000000000002", "00000000:00:0A.0", 1)]
USED = [[0, 19818, 20512], [4, 1542, 81000]]

def rows(units=True, order=HEAD):
    out = []
    for t in range(3):
        for g, (name, uuid, bus, idx) in enumerate(GPUS):
            used = USED[g][t]
            vals = {"timestamp": "2026/07/14 08:12:%02d.%03d" % (53 + t, 353 + t),
                    "name": name, "uuid": uuid, "pci.bus_id": bus, "index": str(idx),
                    "memory.total [MiB]": "81559", "memory.reserved [MiB]": "479",
                    "memory.used [MiB]": str(used), "memory.free [MiB]": str(81559 - 479 - used),
                    "utilization.gpu [%]": "100", "utilization.memory [%]": "11"}
            if units:
                for k in vals:
                    if k.endswith("[MiB]"):
                        vals[k] += " MiB"
                    elif k.endswith("[%]"):
                        vals[k] += " %"
            out.append(", ".join(vals[k] for k in order))
    return out

def write(path, lines, end="\n", last_end=True):
    with open(path, "w", newline="") as f:
        f.write(end.join(lines) + (end if last_end else ""))

write("units.csv", [", ".join(HEAD)] + rows())
write("nounits.csv", [", ".join(HEAD)] + rows(units=False))
sub = ["memory.used [MiB]", "index", "timestamp", "memory.total [MiB]"]
write("subset.csv", [", ".join(sub)] + rows(order=sub))
# [N/A] and [Not Supported] where a figure is unavailable.
na = rows()
na[0] = na[0].replace("0 MiB, 81080 MiB", "[N/A], [N/A]")
na[3] = re.sub(r", 81559 MiB, 479 MiB, 1542 MiB", ", [Not Supported], [Not Supported], 1542 MiB", na[3])
write("na.csv", [", ".join(HEAD)] + na)
# A restarted -l log: the header again mid-file, another order; CRLF.
sub2 = ["index", "timestamp", "memory.used [MiB]", "pci.bus_id"]
write("restarted.csv", [", ".join(HEAD)] + rows()[:2] + [", ".join(sub2)] + rows(order=sub2)[2:],
      end="\r\n")
# Malformed: a value that is not a size, and a last row cut by a killed
# job (no newline).
bad = rows()
bad[1] = bad[1].replace("4 MiB", "four MiB")
bad[5] = bad[5][: len(bad[5]) // 2]
write("malformed.csv", [", ".join(HEAD)] + bad, last_end=False)
# --format=csv,noheader: the fields are unknown.
write("noheader.csv", rows())
# --query-compute-apps, real header (the capture's), two GPUs.
AH = "timestamp, gpu_name, gpu_bus_id, gpu_serial, gpu_uuid, pid, process_name, used_gpu_memory [MiB]"
apps = [AH]
for t, (pid, g, name, used) in enumerate([(11327, 0, "/root/tools/memhog", "2566 MiB"),
                                          (11345, 0, "./gpu_burn", "15690 MiB"),
                                          (11345, 0, "./gpu_burn", "15700 MiB"),
                                          (2201, 1, "python train.py, rank 1", "[N/A]"),
                                          (2201, 1, "python train.py, rank 1", "812 MiB")]):
    n, uuid, bus, idx = GPUS[g]
    apps.append("2026/07/14 08:12:%02d.500, %s, %s, 0000000000000, %s, %d, %s, %s"
                % (53 + t, n, bus, uuid, pid, name, used))
write("apps.csv", apps)
PYEOF

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

# A used figure no GPU can hold (99999999999999 MiB: it saturated at
# 8 EiB and became the peak) is a malformed row: skipped and counted.
printf 'timestamp,memory.used,memory.total\n1762903990,594, 24564\n1762903991,99999999999999, 24564\n1762903992,1073741825 MiB, 24564\n' >absurd.csv
vr_run absurd absurd.csv --format json -o absurd.json
got=$(json_get absurd.json '([(g["smi_samples"], g["smi_max_used_bytes"]) for g in d["gpus"]], d["sources"][0]["tolerated"])')
[ "$got" = "([(1, 622854144)], {'malformed_line': 2})" ] && grep -q 'absurd.csv: 2 malformed or cut line(s) skipped' absurd.err &&
    pass "absurd.csv: memory.used over 1 PiB skipped as malformed, kept out of the peak, said on stderr" ||
    fail "absurd.csv: memory.used over 1 PiB skipped as malformed" "$got $(cat absurd.err)"

#-- the table -----------------------------------------------------------------------------

"$PYTHON" - "$REAL/exporter-capture-h100-80gb.txt" <<'PYEOF' || fail "python3 wrote the tables"
import re, sys
text = open(sys.argv[1], encoding="utf-8").read()
# The load section's table, as `nvidia-smi` alone prints it.
sec = text.split("# $ nvidia-smi \n")[2].split("\n", 1)[1]
single = sec[: sec.index("\n\n\n")] + "\n"
open("single.txt", "w").write(single)
# `nvidia-smi -l 1`: the same table three times, a second apart, other
# figures; the log ends in a process row cut by a killed job.
tables = []
for t, used in enumerate([19818, 20500, 30999]):
    tab = single.replace("08:12:53", "08:12:%02d" % (53 + t)).replace("19818MiB", "%dMiB" % used)
    tab = tab.replace("  2566MiB", "%6dMiB" % (2566 + t))
    tables.append(tab)
rep = "\n".join(tables)
rep = rep[: rep.rindex("./gpu_burn") + 14]
open("repeated.txt", "w").write(rep)
PYEOF
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
"$PYTHON" - "$REAL/exporter-capture-h100-80gb.txt" <<'PYEOF' || fail "python3 wrote own-capture.txt"
import sys
text = open(sys.argv[1], encoding="utf-8").read()
sec = text.split("# $ nvidia-smi \n")[2].split("\n", 1)[1]
table = sec[: sec.index("\n\n\n")] + "\n"
rule = "#" * 72
def section(cmd, body):
    return "%s\n# $ %s\n%s\n%s\n\n" % (rule, cmd, rule, body)
out = section("nvidia-smi --query-gpu=index,pci.bus_id,memory.used,memory.total --format=csv,noheader,nounits -lms 500",
              "0, 00000000:00:09.0, 19818, 81559\n0, 00000000:00:09.0, 20001, 81559\n0, 00000000:00:09.0, [N/A], 81559")
out += section("nvidia-smi -l 1", table + "\n" + table.replace("08:12:53", "08:12:54"))
out += section("nvidia-smi -q", "==============NVSMI LOG==============\n\nTimestamp : Tue Jul 14 08:12:53 2026")
out += section("uptime", " 08:12:55 up 3 days")
out += section("nvidia-smi pmon -c 1", "# gpu  pid  type\n    0  11345  C")
open("own-capture.txt", "w").write(out)
PYEOF
check_file capture own-capture.txt own-capture.txt
got=$(json_get own-capture.txt.json '(d["gpus"][0]["smi_samples"], d["sources"][0]["tolerated"])')
[ "$got" = "(5, {})" ] &&
    pass "own-capture.txt: noheader rows by their command's fields, 2 tables, an empty -q" ||
    fail "own-capture.txt: 3 CSV rows + 2 tables, an empty -q" "$got"

#-- which of the job's devices a GPU is --------------------------------------------------------

# A profiler trace of one H100 (cuda:0) and the H100's capture: matched by
# index (the only rule both sides allow); then, with the device given an
# identity, by UUID, by bus id (a 4-digit domain against nvidia-smi's 8),
# and by nothing when the UUIDs differ.
trace=$VR_SRCDIR/tests/data/realdata/kineto/tracelens-h100-bert-small.json.gz
vr_run mimp import "$trace" "$cap" --db match.db -q
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
    "$PYTHON" - "$f" "junk-$base" <<'PYEOF'
import random, sys
data = bytearray(open(sys.argv[1], "rb").read())
rnd = random.Random(9)
for _ in range(len(data) // 50):
    data[rnd.randrange(len(data))] = rnd.choice(b"|,/:[]0123456789 \n\x00\xff-")
open(sys.argv[2], "wb").write(bytes(data))
PYEOF
    vr_run junk "junk-$base" -o junk.md
    if crashed "$rc" junk.err; then
        fail "junk-$base: no crash" "exit $rc: $(head -c 400 junk.err)"
    else
        pass "junk-$base: no crash (exit $rc)"
    fi
done

finish
