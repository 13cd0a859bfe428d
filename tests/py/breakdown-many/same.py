# tests/breakdown-many.sh runs this.
import sqlite3, sys

def result(ok, desc, detail=""):
    print(("PASS\t" + desc) if ok else ("FAIL\t" + desc + "\t" + str(detail)[:600]))

def rows(db, label):
    dev = db.execute("SELECT id FROM device WHERE label = ?", (label,)).fetchone()
    if dev is None:
        return None, None
    peak = db.execute("SELECT category, bytes, count FROM peak_category WHERE device_id = ?"
                      " ORDER BY category", dev).fetchall()
    samples = db.execute("SELECT ts_ns, category, bytes FROM category_sample"
                         " WHERE device_id = ? ORDER BY ts_ns, category", dev).fetchall()
    return peak, samples

one, many = sqlite3.connect(sys.argv[1]), sqlite3.connect(sys.argv[2])
n = int(sys.argv[3])
want_peak, want_samples = rows(one, "cuda:0")
known = [c for c, b, _ in want_peak or [] if b > 0 and c != "unknown"]
result(len(known) >= 5, "one device: the peak is of five known categories or more", want_peak)
result(len(want_samples or []) > 400, "one device: the chart has its samples", len(want_samples or []))
bad = []
for k in range(n):
    peak, samples = rows(many, "cuda:%d" % k)
    if peak != want_peak or samples != want_samples:
        bad.append("cuda:%d: %r" % (k, (peak or [])[:3]))
result(not bad, "150 devices: each device's peak_category and category_sample rows are one device's",
       "; ".join(bad[:5]))
left = many.execute("SELECT name FROM sqlite_master WHERE type = 'index'"
                    " AND tbl_name = 'allocation'").fetchall()
result(left == one.execute("SELECT name FROM sqlite_master WHERE type = 'index'"
                           " AND tbl_name = 'allocation'").fetchall(),
       "150 devices: the pass's index of allocations by device is dropped", left)
