# tests/many.sh runs this.
import json, os, re, subprocess, sys

vr = sys.argv[1]
MiB, GiB = 1 << 20, 1 << 30
SHOWN = 16

def result(ok, desc, detail=""):
    print(("PASS\t" + desc) if ok else ("FAIL\t" + desc + "\t" + str(detail).replace("\n", " | ")[:1500]))

def run(*args):
    p = subprocess.run([vr] + list(args), capture_output=True)
    return p.returncode, p.stderr.decode("utf-8", "replace")

def size_of(d):
    return (100 + (d * 37) % 900) * MiB

def trace(path, n):
    """One trace, n devices; device d allocates size_of(d) three times
    (its peak: 3x) and frees one."""
    ev, ts = [], 0
    for d in range(n):
        alloc = 0
        for k in range(4):
            b = size_of(d) if k < 3 else -size_of(d)
            alloc += b
            ts += 1
            ev.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]",
                       "pid": 1, "tid": 1, "ts": ts,
                       "args": {"Total Reserved": 4 * GiB, "Total Allocated": alloc, "Bytes": b,
                                "Addr": (1 << 40) + d * (1 << 32) + (k % 3) * GiB,
                                "Device Id": d, "Device Type": 1}})
    with open(path, "w") as f:
        json.dump({"schemaVersion": 1, "baseTimeNanoseconds": 1700000000000000000,
                   "traceEvents": ev}, f)

def report(inp, out):
    rc, err = run(inp, "-o", out)
    return open(out, encoding="utf-8").read() if rc == 0 else None, err

# 1. 40 devices: 16 in full, 24 summed up
trace("t40.json", 40)
text, err = report("t40.json", "t40.json.out.json")
d = json.loads(text) if text else {}
peaks = {"cuda:%d" % i: 3 * size_of(i) for i in range(40)}
full = [x["id"] for x in d.get("devices", [])]
more = d.get("more_devices", [])
flagged = {f.get("device") for f in d.get("findings", []) if f.get("device")}
order = sorted(peaks, key=lambda k: (k not in flagged, -peaks[k], int(k.split(":")[1])))
lowest = min(peaks, key=lambda k: (peaks[k], int(k.split(":")[1])))
want = set(order[:SHOWN - 1]) | {lowest} if lowest not in order[:SHOWN - 1] else set(order[:SHOWN])
result(len(full) == SHOWN and set(full) == want,
       "40 devices: 16 in full, those named by a finding, the highest peaks and the lowest",
       (sorted(full), sorted(want)) if d else err)
result(len(more) == 24 and {x["id"] for x in more} == set(peaks) - set(full) and
       all(x["peak_allocated_bytes"] == peaks[x["id"]] for x in more) and
       all("top_allocations" not in x and "steps" not in x for x in more),
       "more_devices[]: the 24 others, each with its peak, no details", more[:2])
rest = [peaks[k] for k in peaks if k not in full] or [0]
s = d.get("devices_summary") or {}
result(s.get("count") == 40 and s.get("in_full") == 16 and s.get("more") == 24 and
       s.get("more_low_bytes") == min(rest) and s.get("more_high_bytes") == max(rest),
       "devices_summary: 40, 16 in full, 24 more, their peaks' range", s)
md, err = report("t40.json", "t40.md")
m = re.search(r"\*\*24 more devices\*\* are not shown in full: peak allocated from ([^ ]+ [A-Za-z]+) to ([^ ]+ [A-Za-z]+)\.", md or "")
def mib(t):
    v, u = t.split()
    return float(v) * {"MiB": MiB, "GiB": GiB}[u]
result(m is not None and abs(mib(m.group(1)) - min(rest)) <= 0.01 * min(rest) and
       abs(mib(m.group(2)) - max(rest)) <= 0.01 * max(rest),
       "Markdown: '24 more devices are not shown in full: peak allocated from X to Y'",
       (m and m.groups(), min(rest), max(rest), (md or err)[-600:]))
heads = sorted(set(re.findall(r"^### (cuda:\d+)", md or "", re.M)))
result(set(heads) == set(full), "Markdown: a section for each device in full, none for the others",
       (heads, sorted(full)))

# 2. the report's size does not grow with the devices
trace("t80.json", 80)
sizes = {}
for fmt in ("md", "html"):
    a, _ = report("t40.json", "t40." + fmt)
    b, err = report("t80.json", "t80." + fmt)
    sizes[fmt] = (len(a or ""), len(b or ""))
    result(a and b and len(b) <= len(a) * 1.05 + 2048,
           "%s: 80 devices give a report the size of 40's (%d and %d bytes)" % (fmt, len(a or ""), len(b or "")),
           err)
d80 = json.loads(report("t80.json", "t80.out.json")[0] or "{}")
result(len(d80.get("devices", [])) == 16 and len(d80.get("more_devices", [])) == 64,
       "JSON of 80 devices: 16 in full, one row of figures for each of the 64 others")

# 3. memory prints of 40 ranks: ranks 5 and 23 grow, the others do not
def to_b(mb):
    return mb * MiB
with open("prints.log", "w") as f:
    for step in range(1, 13):
        for r in range(40):
            a = 8000 + (r % 7) * 100 + (step * 50 if r in (5, 23) else 0)
            f.write("[rank%d]: 2026-11-30 10:00:%02d,000 INFO step %d allocated: %d MB, reserved: %d MB\n"
                    % (r, step, step, a, a + 2000))
text, err = report("prints.log", "prints.json")
d = json.loads(text) if text else {}
rows, more = d.get("memory_prints", []), d.get("more_memory_prints", [])
maxima = {r: to_b(8000 + (r % 7) * 100 + (600 if r in (5, 23) else 0)) for r in range(40)}
order = sorted(maxima, key=lambda r: (r not in (5, 23), -maxima[r], r))
low = min(maxima, key=lambda r: (maxima[r], r))
want = set(order[:SHOWN - 1]) | {low}
got = {x["rank"] for x in rows}
result(len(rows) == 16 and got == want and all(len(x.get("points", [])) == 12 for x in rows),
       "40 ranks' prints: 16 rows shown, the growing ones first, each with its 12 points",
       (sorted(got), sorted(want)))
result(len(more) == 24 and all("points" not in x for x in more) and
       all(x["max_allocated_bytes"] == maxima[x["rank"]] and x["samples"] == 12 for x in more),
       "more_memory_prints[]: the 24 others, figures without points", more[:1])
rest = [maxima[x["rank"]] for x in more] or [0]
s = d.get("memory_prints_summary") or {}
result(s.get("more") == 24 and s.get("more_low_bytes") == min(rest) and s.get("more_high_bytes") == max(rest),
       "memory_prints_summary: 24 more, their max allocated's range", s)
leaks = sorted(f.get("rank") for f in d.get("findings", []) if f.get("kind") == "leak")
growth = {f.get("rank"): f.get("evidence", {}).get("leak_per_step_bytes", {}).get("value")
          for f in d.get("findings", []) if f.get("kind") == "leak"}
result(leaks == [5, 23] and growth == {5: 50 * MiB, 23: 50 * MiB},
       "the two growing ranks, and no other, get a leak finding of 50 MiB a step", (leaks, growth))
md, err = report("prints.log", "prints.md")
table = [l for l in (md or "").split("\n") if l.startswith("| prints.log, lines")]
result(len(table) == 16 and "**24 more rows** are not shown" in (md or ""),
       "Markdown: 16 rows of prints and '24 more rows are not shown'", (len(table), err))
