# tests/hardening.sh runs this.
import json, os, sqlite3, subprocess

VR = os.environ["VRAMREPORT"]
out = open("figures.txt", "w")
MiB, GiB = 1 << 20, 1 << 30

def result(ok, desc, detail=""):
    out.write(("PASS\t%s\n" % desc) if ok else ("FAIL\t%s\t%s\n" % (desc, str(detail)[:600])))

def mem(ts, nbytes, alloc, res, addr, dev=0, name="[memory]"):
    return {"ph": "i", "name": name, "pid": 1, "tid": 1, "ts": ts,
            "args": {"Device Type": 1, "Device Id": dev, "Addr": addr, "Bytes": nbytes,
                     "Total Allocated": alloc, "Total Reserved": res}}

# The good events of cuda:0: 1 GiB, 2 GiB, the 1 GiB freed, 512 MiB.
GOOD = [mem(10, GiB, GiB, 2 * GiB, 4096), mem(20, 2 * GiB, 3 * GiB, 4 * GiB, 8192),
        mem(40, -GiB, 2 * GiB, 4 * GiB, 4096), mem(50, 512 * MiB, 2 * GiB + 512 * MiB, 4 * GiB, 12288)]

def write(name, bad):
    """GOOD with the `bad` events after its second; the first bad one's byte."""
    evs = GOOD[:2] + bad + GOOD[2:]
    text = json.dumps({"schemaVersion": 1, "traceEvents": evs})
    open(name, "w").write(text)
    return text.index(json.dumps(bad[0]))

def run(name):
    db = name + ".db"
    if os.path.exists(db):
        os.remove(db)
    p = subprocess.run([VR, "--db", db, "-o", name + ".md", name], capture_output=True, text=True)
    subprocess.run([VR, "report", "--db", db, "--format", "json", "-o", name + ".out.json", "-q"])
    c = sqlite3.connect(db)
    tallies = dict(c.execute("SELECT kind, count FROM source_tally"))
    events = c.execute("SELECT count(*) FROM mem_event").fetchone()[0]
    c.close()
    md = open(name + ".md").read() if p.returncode == 0 else ""
    js = json.load(open(name + ".out.json")) if p.returncode == 0 else {"devices": []}
    return p, tallies, events, md, js

want_alloc = max(e["args"]["Total Allocated"] for e in GOOD)
want_res = max(e["args"]["Total Reserved"] for e in GOOD)
cases = [
    ("min.json", "INT64_MIN",
     [mem(30, 512, -2**63, 4 * GiB, 20480), mem(35, 512, -2**63, 4 * GiB, 24576, dev=1)],
     "Total Allocated -9223372036854775808 is impossible (below 0)", 2),
    ("huge.json", "2^60 and a free of 2^62",
     [mem(30, 2**60, 2**60, 2**61, 20480), mem(32, -2**62, 3 * GiB, 4 * GiB, 28672),
      mem(34, MiB, 3 * GiB, -1, 32768)],
     "Total Allocated 1152921504606846976 is impossible (over 1 PiB, more than any GPU holds)", 3),
    ("over.json", "allocated over reserved",
     [mem(30, 8 * GiB, 11 * GiB, 6 * GiB, 20480)],
     "Total Allocated 11811160064 is impossible (over Total Reserved, 6442450944)", 1),
]
for name, what, bad, said, n in cases:
    at = write(name, bad)
    p, tallies, events, md, js = run(name)
    devs = [(d["id"], d["peak_allocated_bytes"], d["peak_reserved_bytes"], d["memory_events"])
            for d in js["devices"]]
    result(p.returncode == 0 and devs == [("cuda:0", want_alloc, want_res, len(GOOD))],
           "%s: the peaks are the good events' (%d, %d), the bad left out" % (what, want_alloc, want_res),
           (p.returncode, devs, p.stderr))
    result(tallies.get("malformed_event") == n and events == len(GOOD),
           "%s: %d counted as malformed_event, %d events in the database" % (what, n, len(GOOD)),
           (tallies, events))
    line = "vramreport: warning: %s: byte %d: a memory event's %s: the event is not read " \
           "(%d such event%s, counted as malformed)" % (name, at, said, n, "" if n == 1 else "s")
    result(line in p.stderr.splitlines(), "%s: stderr names the first with its byte" % what,
           p.stderr + " / want: " + line)
    result("> **Note:** %s: %d malformed record(s) skipped (unreadable, or with impossible figures)."
           % (name, n) in md and "EiB" not in md and "PiB" not in md,
           "%s: the report's note counts them; no EiB or PiB in it" % what,
           [l for l in md.splitlines() if "Note" in l or "iB" in l][:6])

# A GPU event's Total Reserved of 0, as every CPU event has, is not
# reserved memory said to be 0: the event is read.
write("zero.json", [mem(30, MiB, 3 * GiB + MiB, 0, 20480)])
p, tallies, events, md, js = run("zero.json")
result(tallies.get("malformed_event") is None and events == len(GOOD) + 1,
       "a Total Reserved of 0 under allocated memory is read", (tallies, events, p.stderr))

# An out-of-memory error happened: kept, its impossible totals not read.
at = write("oom.json", [mem(30, GiB, -2**63, 2**62, 0, name="[OutOfMemory]")])
p, tallies, events, md, js = run("oom.json")
oom = [(o["requested_bytes"], o["allocated_bytes"], o["reserved_bytes"]) for o in js.get("oom_events", [])]
result(oom == [(GiB, None, None)] and tallies.get("unreadable_oom_figure") == 2 and
       "malformed_event" not in tallies and "EiB" not in md,
       "an OOM event's impossible totals: the OOM kept, its totals not read, counted",
       (oom, tallies))
result("oom.json: byte %d: an out-of-memory event's Total Allocated -9223372036854775808 is "
       "impossible (below 0): not read (2 such figures)" % at in p.stderr,
       "an OOM event's impossible totals: stderr names the first with its byte", p.stderr)
