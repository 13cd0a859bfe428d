# tests/many-report.sh runs this.
import json, sys

def result(ok, desc, detail=""):
    print(("PASS\t" + desc) if ok else ("FAIL\t" + desc + "\t" + str(detail)[:600]))

d = json.load(open(sys.argv[1]))
full = [x["id"] for x in d.get("devices", [])]
more = [x["id"] for x in d.get("more_devices", [])]
result(len(full) == 16 and len(more) == 2984,
       "JSON of 3,000 devices: 16 in full, 2,984 in more_devices[]", (len(full), len(more)))
result(set(full) | set(more) == {"cuda:%d" % i for i in range(3000)} and
       len(set(full) | set(more)) == len(full) + len(more),
       "JSON of 3,000 devices: each device once, in devices[] or more_devices[]")
s = d.get("devices_summary") or {}
result(s.get("count") == 3000 and s.get("more") == 2984, "devices_summary: 3,000, 2,984 more", s)
