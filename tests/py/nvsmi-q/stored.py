# tests/nvsmi-q.sh runs this.
import json, sqlite3, sys
c = sqlite3.connect(sys.argv[1])
out = {"gpus": {}, "tally": dict(c.execute("SELECT kind, count FROM source_tally"))}
for gid, uuid, bus, name, mig, total, idx in c.execute(
        "SELECT id, uuid, pci_bus_id, name, mig, memory_total_bytes, idx FROM gpu ORDER BY id"):
    samples = []
    for sid, ts, used, tot, free, res, ug, um in c.execute(
            "SELECT id, ts_ns, memory_used_bytes, memory_total_bytes, memory_free_bytes, "
            "memory_reserved_bytes, utilization_gpu_pct, utilization_memory_pct "
            "FROM gpu_sample WHERE gpu_id = ? ORDER BY seq", (gid,)):
        procs = [list(p) for p in c.execute(
            "SELECT pid, process_name, process_type, used_bytes, ts_ns FROM process_sample "
            "WHERE sample_id = ? ORDER BY id", (sid,))]
        samples.append({"ts": ts, "used": used, "total": tot, "free": free, "reserved": res,
                        "util_gpu": ug, "util_memory": um, "processes": procs})
    key = "%s|%s|%s" % (uuid, bus, mig or "")
    out["gpus"][key] = {"name": name, "total": total, "idx": idx, "samples": samples}
out["orphans"] = c.execute("SELECT count(*) FROM process_sample WHERE sample_id IS NULL "
                           "OR gpu_id IS NULL").fetchone()[0]
print(json.dumps(out, sort_keys=True))
