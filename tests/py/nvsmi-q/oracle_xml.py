# tests/nvsmi-q.sh runs this.
import calendar, json, re, sys, time
import xml.etree.ElementTree as ET
MIB = 1 << 20
def size(e):
    if e is None or e.text is None: return None
    m = re.fullmatch(r"\s*(\d+)\s*MiB\s*", e.text)
    return int(m.group(1)) * MIB if m else None
def pct(e):
    if e is None or e.text is None: return None
    m = re.fullmatch(r"\s*(\d+)\s*%\s*", e.text)
    return int(m.group(1)) if m else None
def text(e):
    return e.text.strip() if e is not None and e.text and e.text.strip() else None
def stamp(root):
    t = text(root.find("timestamp"))
    if t is None: return None
    return calendar.timegm(time.strptime(" ".join(t.split()), "%a %b %d %H:%M:%S %Y")) * 10**9
def memory(fb, util=None):
    return {"used": size(fb.find("used")), "total": size(fb.find("total")),
            "free": size(fb.find("free")), "reserved": size(fb.find("reserved")),
            "util_gpu": pct(util.find("gpu_util")) if util is not None else None,
            "util_memory": pct(util.find("memory_util")) if util is not None else None}
def documents(data):
    # `-l` concatenates whole documents: split at each XML declaration.
    parts = re.split(r"(?=<\?xml )", data)
    return [p for p in parts if p.strip()]
gpus = {}
def add(key, name, total, sample, idx):
    g = gpus.setdefault(key, {"name": name, "total": total, "idx": idx, "samples": []})
    if g["idx"] is None:
        g["idx"] = idx
    g["samples"].append(sample)
for doc in documents(open(sys.argv[1], encoding="utf-8").read()):
    root = ET.fromstring(doc)
    ts = stamp(root)
    listed, attached = root.findall("gpu"), text(root.find("attached_gpus"))
    every = attached is not None and int(attached) == len(listed)
    for position, gpu in enumerate(listed):
        idx = position if every else None
        uuid, bus, name = text(gpu.find("uuid")), gpu.get("id"), text(gpu.find("product_name"))
        s = memory(gpu.find("fb_memory_usage"), gpu.find("utilization"))
        s["ts"] = ts
        migs = {}
        for d in gpu.findall("mig_devices/mig_device"):
            gi, ci = text(d.find("gpu_instance_id")), text(d.find("compute_instance_id"))
            m = memory(d.find("fb_memory_usage"))
            m.update(ts=ts, processes=[])
            migs[(gi, ci)] = m
            add("%s|%s|GI %s / CI %s" % (uuid, bus, gi, ci), name, m["total"], m, idx)
        s["processes"] = []
        for p in gpu.findall("processes/process_info"):
            row = [int(text(p.find("pid"))), text(p.find("process_name")), text(p.find("type")),
                   size(p.find("used_memory")), ts]
            where = migs.get((text(p.find("gpu_instance_id")), text(p.find("compute_instance_id"))))
            (where or s)["processes"].append(row)
        add("%s|%s|" % (uuid, bus), name, s["total"], s, idx)
print(json.dumps({"gpus": gpus}, sort_keys=True))
