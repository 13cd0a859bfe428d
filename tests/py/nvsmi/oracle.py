# tests/nvsmi.sh runs this.
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
