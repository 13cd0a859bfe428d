# tests/many-report.sh runs this.
import json, sys

def result(ok, desc, detail=""):
    print(("PASS\t" + desc) if ok else ("FAIL\t" + desc + "\t" + str(detail)[:600]))

d = json.load(open(sys.argv[1]))
rows = d.get("memory_prints", []) + d.get("more_memory_prints", [])
MiB = 1 << 20
by_rank = {r["rank"]: r for r in rows}
result(len(rows) == 4000 and sorted(by_rank) == list(range(4000)),
       "JSON of 4,000 ranks of prints: a row a rank", len(rows))
bad = [r for r in rows
       if r["samples"] != 12 or r["first_step"] != 1 or r["last_step"] != 12
       or r["growth_per_step_bytes"] != (50 * MiB if r["rank"] % 97 == 0 else 0)
       or r["first_allocated_bytes"] != (8000 + (r["rank"] % 7) * 100 + (50 if r["rank"] % 97 == 0 else 0)) * MiB
       or r["last_allocated_bytes"] != (8000 + (r["rank"] % 7) * 100 + (600 if r["rank"] % 97 == 0 else 0)) * MiB]
result(rows and not bad, "JSON of 4,000 ranks of prints: each row's steps, first and last print and growth",
       bad[:2])
