# tests/gpustat.sh runs this.
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
gpus = {}
for gid, idx, name, total in db.execute("SELECT id, idx, name, memory_total_bytes FROM gpu ORDER BY id"):
    rows = db.execute("SELECT memory_used_bytes, utilization_gpu_pct FROM gpu_sample WHERE gpu_id = ? ORDER BY seq", (gid,)).fetchall()
    procs = {}
    for pid, pname, used in db.execute("SELECT pid, process_name, used_bytes FROM process_sample WHERE gpu_id = ?", (gid,)):
        key = "%s|%s" % (pid, pname or "")
        procs[key] = max(x for x in (procs.get(key), used, -1) if x is not None)
    gpus[str(idx)] = {"name": name, "samples": len(rows), "used": [r[0] for r in rows],
                      "util": [r[1] for r in rows], "total": total, "procs": procs}
stamps = [r[0] for r in db.execute("SELECT ts_ns FROM gpu_sample ORDER BY seq")]
cut = db.execute("SELECT max(truncated) FROM source").fetchone()[0] == 1
print(json.dumps({"gpus": gpus, "stamps": stamps, "cut": cut}, sort_keys=True))
