# tests/timeline-order.sh runs this.
import json, sqlite3, sys

db = sqlite3.connect(sys.argv[1])
ev = {i: (d, t) for i, d, t in db.execute("SELECT id, device_id, ts_ns FROM mem_event")}
name = lambda i: None if i is None else ev[i]
out = {
    "allocation": [list(r[:-2]) + [name(r[-2]), name(r[-1])] for r in db.execute(
        "SELECT id, device_id, addr, bytes, alloc_ts_ns, free_ts_ns, op_id, category,"
        " alloc_phase, free_phase, category_rule, frame_id, alloc_event_id, free_event_id"
        " FROM allocation ORDER BY id")],
    "device_source_summary": [list(r[:-1]) + [name(r[-1])] for r in db.execute(
        "SELECT device_id, events, start_ns, end_ns, peak_allocated_bytes,"
        " peak_allocated_ts_ns, peak_allocated_step, peak_reserved_bytes,"
        " live_unknown_bytes, peak_allocated_event_id FROM device_source_summary"
        " ORDER BY device_id, source_id")],
    "step_summary": [list(r) for r in db.execute(
        "SELECT * FROM step_summary ORDER BY device_id, source_id, step")],
    # By the device's index (cuda:N), as the trace names it.
    "counts": {str(d): {"rows": n, "closed": c} for d, n, c in db.execute(
        "SELECT d.idx, count(*), count(free_ts_ns) FROM allocation a"
        " JOIN device d ON d.id = a.device_id GROUP BY d.idx")},
    "peaks": {str(d): p for d, p in db.execute(
        "SELECT d.idx, peak_allocated_bytes FROM device_source_summary s"
        " JOIN device d ON d.id = s.device_id")},
}
json.dump(out, sys.stdout, indent=0)
