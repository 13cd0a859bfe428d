# tests/bandwidth.sh runs this.
import json, sys
b = [x for x in json.load(open(sys.argv[1]))["bandwidth_or_capacity"] if x["copy_ops"]][0]
print(json.dumps({"ops": b["copy_ops"], "bytes": b["copy_bytes"], "busy": b["copy_busy_ns"],
                  "rate": b["achieved_copy_bytes_per_s"], "share": b["achieved_copy_share"],
                  "best": [b["best_copy_name"], b["best_copy_bytes"], b["best_copy_ns"],
                           b["best_copy_bytes_per_s"], b["best_copy_share"]]
                          if b["best_copy_name"] else None,
                  "host": [b["host_copy_ops"], b["host_copy_bytes"], b["host_copy_busy_ns"],
                           b["host_copy_bytes_per_s"]]}, sort_keys=True))
