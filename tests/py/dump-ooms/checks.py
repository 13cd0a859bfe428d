# tests/dump-ooms.sh runs this: VRAMREPORT SUMMARY-DIR. Each dump's OOM
# count and figures are read here from the dump's own text or JSON.
import json
import os
import re
import sqlite3
import subprocess
import sys

VR = sys.argv[1]
REAL = sys.argv[2]
MiB = 1 << 20


def result(cond, what, got=None):
    print("%s\t%s%s" % ("PASS" if cond else "FAIL", what, "" if cond else "\tgot: %r" % (got,)))


def report(path, name):
    db = name + ".db"
    if os.path.exists(db):
        os.remove(db)
    p = subprocess.run([VR, path, "--db", db, "-f", "json", "-o", name + ".json", "-q"],
                       capture_output=True, text=True)
    result(p.returncode == 0, "%s: reported" % name, p.stderr)
    with open(name + ".json") as f:
        return json.load(f), sqlite3.connect(db)


def size(text):
    """A memory_summary() size, as PyTorch before 1.8 (MB, binary) or after
    (MiB) printed it."""
    m = re.match(r"\s*([0-9.]+)\s*([KMG]i?B|B)\s*$", text)
    n, unit = float(m.group(1)), m.group(2).replace("i", "")
    return round(n * {"B": 1, "KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30}[unit])


# 1. The real box of pytorch/pytorch#35901, printed after the job's OOM
# ("CUDA OOMs: 1"; the thread found its cause: a fragmented 11.6 GB cache).
path = os.path.join(REAL, "pytorch__pytorch__issue35901__memory_summary_PARTIAL.txt")
text = open(path).read()
ooms = int(re.search(r"CUDA OOMs:\s*(\d+)", text).group(1))
alloc = size(re.search(r"\| Allocated memory\s*\|([^|]+)\|", text).group(1))
reserved = size(re.search(r"\| GPU reserved memory\s*\|([^|]+)\|", text).group(1))
doc, db = report(path, "issue35901")
rows = db.execute("SELECT total_allocated, total_reserved, message, wording, device_idx"
                  " FROM oom_event").fetchall()
result(ooms == 1 and rows == [(alloc, reserved, "CUDA OOMs: 1", "memory_summary", 0)],
       "issue35901: CUDA OOMs: 1 is one OOM event, allocated %d and reserved %d as the box says" %
       (alloc, reserved), rows)
v = doc["verdict"]
result(v["state"] == "failed", "issue35901: the verdict is FAILED, not OK", v)
kinds = [(f["kind"], f["confidence"]) for f in doc["findings"]]
result(kinds and kinds[0] == ("fragmentation", "low") and reserved - alloc >= 1 << 30 and
       reserved - alloc >= alloc,
       "issue35901: %d MiB free in the cache beside %d MiB allocated: fragmentation (low)" %
       ((reserved - alloc) // MiB, alloc // MiB), kinds)
ids = [a["id"] for a in doc.get("advice", [])]
result("expandable-segments" in ids, "issue35901: the advice has expandable segments", ids)

# 2. A real box with CUDA OOMs: 0: no OOM event.
path = os.path.join(REAL, "mlcommons__algorithmic-efficiency__issue425__memory_summary_PARTIAL.txt")
doc, db = report(path, "issue425")
n = db.execute("SELECT count(*) FROM oom_event").fetchone()[0]
result("CUDA OOMs: 0" in open(path).read() and n == 0 and doc["verdict"]["state"] != "failed",
       "issue425: CUDA OOMs: 0 is no OOM", (n, doc["verdict"]))

# 3. memory_stats() JSON, two dumps of two devices: num_ooms 2 on one, 0 on
# the other: one event, of device 1, with its figures.
stats = {"0": {"num_ooms": 0, "allocated_bytes.all.current": 100 * MiB,
               "reserved_bytes.all.current": 200 * MiB},
         "1": {"num_ooms": 2, "allocated_bytes.all.current": 7000 * MiB,
               "reserved_bytes.all.current": 7200 * MiB}}
with open("memory_stats_dump.json", "w") as f:
    f.write(json.dumps(stats))  # one object under each device's name
doc, db = report("memory_stats_dump.json", "stats")
rows = db.execute("SELECT device_idx, total_allocated, total_reserved, message, wording"
                  " FROM oom_event").fetchall()
result(rows == [(1, 7000 * MiB, 7200 * MiB, "num_ooms: 2", "memory_stats")],
       "memory_stats: num_ooms 2 on device 1 is one event with its figures; 0 on device 0 none", rows)
result(doc["verdict"]["state"] == "failed", "memory_stats: FAILED", doc["verdict"])

# 4. A job log with an OOM error and, after it, a memory_summary() box
# that counts it: one OOM, the log's.
box = open(os.path.join(REAL, "pytorch__pytorch__issue35901__memory_summary_PARTIAL.txt")).read()
log = ("step 10 loss 2.3\n"
       "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
       "capacity of 15.77 GiB of which 1.50 GiB is free. Of the allocated memory 1.04 GiB is "
       "allocated by PyTorch, and 11.08 GiB is reserved by PyTorch but unallocated.\n" + box)
with open("job.log", "w") as f:
    f.write(log)
doc, db = report("job.log", "job")
rows = db.execute("SELECT wording IS NOT NULL, requested_bytes FROM oom_event").fetchall()
result(len(rows) == 1 and rows[0][1] == 2 << 30,
       "a log's error with a box that counts it: one OOM, the log's (2 GiB asked)", rows)
