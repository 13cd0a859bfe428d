# tests/capture-kit.sh runs this, as bin/nvidia-smi.
"""A stand-in nvidia-smi: --query-gpu/--query-compute-apps=FIELDS --format=csv."""
import sys, time
# Milliseconds as the real one prints them: two captures in one second
# must not be byte-identical files (vramreport reads identical files once).
T = time.time()
NOW = time.strftime("%Y/%m/%d %H:%M:%S", time.gmtime(T)) + ".%03d" % (int(T * 1000) % 1000)
GPU = {"timestamp": NOW, "index": "0",
       "uuid": "GPU-6e1b2c9b-38d8-2090-2bd1-f567a3eb42a6", "pci.bus_id": "00000000:18:00.0",
       "name": "NVIDIA H100 80GB HBM3", "memory.total": "81559 MiB",
       "memory.used": "80001 MiB", "memory.free": "1001 MiB", "utilization.gpu": "97 %"}
APP = {"timestamp": NOW, "gpu_uuid": GPU["uuid"],
       "gpu_bus_id": GPU["pci.bus_id"], "pid": "4242", "process_name": "python3",
       "used_gpu_memory": "79990 MiB"}
UNITS = {"memory.total": " [MiB]", "memory.used": " [MiB]", "memory.free": " [MiB]",
         "utilization.gpu": " [%]", "used_gpu_memory": " [MiB]"}
args = sys.argv[1:]
if "--format=csv" not in args or len(args) != 2:
    sys.exit("nvidia-smi (fake): unexpected arguments %r" % args)
query = args[0]
table = GPU if query.startswith("--query-gpu=") else APP if query.startswith("--query-compute-apps=") else None
if table is None:
    sys.exit("nvidia-smi (fake): unknown query %s" % query)
fields = query.split("=", 1)[1].split(",")
if any(f not in table for f in fields):
    sys.exit("Field '%s' is not a valid field to query." % [f for f in fields if f not in table][0])
print(", ".join(f + UNITS.get(f, "") for f in fields))
print(", ".join(table[f] for f in fields))
