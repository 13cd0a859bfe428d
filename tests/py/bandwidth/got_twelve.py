# tests/bandwidth.sh runs this.
import json
d = json.load(open("many-report.json"))
print(sorted((b["device"], b["copy_bytes"], b["copy_busy_ns"], b["host_copy_bytes"], b["host_copy_busy_ns"])
             for b in d["bandwidth_or_capacity"]))
