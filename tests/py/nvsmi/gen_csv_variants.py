# tests/nvsmi.sh runs this.
import re
# The H100 capture's header (a subset of its fields, in its order) and
# values; two GPUs, three samples a second apart (-l 1).
HEAD = ["timestamp", "name", "uuid", "pci.bus_id", "index", "memory.total [MiB]",
        "memory.reserved [MiB]", "memory.used [MiB]", "memory.free [MiB]",
        "utilization.gpu [%]", "utilization.memory [%]"]
GPUS = [("NVIDIA H100 80GB HBM3", "GPU-6a5d1c2e-0000-4000-8000-000000000001", "00000000:00:09.0", 0),
        ("NVIDIA H100 80GB HBM3", "GPU-6a5d1c2e-0000-4000-8000-000000000002", "00000000:00:0A.0", 1)]
USED = [[0, 19818, 20512], [4, 1542, 81000]]

def rows(units=True, order=HEAD):
    out = []
    for t in range(3):
        for g, (name, uuid, bus, idx) in enumerate(GPUS):
            used = USED[g][t]
            vals = {"timestamp": "2026/07/14 08:12:%02d.%03d" % (53 + t, 353 + t),
                    "name": name, "uuid": uuid, "pci.bus_id": bus, "index": str(idx),
                    "memory.total [MiB]": "81559", "memory.reserved [MiB]": "479",
                    "memory.used [MiB]": str(used), "memory.free [MiB]": str(81559 - 479 - used),
                    "utilization.gpu [%]": "100", "utilization.memory [%]": "11"}
            if units:
                for k in vals:
                    if k.endswith("[MiB]"):
                        vals[k] += " MiB"
                    elif k.endswith("[%]"):
                        vals[k] += " %"
            out.append(", ".join(vals[k] for k in order))
    return out

def write(path, lines, end="\n", last_end=True):
    with open(path, "w", newline="") as f:
        f.write(end.join(lines) + (end if last_end else ""))

write("units.csv", [", ".join(HEAD)] + rows())
write("nounits.csv", [", ".join(HEAD)] + rows(units=False))
sub = ["memory.used [MiB]", "index", "timestamp", "memory.total [MiB]"]
write("subset.csv", [", ".join(sub)] + rows(order=sub))
# [N/A] and [Not Supported] where a figure is unavailable.
na = rows()
na[0] = na[0].replace("0 MiB, 81080 MiB", "[N/A], [N/A]")
na[3] = re.sub(r", 81559 MiB, 479 MiB, 1542 MiB", ", [Not Supported], [Not Supported], 1542 MiB", na[3])
write("na.csv", [", ".join(HEAD)] + na)
# A restarted -l log: the header again mid-file, another order; CRLF.
sub2 = ["index", "timestamp", "memory.used [MiB]", "pci.bus_id"]
write("restarted.csv", [", ".join(HEAD)] + rows()[:2] + [", ".join(sub2)] + rows(order=sub2)[2:],
      end="\r\n")
# Malformed: a value that is not a size, and a last row cut by a killed
# job (no newline).
bad = rows()
bad[1] = bad[1].replace("4 MiB", "four MiB")
bad[5] = bad[5][: len(bad[5]) // 2]
write("malformed.csv", [", ".join(HEAD)] + bad, last_end=False)
# --format=csv,noheader: the fields are unknown.
write("noheader.csv", rows())
# --query-compute-apps, real header (the capture's), two GPUs.
AH = "timestamp, gpu_name, gpu_bus_id, gpu_serial, gpu_uuid, pid, process_name, used_gpu_memory [MiB]"
apps = [AH]
for t, (pid, g, name, used) in enumerate([(11327, 0, "/root/tools/memhog", "2566 MiB"),
                                          (11345, 0, "./gpu_burn", "15690 MiB"),
                                          (11345, 0, "./gpu_burn", "15700 MiB"),
                                          (2201, 1, "python train.py, rank 1", "[N/A]"),
                                          (2201, 1, "python train.py, rank 1", "812 MiB")]):
    n, uuid, bus, idx = GPUS[g]
    apps.append("2026/07/14 08:12:%02d.500, %s, %s, 0000000000000, %s, %d, %s, %s"
                % (53 + t, n, bus, uuid, pid, name, used))
write("apps.csv", apps)
