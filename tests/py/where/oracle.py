# tests/where.sh runs this.
"""Each allocation's place, found by the Python parent ids (not by time
nesting), and what is live at the peak grouped as the report groups it."""
import gzip, json, sys

def load(path):
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt") as fh:
        return json.load(fh)["traceEvents"]

def is_user(name):
    if name.startswith("nn.Module: ") or name.startswith("<") or "): " not in name:
        return None
    file, rest = name.rsplit("(", 1)
    line, function = rest.split("): ", 1)
    if file.startswith("torch/") or "site-packages" in file or file == "contextlib.py":
        return None
    return "%s:%s in %s" % (file, line, function)

def places(events):
    py = [e for e in events if e.get("cat") == "python_function"]
    by_id = {e["args"]["Python id"]: e for e in py}
    out = {}
    for m in events:
        if m.get("name") != "[memory]" or m["args"]["Bytes"] <= 0:
            continue
        t, tid = float(m["ts"]), m["tid"]
        inside = [e for e in py if e["tid"] == tid and
                  float(e["ts"]) <= t <= float(e["ts"]) + float(e["dur"])]
        frame, modules = None, []
        if inside:
            cur = max(inside, key=lambda e: (float(e["ts"]), e["args"]["Python id"]))
            child = None
            while cur is not None:
                if frame is None:
                    frame = is_user(cur["name"])
                    site = child["args"].get("CallFrom") if frame and child else None
                    if site and site.rsplit(":", 1)[0] == frame.split(":")[0]:
                        frame = "%s:%s in %s" % (frame.split(":")[0], site.rsplit(":", 1)[1],
                                                 frame.split(" in ", 1)[1])
                child = cur
                if cur["name"].startswith("nn.Module: "):
                    modules.append(cur["name"][len("nn.Module: "):])
                cur = by_id.get(cur["args"].get("Python parent id"))
        out[m["args"]["Addr"]] = (frame, ".".join(reversed(modules)) or None)
    return out

def innermost_op(events, m):
    t = float(m["ts"])
    ops = [e for e in events if e.get("cat") == "cpu_op" and e["tid"] == m["tid"]
           and float(e["ts"]) <= t <= float(e["ts"]) + float(e["dur"])]
    return max(ops, key=lambda e: float(e["ts"]))["name"] if ops else None

def live_groups(events, by_line):
    mem = sorted([e for e in events if e.get("name") == "[memory]"
                  and e["args"].get("Device Type") == 1 and e["args"].get("Device Id") == 0],
                 key=lambda e: float(e["ts"]))
    peak = max(range(len(mem)), key=lambda i: (mem[i]["args"]["Total Allocated"], -i))
    live = {}
    for e in mem[:peak + 1]:
        a = e["args"]
        if a["Bytes"] > 0:
            live[a["Addr"]] = e
        else:
            live.pop(a["Addr"], None)
    where = places(events) if by_line else {}
    groups = {}
    for addr, e in live.items():
        if by_line:
            frame, module = where[addr]
            key = (module, frame)
        else:
            key = (innermost_op(events, e),)
        g = groups.setdefault(key, [0, 0])
        g[0] += e["args"]["Bytes"]
        g[1] += 1
    return groups

if __name__ == "__main__":
    events = load(sys.argv[2])
    if sys.argv[1] == "places":
        print(json.dumps({str(k): v for k, v in places(events).items()}, sort_keys=True))
    else:
        g = live_groups(events, sys.argv[1] == "line")
        print(json.dumps(sorted([[list(k), v] for k, v in g.items()], key=str)))
