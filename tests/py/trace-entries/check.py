# tests/trace-entries.sh runs this.
import json, sqlite3, sys
expected = json.load(open("expected.json"))
got = json.load(open("view.json"))
cols = ["dev", "seq", "action", "address", "bytes", "stream", "ts_ns", "device_free_bytes"]
rows = [[r[c] for c in cols] for r in got]
print("PASS\tthe view shows every entry as the file has it (%d)" % len(expected)
      if rows == expected else
      "FAIL\tthe view shows every entry as the file has it\t%r" %
      [(a, b) for a, b in zip(rows, expected) if a != b][:3] + [len(rows), len(expected)])
ids_ordered = all(a["id"] < b["id"] for a, b in zip(got, got[1:]) if a["dev"] == b["dev"])
ids_unique = len({r["id"] for r in got}) == len(got)
print("PASS\tids are unique and follow each device's entries" if ids_ordered and ids_unique
      else "FAIL\tids are unique and follow each device's entries\t%s %s" % (ids_ordered, ids_unique))
db = sqlite3.connect(sys.argv[1])
one = lambda sql: db.execute(sql).fetchone()[0]
stated = sum(1 for r in expected if r[2] in ("alloc", "free_completed") and r[4] is not None
             and r[4] > 0 and r[7] is None)
others, events = one("SELECT count(*) FROM trace_entry_other"), \
    one("SELECT count(*) FROM mem_event WHERE seq IS NOT NULL")
print("PASS\teach entry is one row: %d memory events, %d others" % (events, others)
      if (events, others) == (stated, len(expected) - stated) else
      "FAIL\teach entry is one row\tmemory events %d others %d, want %d %d" %
      (events, others, stated, len(expected) - stated))
# The odd allocs and frees still move the timeline as before: a memory
# event each (without seq) beside their entry.
odd = one("SELECT count(*) FROM mem_event WHERE seq IS NULL AND bytes <> 0")
want = sum(1 for r in expected if r[2] in ("alloc", "free_completed") and r[4] is not None
           and r[4] != 0 and not (r[4] > 0 and r[7] is None))
print("PASS\tthe entries kept apart still make their memory events (%d)" % odd if odd == want
      else "FAIL\tthe entries kept apart still make their memory events\t%d, want %d" % (odd, want))
