# tests/nvsmi-q.sh runs this.
import calendar, json, re, sys, time
MIB = 1 << 20
data = open(sys.argv[1], encoding="utf-8").read().replace("\r\n", "\n")
def size(v):
    m = re.fullmatch(r"(\d+) MiB", v.strip())
    return int(m.group(1)) * MIB if m else None
def pct(v):
    m = re.fullmatch(r"(\d+) %", v.strip())
    return int(m.group(1)) if m else None
def one(pattern, block):
    m = re.search(pattern, block, re.M)
    return m.group(1).strip() if m else None
gpus = {}
for log in data.split("==============NVSMI LOG==============")[1:]:
    t = one(r"^Timestamp\s+: (.*)$", log)
    ts = calendar.timegm(time.strptime(" ".join(t.split()), "%a %b %d %H:%M:%S %Y")) * 10**9 if t else None
    blocks = re.split(r"^(?=GPU [0-9A-Fa-f]{4,8}:)", log, flags=re.M)[1:]
    attached = one(r"^Attached GPUs\s+: (\d+)$", log)
    every = attached is not None and int(attached) == len(blocks)
    for position, block in enumerate(blocks):
        bus = block.split("\n", 1)[0][4:].strip()
        uuid = one(r"^    GPU UUID\s+: (.*)$", block)
        name = one(r"^    Product Name\s+: (.*)$", block)
        fb = re.search(r"^    FB Memory Usage\n        Total\s+: (.*)\n        Reserved\s+: (.*)\n"
                       r"        Used\s+: (.*)\n        Free\s+: (.*)$", block, re.M)
        util = re.search(r"^    Utilization\n        GPU\s+: (.*)\n        Memory\s+: (.*)$", block, re.M)
        s = {"ts": ts, "total": size(fb.group(1)), "reserved": size(fb.group(2)),
             "used": size(fb.group(3)), "free": size(fb.group(4)),
             "util_gpu": pct(util.group(1)), "util_memory": pct(util.group(2)), "processes": []}
        for p in re.finditer(r"Process ID\s+: (\d+)\n\s+Type\s+: (.*)\n\s+Name\s+: (.*)\n"
                             r"\s+Used GPU Memory\s+: (.*)", block):
            s["processes"].append([int(p.group(1)), p.group(3).strip() or None,
                                   p.group(2).strip(), size(p.group(4)), ts])
        g = gpus.setdefault("%s|%s|" % (uuid, bus), {"name": name, "total": s["total"], "samples": [],
                                                    "idx": position if every else None})
        g["samples"].append(s)
print(json.dumps({"gpus": gpus}, sort_keys=True))
